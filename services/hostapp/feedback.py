"""What people said, delivered: verdicts to the analyzer's ReportFindings, replies to the code host.

Webhook handlers and jobs only write rows (a verdict on a ``pr_findings`` row, a
``pending_replies`` row) in their own transaction; this loop delivers them, woken when there is
something to send and every ``FEEDBACK_POLL_SECONDS`` in case a wake-up was lost (a restart).
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict

from services.contracts.v1 import analyzer_pb2, analyzer_pb2_grpc
from services.hostapp import queries
from services.hostapp.github import GitHubApp, GitHubError
from services.hostapp.settings import HostAppSettings
from services.kit.db import Database
from services.kit.errors import ServiceError
from services.kit.grpc_client import RemoteError, call
from services.kit.supervision import Wakeable

log = logging.getLogger(__name__)


class FeedbackSender(Wakeable):
    def __init__(
        self,
        db: Database,
        github: GitHubApp,
        analyzer: analyzer_pb2_grpc.AnalyzerServiceAsyncStub,
        settings: HostAppSettings,
    ) -> None:
        self.db = db
        self.github = github
        self.analyzer = analyzer
        self.settings = settings
        self._lock = asyncio.Lock()
        super().__init__()

    async def run(self) -> None:
        while not self._stopping:
            await self.doze(self.settings.feedback_poll_seconds)
            self._wake.clear()
            if self._stopping:
                return
            try:
                await self.flush()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the next wake-up or poll tries again
                log.warning("feedback not delivered yet: %s", exc)

    async def flush(self) -> tuple[int, int]:
        """Send every unsent verdict and post every owed reply; returns (verdicts, replies)."""
        async with self._lock:
            return await self._send_verdicts(), await self._post_replies()

    async def _send_verdicts(self) -> int:
        sent = 0
        async with self.db.session() as session:
            rows = await queries.unsent_verdicts(session)
            by_repo: dict[str, list] = defaultdict(list)
            for row in rows:
                by_repo[row.repo_full_name].append(row)
            for repo, group in by_repo.items():
                request = analyzer_pb2.ReportFindingsRequest(
                    repo=repo,
                    feedback=[
                        analyzer_pb2.FeedbackItem(
                            finding_id=r.finding_id,
                            fingerprint=r.fingerprint,
                            verdict=r.verdict,
                            comment=r.verdict_comment,
                        )
                        for r in group
                    ],
                )
                try:
                    await call(self.analyzer.ReportFindings, request, timeout=self.settings.grpc_deadline_seconds)
                except RemoteError as exc:
                    if exc.transient:
                        raise
                    # The analyzer will never take these (the repository is gone): do not retry forever.
                    log.warning("feedback for %s refused (%s): dropped", repo, exc.code)
                for r in group:
                    r.verdict_sent = True
                sent += len(group)
        if sent:
            log.info("reported %d verdict(s) to the analyzer", sent)
        return sent

    async def _post_replies(self) -> int:
        posted = 0
        async with self.db.session() as session:
            for reply in await queries.unposted_replies(session):
                try:
                    if reply.in_reply_to:
                        await self.github.reply(
                            reply.installation_id, reply.repo_full_name, reply.pr_number, reply.in_reply_to, reply.body
                        )
                    else:
                        await self.github.comment(
                            reply.installation_id, reply.repo_full_name, reply.pr_number, reply.body
                        )
                except (GitHubError, ServiceError) as exc:
                    if getattr(exc, "transient", False):
                        raise
                    log.warning("reply on %s#%d not posted: %s", reply.repo_full_name, reply.pr_number, exc)
                reply.posted = True
                posted += 1
        return posted
