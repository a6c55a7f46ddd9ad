"""Periodic repair, because PostgreSQL is the source of truth and neither NATS nor the code
host promises delivery:

- jobs queued for long get a fresh message (JetStream may have lost an acknowledged one);
- running jobs whose lease expired (their worker died) go back to the queue, or to
  ``failed`` once they have used up their attempts;
- jobs that waited for an index past the bound are requeued so the worker closes them;
- webhook deliveries the code host counts as failed (GitHub does not retry by itself) and
  that we never recorded are redelivered through the REST API;
- reactions on our open comments are read (the code host sends no webhook for them), so a 👍
  or 👎 on a quiet pull request still becomes a verdict.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from services.hostapp import jobs, queries
from services.hostapp.github import GitHubApp, GitHubError
from services.hostapp.models import FAILED, PrFinding, now_ms
from services.hostapp.settings import HostAppSettings
from services.hostapp.threads import Tracker
from services.kit.db import Database
from services.kit.errors import ServiceError
from services.kit.metrics import JOB_AGE
from services.kit.supervision import idle

log = logging.getLogger(__name__)


class Reconciler:
    def __init__(
        self,
        db: Database,
        github: GitHubApp,
        settings: HostAppSettings,
        *,
        wake: Callable[[], None] = lambda: None,
        tracker: Tracker | None = None,
    ) -> None:
        self.db = db
        self.github = github
        self.settings = settings
        self.wake = wake
        self.tracker = tracker
        self._stopping = asyncio.Event()

    async def run(self) -> None:
        # The first pass waits one interval too, though the runtime has connected the database
        # and the bus before any loop starts: repair is judged by age (a long queue wait, an
        # expired lease), so nothing is lost by waiting, and a process that restarts repeatedly
        # does not ask the code host for its delivery list at every start.
        while not self._stopping.is_set():
            try:
                with idle():
                    await asyncio.wait_for(self._stopping.wait(), timeout=self.settings.reconcile_interval_seconds)
                return
            except TimeoutError:
                pass
            try:
                await self.reconcile_jobs()
                await self.redeliver_failed()
                await self.read_reactions()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("reconciler pass failed: %s", exc)

    def stop(self) -> None:
        self._stopping.set()

    async def reconcile_jobs(self) -> dict[str, int]:
        s = self.settings
        now = now_ms()
        counts = {"requeued": 0, "failed": 0}
        async with self.db.session() as session:
            for job in await queries.jobs_to_reconcile(
                session,
                now=now,
                requeue_before=now - int(s.requeue_after_seconds * 1000),
                wait_before=now - int(s.index_wait_seconds * 1000),
            ):
                if job.state == "running" and job.attempts >= s.job_max_deliver:
                    await jobs.finish(session, job.id, FAILED, summary="the worker stopped during every attempt")
                    counts["failed"] += 1
                    continue
                await jobs.requeue(session, job)
                counts["requeued"] += 1
            oldest = await queries.oldest_active_job_ms(session)
        JOB_AGE.labels("hostapp", "pr").set(0 if oldest is None else max(now - oldest, 0) / 1000)
        if counts["requeued"]:
            self.wake()
        if any(counts.values()):
            log.info("reconciled PR jobs: %s", counts)
        return counts

    async def read_reactions(self) -> int:
        """Reactions on open threads active within the lookback; returns the verdicts found."""
        if self.tracker is None or not self.settings.github_configured:
            return 0
        since = now_ms() - int(self.settings.reactions_lookback_seconds * 1000)
        async with self.db.session() as session:
            rows = await queries.open_threads(session, since)
        by_pr: dict[tuple[int, str], list[PrFinding]] = {}
        for row in rows:
            by_pr.setdefault((row.installation_id, row.repo_full_name), []).append(row)
        found = 0
        for (installation_id, full_name), group in by_pr.items():
            try:
                found += await self.tracker.read_reactions(installation_id, full_name, group)
            except GitHubError as exc:  # one repository's failure does not stop the others
                log.warning("reactions of %s not read: %s", full_name, exc)
        return found

    async def redeliver_failed(self) -> int:
        """Ask the code host to redeliver deliveries that failed and never reached us."""
        if not self.settings.github_configured:
            return 0
        try:
            deliveries = await self.github.hook_deliveries()
        except ServiceError:
            return 0
        since = time.time() - self.settings.redeliver_lookback_seconds
        succeeded = {d.guid for d in deliveries if 200 <= d.status_code < 300}
        failed = {d.guid: d for d in deliveries if d.delivered_at >= since and not 200 <= d.status_code < 300}
        candidates = {guid: d for guid, d in failed.items() if guid and guid not in succeeded}
        if not candidates:
            return 0
        async with self.db.session() as session:
            seen = await queries.known_deliveries(session, candidates)
            asked = await queries.requested_redeliveries(session, candidates)
        redelivered = 0
        for guid, d in candidates.items():
            if guid in seen or guid in asked:
                continue
            await self.github.redeliver(d.id)
            async with self.db.session() as session:
                await queries.record_redelivery(session, guid, d.id)
            redelivered += 1
        if redelivered:
            log.info("asked the code host to redeliver %d failed webhook deliveries", redelivered)
        return redelivered
