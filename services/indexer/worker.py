"""The index job consumer: claim the run, build the snapshot with heartbeats, record the
outcome, and only then settle the JetStream message.

Failure handling, per the reliability rules: a permanent failure marks the run failed and
acks; a transient one puts the run back to queued and naks the message with a delay, until
attempts are spent; a crash leaves the message unacked, so JetStream redelivers it after ``ack_wait`` and
the lease in the database lets the next claim take over (the reaper covers lost messages).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from typing import Any

from nats.aio.msg import Msg

from services.contracts.v1 import events_pb2
from services.indexer import queries, runs, sources
from services.indexer.delta import StateCache
from services.indexer.extraction import ExtractorPool
from services.indexer.models import IndexRun, Repository, now_ms
from services.indexer.pipeline import Cancelled, IndexFailure, Limits, PipelineInput, Progress, build_snapshot
from services.indexer.settings import IndexerSettings
from services.kit.bus import INDEX_JOBS, SUBJECT_INDEX_JOB, Bus
from services.kit.db import Database
from services.kit.errors import ServiceError
from services.kit.inbox import DurableConsumer, decode_job, request_context
from services.kit.metrics import JOB_AGE
from services.kit.supervision import beat, idle

log = logging.getLogger(__name__)
DURABLE = "indexer-jobs"


def limits_from(settings: IndexerSettings) -> Limits:
    return Limits(
        max_file_bytes=settings.max_file_bytes,
        max_files=settings.max_files,
        max_repository_bytes=settings.max_repository_bytes,
        clone_timeout=settings.clone_timeout_seconds,
        history_depth=settings.history_depth,
        batch_files=settings.batch_files,
        batch_bytes=settings.batch_bytes,
    )


class IndexWorker:
    def __init__(
        self,
        settings: IndexerSettings,
        db: Database,
        bus: Bus,
        pool: ExtractorPool,
        hostapp: sources.HostApp,
        wake_relay: Any = None,
    ) -> None:
        self.settings = settings
        self.db = db
        self.pool = pool
        self.hostapp = hostapp
        self.wake_relay = wake_relay or (lambda: None)
        self.name = f"{socket.gethostname()}:{os.getpid()}"
        self.states = StateCache(settings.state_cache_repositories)
        self.consumer = DurableConsumer(
            bus,
            INDEX_JOBS,
            DURABLE,
            SUBJECT_INDEX_JOB,
            service="indexer",
            ack_wait=settings.job_ack_wait_seconds,
            max_deliver=settings.max_attempts + 2,
            batch=1,  # one index at a time per process: the pool already uses every core
        )
        self.lease_ms = int(settings.lease_seconds * 1000)

    async def run(self) -> None:
        # The runtime connects the bus before any loop starts; a later outage is the consumer's
        # to ride out (it logs, waits and subscribes again).
        await asyncio.to_thread(self.pool.warm_up)
        await self.consumer.run(self.handle)

    def stop(self) -> None:
        self.consumer.stop()
        self.pool.stop()

    async def handle(self, msg: Msg) -> None:
        decoded = await decode_job(msg, events_pb2.IndexJob)
        if decoded is None:
            return
        env, job = decoded
        with request_context(env.request_id):
            await self.process(msg, job)

    async def process(self, msg: Msg, job: events_pb2.IndexJob) -> str:
        """Run one job to a settled message; returns the outcome (for tests and logs)."""
        async with self.db.session() as session:
            claim = await runs.claim(
                session, job.run_id, self.name, self.lease_ms, max_attempts=self.settings.max_attempts
            )
        if claim.outcome == "busy" and claim.run is not None and claim.run.lease_expires_at:
            # Held by a lease: a live worker (a duplicate message), or one that died moments ago.
            # Look again when the lease runs out instead of leaving the run to the reaper.
            wait_ms = claim.run.lease_expires_at - now_ms()
            await msg.nak(delay=max(wait_ms / 1000 + 1.0, 1.0))
            return claim.outcome
        if claim.outcome != "claimed":
            # Finished, deleted, or given up: nothing left for this message.
            await msg.ack_sync()
            self.wake_relay()
            return claim.outcome
        assert claim.run is not None
        assert claim.repo is not None
        run, repo = claim.run, claim.repo
        log.info("indexing %s (run %s, attempt %d)", repo.id, run.id, run.attempts)
        progress = Progress(phase="starting")
        beat = asyncio.create_task(self._heartbeat(run.id, progress))
        try:
            outcome = await self._index(run, repo, progress)
        except asyncio.CancelledError:
            # Shutting down: stop the thread; the message is redelivered to another worker.
            progress.cancel.set()
            raise
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat
        if outcome == "retry":
            # Transient: the same message comes back after a growing delay.
            await msg.nak(delay=min(5.0 * run.attempts, 60.0))
        else:
            await msg.ack_sync()
        self.wake_relay()
        return outcome

    async def _index(self, run: IndexRun, repo: Repository, progress: Progress) -> str:
        try:
            source = await sources.source_for(repo, self.settings, self.hostapp)
            inp = PipelineInput(
                repository_id=repo.id,
                run_id=run.id,
                source=source.location,
                mirror=sources.mirror_path(self.settings, repo.id),
                dsn=self.settings.sync_dsn(),
                token=source.token,
                ref=run.ref,
                incremental=run.incremental,
                history_cache=sources.history_cache(self.settings, repo.id),
            )
            result = await asyncio.to_thread(
                build_snapshot, inp, limits_from(self.settings), self.pool, progress, self.states
            )
        except Cancelled:
            return await self._interrupted(run.id, repo.id, progress)
        except ServiceError as exc:
            return await self._failed(run.id, repo.id, exc.code, exc.message, permanent=not exc.transient)
        except IndexFailure as exc:
            if progress.cancel.is_set():
                return await self._interrupted(run.id, repo.id, progress)
            return await self._failed(run.id, repo.id, exc.code, exc.message, permanent=exc.permanent)
        except Exception as exc:
            if progress.cancel.is_set():
                return await self._interrupted(run.id, repo.id, progress)
            log.exception("index of %s failed unexpectedly", repo.id)
            return await self._failed(
                run.id, repo.id, "internal_error", f"{type(exc).__name__}: {exc}", permanent=False
            )
        for failure in result.failures[:5]:
            log.warning("extraction failure in %s: %s", repo.id, failure)
        async with self.db.session() as session:
            owned = await queries.owned_run(session, run.id, self.name)
            current = await queries.repository_by_id(session, repo.id, lock=True) if owned else None
            if owned is None or current is None:
                await queries.delete_snapshot(session, result.snapshot_id)
            else:
                await runs.complete(
                    session,
                    owned,
                    current,
                    snapshot_id=result.snapshot_id,
                    commit=result.commit,
                    default_branch=result.default_branch,
                    files_total=result.files_total,
                    files_parsed=result.files_parsed,
                    files_skipped=result.files_skipped,
                    timings=result.timings,
                    notes=result.notes,
                )
                pruned = await queries.delete_other_snapshots(session, repo.id, result.snapshot_id)
        if owned is None or current is None:
            return await self._cancelled(run.id, repo.id)
        self.wake_relay()
        async with self.db.session() as session:
            # By delta, only the facts of the rows the switch pruned can have lost their last
            # reference; otherwise (a full write, after failed runs) look at all of them.
            candidates = pruned if "write" in result.by_delta else None
            await queries.delete_unreferenced_facts(session, repo.id, candidates)
        log.info("indexed %s at %s: %s", repo.id, result.commit[:12], result.timings)
        return "ready"

    async def _failed(self, run_id: str, repo_id: str, code: str, message: str, *, permanent: bool) -> str:
        outcome = "gone"
        async with self.db.session() as session:
            run = await queries.owned_run(session, run_id, self.name)
            repo = await queries.repository_by_id(session, repo_id) if run else None
            if run is not None and repo is not None:
                if permanent or run.attempts >= self.settings.max_attempts:
                    await runs.fail(session, run, repo, code, message)
                    outcome = "failed"
                else:
                    await runs.release(session, run, message, republish=False)
                    outcome = "retry"
        if outcome == "gone":
            # Deleted (or taken over) while we ran: the failure was a consequence, not a cause.
            return await self._cancelled(run_id, repo_id)
        log.warning("run %s %s: %s: %s", run_id, outcome, code, message)
        self.wake_relay()
        return outcome

    async def _interrupted(self, run_id: str, repo_id: str, progress: Progress) -> str:
        if progress.timed_out:
            budget = self.settings.run_timeout_seconds
            return await self._failed(
                run_id, repo_id, "timeout", f"the index took longer than {budget:g} s", permanent=True
            )
        return await self._cancelled(run_id, repo_id)

    async def _cancelled(self, run_id: str, repo_id: str) -> str:
        async with self.db.session() as session:
            repo = await queries.repository_by_id(session, repo_id)
        if repo is None:
            # Deleted while we indexed: the mirror may have been re-created by our fetch.
            await asyncio.to_thread(sources.remove_mirror, self.settings, repo_id)
        log.info("run %s cancelled", run_id)
        return "cancelled"

    async def _heartbeat(self, run_id: str, progress: Progress) -> None:
        """Keep the lease alive (the consumer keeps the message alive), publish progress, notice cancellation, and
        stop a run that exceeds its time budget (a pathological repository or file)."""
        deadline = asyncio.get_running_loop().time() + self.settings.run_timeout_seconds
        while True:
            # Progress is what a waiting client shows (files done of total): published every
            # second, not only as often as the lease needs renewing.
            await asyncio.sleep(min(self.settings.heartbeat_seconds, self.settings.progress_seconds))
            beat()
            if asyncio.get_running_loop().time() > deadline:
                progress.timed_out = True
                progress.cancel.set()
                return
            try:
                async with self.db.session() as session:
                    ours = await queries.renew_lease(
                        session,
                        run_id,
                        self.name,
                        self.lease_ms,
                        {
                            "files_total": progress.total,
                            "files_done": progress.done,
                            "files_parsed": progress.parsed,
                            "files_skipped": progress.skipped,
                            "phase": progress.phase,
                        },
                    )
            except Exception as exc:
                log.warning("lease renewal of %s failed: %s", run_id, exc)
                continue
            if not ours:
                progress.cancel.set()
                return


class Reaper:
    """Moves runs with expired leases back to the queue or to failed; every replica runs one."""

    def __init__(self, settings: IndexerSettings, db: Database, wake_relay: Any = None) -> None:
        self.settings = settings
        self.db = db
        self.wake_relay = wake_relay or (lambda: None)
        self._stopping = False

    async def run(self) -> None:
        while not self._stopping:
            try:
                await self.reap_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("reaper failed: %s", exc)
            beat()
            with idle():
                await asyncio.sleep(self.settings.reaper_interval_seconds)

    async def reap_once(self) -> int:
        async with self.db.session() as session:
            touched = await runs.reap(
                session,
                max_attempts=self.settings.max_attempts,
                requeue_after_ms=int(self.settings.requeue_after_seconds * 1000),
            )
            oldest = await queries.oldest_active_run_ms(session)
        JOB_AGE.labels("indexer", "index").set(0 if oldest is None else max(now_ms() - oldest, 0) / 1000)
        if touched:
            self.wake_relay()
        return touched

    def stop(self) -> None:
        self._stopping = True
