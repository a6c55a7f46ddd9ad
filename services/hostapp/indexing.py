"""Is the repository indexed? A PR job runs no analysis until it is: it waits, and the
indexer's ``repository.indexed`` / ``index_failed`` events put waiting jobs back in the queue.

A job deciding to wait and the event that ends the wait take the same per-repository
advisory lock, so one of them always sees the other (no job waits for an event that has
already passed)."""

from __future__ import annotations

import logging
from enum import Enum

from sqlalchemy.ext.asyncio import AsyncSession

from services.contracts.v1 import events_pb2, indexer_pb2, indexer_pb2_grpc
from services.hostapp import jobs, queries
from services.hostapp.models import PrJob, now_ms
from services.kit.db import Database
from services.kit.grpc_client import RemoteError, call

log = logging.getLogger(__name__)

READY, FAILED = "ready", "failed"


class IndexState(Enum):
    READY = "ready"  # a successful index exists: analyse
    NOT_READY = "not_ready"  # never indexed yet: wait for the event
    FAILED = "failed"  # indexing failed and nothing was ever indexed: skip
    UNKNOWN = "unknown"  # the indexer cannot say: let the analyzer decide


class IndexGate:
    def __init__(self, db: Database, indexer: indexer_pb2_grpc.IndexerServiceAsyncStub | None, timeout: float) -> None:
        self.db = db
        self.indexer = indexer
        self.timeout = timeout

    async def state(self, full_name: str) -> IndexState:
        key = queries.repo_key(full_name)
        async with self.db.session() as session:
            known = await queries.repo_index(session, key)
        if known is not None and known.state == READY:
            return IndexState.READY
        return await self._ask_indexer(full_name)

    async def _ask_indexer(self, full_name: str) -> IndexState:
        if self.indexer is None:
            return IndexState.UNKNOWN
        try:
            status = await call(
                self.indexer.GetIndexStatus, indexer_pb2.GetRepositoryRequest(repo=full_name), timeout=self.timeout
            )
        except RemoteError as exc:
            if exc.code == "repo_not_found":
                return IndexState.NOT_READY
            if exc.transient:
                raise  # the job is retried
            log.info("indexer cannot tell the index state of %s (%s): analysing anyway", full_name, exc.code)
            return IndexState.UNKNOWN
        if status.head_sha or status.state == READY:
            return IndexState.READY
        if status.state == FAILED:
            return IndexState.FAILED
        return IndexState.NOT_READY

    async def wait(self, job: PrJob) -> bool:
        """Park the job until the repository is indexed; False when it was indexed meanwhile."""
        async with self.db.session() as session:
            await queries.lock_repo(session, job.repo_key)
            known = await queries.repo_index(session, job.repo_key)
            if known is not None and known.state == READY:
                return False
            await queries.update_job(
                session, job.id, state="waiting_index", lease_until=0, waiting_since=job.waiting_since or now_ms()
            )
        return True


async def _release(session: AsyncSession, key: str) -> int:
    waiting = await queries.jobs_waiting_for(session, key)
    for job in waiting:
        await jobs.requeue(session, job)
    return len(waiting)


async def on_repository_indexed(session: AsyncSession, env: events_pb2.EventEnvelope) -> None:
    event = events_pb2.RepositoryIndexed.FromString(env.payload)
    if not event.full_name:
        return  # not a hosted repository: no PR job can wait for it
    key = queries.repo_key(event.full_name)
    await queries.lock_repo(session, key)
    await queries.upsert_repo_index(session, key, READY, event.repository_id, event.head_sha, "")
    released = await _release(session, key)
    if released:
        log.info("repository.indexed %s: %d waiting PR job(s) requeued", event.full_name, released)


async def on_index_failed(session: AsyncSession, env: events_pb2.EventEnvelope) -> None:
    event = events_pb2.IndexFailed.FromString(env.payload)
    if not event.full_name:
        return
    key = queries.repo_key(event.full_name)
    await queries.lock_repo(session, key)
    known = await queries.repo_index(session, key)
    if known is None or known.state != READY:  # a failed re-index leaves the last good index usable
        await queries.upsert_repo_index(session, key, FAILED, event.repository_id, "", event.error)
    # Waiting jobs go back to the queue; the worker sees the failure and closes them as skipped.
    await _release(session, key)
