"""The AnalyzePrJob worker: a durable pull consumer on the PR_JOBS work queue.

Per job: claim the row (a lease renewed with the JetStream heartbeat), re-read the pull
request (closed: drop; head moved: supersede), create the check run, wait while the
repository is not indexed, fetch the changed files, read reactions on our open comments and
deliver waiting verdicts (so this analysis already honours them), ask the analyzer, settle the
pull request's findings (threads.py: fixed ones resolved), post a review with comments on
changed lines for fingerprints not commented before, complete the check run with annotations
in batches of 50. Ack only after the outcome is
committed; transient failures ``nak`` with a delay, permanent ones mark the job failed
and ``term``. A job killed mid-way is redelivered and resumes from its row (the check run
and review it already made are reused, not repeated).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import grpc
from nats.aio.msg import Msg
from sqlalchemy.exc import DBAPIError

from services.contracts.v1 import analyzer_pb2, analyzer_pb2_grpc, events_pb2
from services.hostapp import jobs, queries, repo_config, review
from services.hostapp.feedback import FeedbackSender
from services.hostapp.github import GitHubApp, GitHubError, PullInfo
from services.hostapp.indexing import IndexGate, IndexState
from services.hostapp.models import COMPLETED, DISMISSED, DROPPED, FAILED, FIXED, SKIPPED, SUPERSEDED, PrJob, now_ms
from services.hostapp.settings import HostAppSettings
from services.hostapp.threads import Tracker
from services.kit.bus import PR_JOBS, SUBJECT_PR_JOB, Bus
from services.kit.db import Database
from services.kit.errors import ServiceError
from services.kit.grpc_client import RemoteError, call
from services.kit.inbox import DurableConsumer, decode_job, request_context

log = logging.getLogger(__name__)

MAX_FILES = 300
# The analyzer cannot analyse this repository: the check run says so, neutrally.
ANALYSIS_UNAVAILABLE = {
    "not_implemented": "The analyzer does not support pull-request analysis yet.",
    "not_configured": "The analyzer is not configured for pull-request analysis.",
    "repo_not_found": "The repository is not registered with the code-review service.",
    "repo_not_indexed": "The repository has not been indexed yet, so there are no conventions to check against.",
    "index_failed": "The last index of the repository failed, so there are no conventions to check against.",
}


class Transient(Exception):
    """Worth another attempt later (the code host or a peer service is unavailable)."""


def _is_transient(exc: Exception) -> bool:
    if isinstance(exc, GitHubError):
        return exc.transient
    if isinstance(exc, ServiceError):
        return exc.transient
    return isinstance(exc, (Transient, DBAPIError))


class PrWorker:
    def __init__(
        self,
        db: Database,
        bus: Bus,
        github: GitHubApp,
        analyzer: analyzer_pb2_grpc.AnalyzerServiceAsyncStub,
        gate: IndexGate,
        settings: HostAppSettings,
        *,
        wake: Callable[[], None] = lambda: None,
        durable: str = "hostapp-pr-jobs",
        tracker: Tracker | None = None,
        feedback: FeedbackSender | None = None,
    ) -> None:
        self.db = db
        self.github = github
        self.feedback = feedback or FeedbackSender(db, github, analyzer, settings)
        self.tracker = tracker or Tracker(db, github, wake=self.feedback.wake)
        self.analyzer = analyzer
        self.gate = gate
        self.settings = settings
        self.wake = wake
        self.lease_ms = int(settings.job_ack_wait_seconds * 1000)
        self.consumer = DurableConsumer(
            bus,
            PR_JOBS,
            durable,
            SUBJECT_PR_JOB,
            service="hostapp",
            ack_wait=settings.job_ack_wait_seconds,
            max_deliver=settings.job_max_deliver,
            # Only as many messages as free slots: the others stay available to other replicas.
            batch=settings.job_concurrency,
            concurrency=settings.job_concurrency,
        )

    async def run(self) -> None:
        await self.consumer.run(self.handle)

    def stop(self) -> None:
        self.consumer.stop()

    # --- one message ----------------------------------------------------------------------

    async def handle(self, msg: Msg) -> str:
        decoded = await decode_job(msg, events_pb2.AnalyzePrJob)
        if decoded is None:
            return "malformed"
        env, message = decoded
        with request_context(env.request_id):
            try:
                return await self._handle(msg, message.job_id)
            except Exception as exc:  # the database itself failed: the message must stay, the loop too
                log.warning("pr job %s not handled, will retry: %s", message.job_id, exc)
                with contextlib.suppress(Exception):
                    await msg.nak(delay=self.settings.job_retry_delay_seconds)
                return "retry"

    async def _handle(self, msg: Msg, job_id: str) -> str:
        claimed, wait_ms = await self._claim(job_id)
        if claimed is None:
            if wait_ms:  # another worker holds a live lease: look again when it runs out
                await msg.nak(delay=max(wait_ms / 1000, 1.0))
                return "busy"
            await msg.ack_sync()  # finished, waiting for an index, or unknown: nothing to do
            return "stale"
        # The consumer heartbeats the message; the lease in the database is ours to renew.
        keepalive = [asyncio.create_task(self._renew_lease(job_id))]
        try:
            outcome = await self.process(claimed)
        except Exception as exc:
            if not isinstance(exc, (Transient, GitHubError, ServiceError, DBAPIError)):
                log.exception("pr job %s crashed", job_id)  # a bug: retrying the same input will not help
            return await self._failed(msg, claimed, exc, _is_transient(exc))
        finally:
            for task in keepalive:
                task.cancel()
            await asyncio.gather(*keepalive, return_exceptions=True)
        await msg.ack_sync()
        self.wake()
        log.info("pr job %s (%s#%d) %s", job_id, claimed.repo_full_name, claimed.pr_number, outcome)
        return outcome

    async def _claim(self, job_id: str) -> tuple[PrJob | None, int]:
        async with self.db.session() as session:
            job = await queries.job(session, job_id, lock=True)
            if job is None or job.state not in ("queued", "running"):
                return None, 0
            now = now_ms()
            if job.state == "running" and job.lease_until > now:
                return None, job.lease_until - now
            job.state = "running"
            job.attempts += 1
            job.lease_until = now + self.lease_ms
            job.updated_at = now
        return job, 0

    async def _renew_lease(self, job_id: str) -> None:
        while True:
            await asyncio.sleep(self.settings.job_ack_wait_seconds / 3)
            try:
                async with self.db.session() as session:
                    await queries.renew_lease(session, job_id, now_ms() + self.lease_ms)
            except Exception as exc:  # a missed renewal only risks a second worker resuming the job
                log.warning("lease renewal of %s failed: %s", job_id, exc)

    async def _failed(self, msg: Msg, job: PrJob, exc: Exception, transient: bool) -> str:
        delivered = msg.metadata.num_delivered if msg.metadata else 1
        if transient and delivered < self.settings.job_max_deliver:
            log.warning("pr job %s failed (attempt %d), will retry: %s", job.id, delivered, exc)
            async with self.db.session() as session:
                await queries.update_job(session, job.id, state="queued", lease_until=0, summary=str(exc)[:4000])
            await msg.nak(delay=self.settings.job_retry_delay_seconds)
            return "retry"
        log.error("pr job %s failed permanently: %s", job.id, exc)
        text = f"The review could not be completed: {exc}"
        with contextlib.suppress(Exception):  # best effort: the code host may be what failed
            await self._close_check_run(job, review.SKIPPED_CONCLUSION, review.skipped("the review failed", text))
        async with self.db.session() as session:
            await jobs.finish(session, job.id, FAILED, conclusion="neutral", summary=text)
        await msg.term()
        return "failed"

    # --- the job itself -------------------------------------------------------------------

    async def process(self, job: PrJob) -> str:
        pr = await self._read_pull(job)
        if pr is None or pr.state != "open":
            reason = "the pull request was closed" if pr else "the pull request no longer exists"
            await self._close_check_run(job, "skipped", review.note("Skipped", f"Not reviewed: {reason}."))
            await self._finish(job, DROPPED, summary=reason)
            return DROPPED
        if pr.head_sha != job.head_sha:
            return await self._supersede(job, pr)
        await self._open_check_run(job)
        state = await self.gate.state(job.repo_full_name)
        if state == IndexState.NOT_READY:
            return await self._wait_for_index(job)
        if state == IndexState.FAILED:
            text = "Indexing this repository failed, so it was not reviewed."
            return await self._skip(job, "repository index failed", text)
        files = await self.github.list_files(job.installation_id, job.repo_full_name, job.pr_number, MAX_FILES + 1)
        if len(files) > MAX_FILES:
            text = f"This pull request changes more than {MAX_FILES} files, over what one review covers."
            return await self._skip(job, f"over {MAX_FILES} changed files", text)
        rows = await self.tracker.rows(job)
        await self.tracker.read_reactions(job.installation_id, job.repo_full_name, rows)
        try:  # verdicts waiting (a 👎 just read) reach the analyzer before it analyses this head
            await self.feedback.flush()
        except Exception as exc:  # the sender retries; the review goes on without them
            log.warning("feedback not delivered before pr job %s: %s", job.id, exc)
        config = repo_config.parse(
            await self.github.file_text(job.installation_id, job.repo_full_name, repo_config.PATH, job.head_sha)
        )
        result = await self._analyze(job, pr, files)
        if isinstance(result, str):
            return result
        introduced, preexisting = review.baseline(result)
        async with self.db.session() as session:
            ignored = await queries.ignored_rules(session, job.repo_full_name)
        dismissed = {r.fingerprint for r in rows if r.state == DISMISSED}
        parts = review.split(introduced, preexisting, ignored, dismissed, already_count=result.preexisting_count)
        present = {review.key(f): f for group in (parts.new, parts.already, parts.ignored, parts.quiet) for f in group}
        unlisted = frozenset(f.rule for f in (*result.findings, *result.preexisting) if f.more)
        fixed_now = await self.tracker.settle(job, rows, present, {s.path for s in result.skipped}, unlisted)
        max_comments = min(self.settings.max_review_comments, config.max_comments)
        known = {r.fingerprint for r in rows}
        least = self.settings.comment_min_severity
        plan = review.plan(files, parts.new, max_comments, known=known, comments=config.comments, min_severity=least)
        review_id = await self._post_review(job, plan, len(parts.new))
        if review_id and plan.commented:
            await self.tracker.record_comments(job, review_id, plan.commented)
        conclusion = review.conclusion(parts.new, self.settings.fail_on, least)
        fixed = sum(1 for r in rows if r.state == FIXED)
        output = review.summary(
            result, parts, plan, len(files), fixed=fixed, fixed_now=[r.rule for r in fixed_now], min_severity=least
        )
        await self._complete(job, conclusion, output, review.annotations_for(parts.new, least))
        await self._finish(
            job,
            COMPLETED,
            conclusion=conclusion,
            summary=f"{len(parts.new)} new finding(s), {parts.already_count} already there, "
            f"{len(plan.comments)} comment(s), {len(fixed_now)} fixed",
            findings=len(parts.new),
            comments=len(plan.comments),
            review_id=review_id,
        )
        return COMPLETED

    async def _skip(self, job: PrJob, reason: str, text: str) -> str:
        """Not reviewed: the check run says why, and is never ``success``."""
        await self._close_check_run(job, review.SKIPPED_CONCLUSION, review.skipped(reason, text))
        await self._finish(job, SKIPPED, conclusion=review.SKIPPED_CONCLUSION, summary=text)
        return SKIPPED

    async def _complete(
        self, job: PrJob, conclusion: str, output: dict[str, Any], annotations: list[dict[str, Any]]
    ) -> None:
        """Annotations in batches of 50 (the code host appends each request's to the run's),
        the last one with the conclusion; a resumed job posts only what is left."""
        batches = review.batches(annotations[job.annotations :])
        for batch in batches[:-1]:
            await self._update_check_run(job, "in_progress", {**output, "annotations": batch})
            job.annotations += len(batch)
            async with self.db.session() as session:
                await queries.update_job(session, job.id, annotations=job.annotations)
        last = {**output, "annotations": batches[-1]} if batches else output
        await self._close_check_run(job, conclusion, last)
        if batches:
            job.annotations += len(batches[-1])

    async def _read_pull(self, job: PrJob) -> PullInfo | None:
        try:
            return await self.github.get_pull(job.installation_id, job.repo_full_name, job.pr_number)
        except GitHubError as exc:
            if exc.status == 404:
                return None
            if exc.status == 401:  # a cached token the code host no longer accepts
                self.github.forget_installation(job.installation_id)
                raise Transient(str(exc)) from None
            raise

    async def _supersede(self, job: PrJob, pr: PullInfo) -> str:
        """A newer head supersedes this job; make sure that head has a job of its own (its
        webhook may never arrive: the code host does not retry failed deliveries)."""
        text = f"Superseded by a newer commit ({pr.head_sha[:12]})."
        await self._close_check_run(job, "skipped", review.note("Superseded", text))
        async with self.db.session() as session:
            await jobs.enqueue(session, job.installation_id, job.repo_full_name, job.pr_number, pr.head_sha, "")
            await jobs.finish(session, job.id, SUPERSEDED, summary=text, superseded_by=pr.head_sha)
        return SUPERSEDED

    async def _wait_for_index(self, job: PrJob) -> str:
        waited = now_ms() - job.waiting_since if job.waiting_since else 0
        if waited > self.settings.index_wait_seconds * 1000:
            text = "The repository was not indexed in time, so this pull request was not reviewed."
            return await self._skip(job, "repository not indexed", text)
        note = review.note("Waiting for the repository index", "The review starts once the repository is indexed.")
        await self._update_check_run(job, "queued", note)
        if await self.gate.wait(job):
            return "waiting_index"
        # Indexed while we looked: straight back to the queue.
        async with self.db.session() as session:
            await jobs.requeue(session, job)
        return "requeued"

    async def _analyze(self, job: PrJob, pr: PullInfo, files: list) -> analyzer_pb2.AnalysisResult | str:
        request = analyzer_pb2.AnalyzePullRequestRequest(
            repo=job.repo_full_name,
            base=pr.base_sha,
            head=job.head_sha,
            pr_number=job.pr_number,
            format="json",
            files=[analyzer_pb2.FilePatch(path=f.path, status=f.status, patch=f.patch) for f in files],
        )
        try:
            return await call(self.analyzer.AnalyzePullRequest, request, timeout=120)
        except RemoteError as exc:
            # UNIMPLEMENTED without our error detail still means "not built yet", not a crash.
            code = "not_implemented" if exc.status == grpc.StatusCode.UNIMPLEMENTED else exc.code
            explanation = ANALYSIS_UNAVAILABLE.get(code)
            if explanation is None:
                raise
            text = f"{explanation} No analysis ran ({code})."
            return await self._skip(job, "review not available", text)

    async def _post_review(self, job: PrJob, plan: review.ReviewPlan, findings: int) -> int | None:
        if job.review_id or not plan.comments:
            return job.review_id
        marker = review.review_marker(job.id)
        gh, name, number = self.github, job.repo_full_name, job.pr_number
        if job.attempts > 1:  # an earlier attempt may have posted it and died before recording it
            existing = await gh.find_review(job.installation_id, name, number, marker)
            if existing:
                return existing
        body = (
            f"Code review: {findings} new convention finding(s); {len(plan.comments)} on the changed lines are "
            f"commented below.\n\n{marker}"
        )
        review_id = await gh.create_review(job.installation_id, name, number, job.head_sha, body, plan.comments)
        async with self.db.session() as session:
            await queries.update_job(session, job.id, review_id=review_id)
        job.review_id = review_id
        return review_id

    # --- check runs -----------------------------------------------------------------------

    async def _open_check_run(self, job: PrJob) -> None:
        output = review.note("Reviewing", "Checking the changes against this repository's conventions.")
        if not job.check_run_id and job.attempts > 1:  # created by an attempt that died before recording it
            job.check_run_id = await self.github.find_check_run(
                job.installation_id, job.repo_full_name, job.head_sha, job.id
            )
        if job.check_run_id:
            await self._update_check_run(job, "in_progress", output)
            return
        check_run_id = await self.github.create_check_run(
            job.installation_id, job.repo_full_name, job.head_sha, job.id, "in_progress", output
        )
        async with self.db.session() as session:
            await queries.update_job(session, job.id, check_run_id=check_run_id)
        job.check_run_id = check_run_id

    async def _update_check_run(self, job: PrJob, status: str, output: dict[str, Any]) -> None:
        if job.check_run_id:
            await self.github.update_check_run(
                job.installation_id, job.repo_full_name, job.check_run_id, status=status, output=output
            )

    async def _close_check_run(self, job: PrJob, conclusion: str, output: dict[str, Any]) -> None:
        if job.check_run_id:
            await self.github.update_check_run(
                job.installation_id,
                job.repo_full_name,
                job.check_run_id,
                status="completed",
                conclusion=conclusion,
                output=output,
            )

    async def _finish(self, job: PrJob, state: str, **values: object) -> None:
        async with self.db.session() as session:
            await jobs.finish(session, job.id, state, **values)  # type: ignore[arg-type]
