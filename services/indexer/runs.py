"""Index runs: starting one (at most one active per repository), their states, and every
transition a worker or the reaper makes. Each transition that others must hear about stages
its event (and each new attempt its job) in the outbox of the same transaction.

States: queued -> indexing -> ready | failed; indexing -> queued when an attempt is given
back (transient failure, expired lease) while attempts remain.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from services.contracts.v1 import events_pb2, indexer_pb2
from services.indexer import access, queries
from services.indexer.changes import repository_changed
from services.indexer.git import GitError, validate_rev
from services.indexer.models import IndexRun, Repository, new_id, now_ms, outbox
from services.kit.bus import SUBJECT_INDEX_FAILED, SUBJECT_INDEX_JOB, SUBJECT_REPOSITORY_INDEXED
from services.kit.db import Database
from services.kit.errors import ServiceError
from services.kit.outbox import add_event

log = logging.getLogger(__name__)


def status_of(repo: Repository, run: IndexRun | None) -> indexer_pb2.IndexStatus:
    status = indexer_pb2.IndexStatus(repository_id=repo.id, head_sha=repo.head_sha)
    if run is None:
        return status
    status.state = run.state
    status.run_id = run.id
    status.run_state = run.state
    status.files_done = run.files_done
    status.files_total = run.files_total
    status.files_parsed = run.files_parsed
    status.files_skipped = run.files_skipped
    status.attempts = run.attempts
    status.error = run.error
    status.error_code = run.error_code
    status.phase = run.phase if run.state == "indexing" else ""
    status.queued_at = run.queued_at
    status.started_at = run.started_at or 0
    status.finished_at = run.finished_at or 0
    status.incremental = run.incremental
    status.target_sha = run.target_sha
    status.notes.extend(run.notes or [])
    for phase, seconds in (run.timings or {}).items():
        if isinstance(seconds, int | float):
            status.timings[phase] = float(seconds)
    return status


async def current_status(session: AsyncSession, repo: Repository) -> indexer_pb2.IndexStatus:
    run = await queries.run_by_id(session, repo.last_run_id) if repo.last_run_id else None
    return status_of(repo, run)


async def stage_job(session: AsyncSession, run: IndexRun) -> None:
    job = events_pb2.IndexJob(
        run_id=run.id, repository_id=run.repository_id, incremental=run.incremental, attempt=run.attempts
    )
    await add_event(session, outbox, SUBJECT_INDEX_JOB, "index.job", job)


async def start(session: AsyncSession, repo: Repository, *, incremental: bool, ref: str = "") -> IndexRun:
    """Queue a run and its job; ``index_in_progress`` when one is queued or running.

    The caller holds the repository row lock, so two triggers serialize here; the partial
    unique index on active runs is the backstop.
    """
    if repo.status != "active":
        raise ServiceError("conflict", "the repository was removed from its installation", {"repo": repo.id})
    active = await queries.active_run(session, repo.id)
    if active is not None:
        raise ServiceError("index_in_progress", "an index of this repository is already running", _busy(active))
    run = IndexRun(
        id=new_id(),
        repository_id=repo.id,
        state="queued",
        incremental=incremental,
        ref=ref,
        attempts=0,
        phase="",
        timings={},
    )
    try:
        async with session.begin_nested():
            session.add(run)
    except IntegrityError:
        raise ServiceError("index_in_progress", "an index of this repository is already running") from None
    repo.last_run_id = run.id
    await stage_job(session, run)
    await repository_changed(session, repo.id, repo.owner, "index_queued")
    return run


def _busy(run: IndexRun) -> dict[str, object]:
    return {"run_id": run.id, "state": run.state, "files_done": run.files_done, "files_total": run.files_total}


@dataclass
class Claim:
    outcome: str  # claimed | gone | busy | exhausted
    run: IndexRun | None = None
    repo: Repository | None = None


async def claim(session: AsyncSession, run_id: str, worker: str, lease_ms: int, max_attempts: int) -> Claim:
    run = await queries.claim_run(session, run_id, worker, lease_ms)
    if run is None:
        existing = await queries.run_by_id(session, run_id)
        if existing is None or existing.state in ("ready", "failed"):
            return Claim("gone")
        return Claim("busy", existing)
    repo = await queries.repository_by_id(session, run.repository_id)
    if repo is None:
        return Claim("gone")
    if run.attempts > max_attempts:
        await fail(session, run, repo, "attempts_exhausted", f"gave up after {max_attempts} attempts")
        return Claim("exhausted", run, repo)
    return Claim("claimed", run, repo)


async def fail(session: AsyncSession, run: IndexRun, repo: Repository, code: str, message: str) -> None:
    now = now_ms()
    run.state = "failed"
    run.error = message[:2000]
    run.error_code = code[:50]
    run.finished_at = now
    run.updated_at = now
    run.lease_expires_at = None
    event = events_pb2.IndexFailed(
        repository_id=repo.id, run_id=run.id, error=run.error, full_name=repo.full_name or ""
    )
    await add_event(session, outbox, SUBJECT_INDEX_FAILED, "repository.index_failed", event)


async def release(session: AsyncSession, run: IndexRun, message: str, *, republish: bool) -> None:
    """Give an attempt back: queued again. ``republish`` stages a new job, for when the old
    message is gone (the reaper); a worker instead naks its message with a delay."""
    run.state = "queued"
    run.worker = ""
    run.lease_expires_at = None
    run.error = message[:2000]
    run.updated_at = now_ms()
    if republish:
        await stage_job(session, run)


async def complete(
    session: AsyncSession,
    run: IndexRun,
    repo: Repository,
    *,
    snapshot_id: str,
    commit: str,
    default_branch: str,
    files_total: int,
    files_parsed: int,
    files_skipped: int,
    timings: dict[str, float],
    notes: Sequence[str] = (),
) -> None:
    now = now_ms()
    run.state = "ready"
    run.target_sha = commit
    run.files_total = files_total
    run.files_done = files_total
    run.files_parsed = files_parsed
    run.files_skipped = files_skipped
    run.timings = timings
    run.notes = list(notes)
    run.finished_at = now
    run.updated_at = now
    run.lease_expires_at = None
    run.error = ""
    repo.head_sha = commit
    repo.snapshot_id = snapshot_id
    if default_branch:
        repo.default_branch = default_branch
    event = events_pb2.RepositoryIndexed(
        repository_id=repo.id, head_sha=commit, run_id=run.id, full_name=repo.full_name or "", owner=repo.owner
    )
    await add_event(session, outbox, SUBJECT_REPOSITORY_INDEXED, "repository.indexed", event)


async def reap(session: AsyncSession, *, max_attempts: int, requeue_after_ms: int) -> int:
    """Runs whose worker vanished go back to the queue, or fail once attempts are spent;
    queued runs nobody picked up get their job published again. Returns runs touched."""
    now = now_ms()
    touched = 0
    for run in await queries.expired_runs(session, now):
        repo = await queries.repository_by_id(session, run.repository_id)
        if repo is None:
            continue
        if run.attempts >= max_attempts:
            await fail(session, run, repo, "lease_expired", f"the indexer stopped responding ({run.attempts} attempts)")
            log.warning("run %s failed: lease expired after %d attempts", run.id, run.attempts)
        else:
            await release(session, run, "the indexer stopped responding; retrying", republish=True)
            log.warning("run %s requeued: lease expired (attempt %d)", run.id, run.attempts)
        touched += 1
    for run in await queries.stale_queued_runs(session, now - requeue_after_ms):
        run.updated_at = now
        await stage_job(session, run)
        log.warning("run %s re-published: still queued", run.id)
        touched += 1
    return touched


async def trigger(db: Database, ref: str, *, incremental: bool, ref_name: str = "") -> indexer_pb2.IndexStatus:
    """``index_repo``: queue a run of a repository the caller may change."""
    if ref_name:
        try:
            validate_rev(ref_name)
        except GitError as exc:
            raise ServiceError("validation_failed", exc.message, {"field": "ref"}) from None
    async with db.session() as session:
        repo = await access.load(session, ref, min_role="member", lock=True)
        run = await start(session, repo, incremental=incremental, ref=ref_name)
        return status_of(repo, run)


async def status(db: Database, ref: str) -> indexer_pb2.IndexStatus:
    async with db.session() as session:
        # Internal callers too: hostapp gates pull-request analysis on it.
        repo = await access.load(session, ref, internal_ok=True)
        return await current_status(session, repo)
