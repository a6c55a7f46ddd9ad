"""A finding's life on a pull request, across pushes (docs/hostapp.md, "The life of a finding").

Each fingerprint is commented once per pull request; its row in ``pr_findings`` holds the
comment and every later state. On each push the new head's analysis settles the open rows:
still there → the thread stays (its position is not re-posted); gone → ``fixed``: a one-line
reply names the commit, the thread is resolved (GraphQL), and ``fixed`` goes to the analyzer.
A person's word (a resolved thread, a 👎, a dismissing reply) makes it ``dismissed``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from services.contracts.v1 import analyzer_pb2
from services.hostapp import queries, review
from services.hostapp.github import GitHubApp, ReviewThread
from services.hostapp.models import DISMISSED, FIXED, OPEN, PrFinding, PrJob
from services.kit.db import Database

log = logging.getLogger(__name__)

# Reactions read as a verdict; the latest by a person wins.
REACTION_VERDICTS = {"+1": "accepted", "-1": "dismissed"}


def verdict(value: str, comment: str = "") -> dict[str, object]:
    """The columns that queue a verdict for the analyzer's ReportFindings."""
    return {"verdict": value, "verdict_comment": comment[:2000], "verdict_sent": False}


def dismissed(comment: str) -> dict[str, object]:
    return {"state": DISMISSED, **verdict("dismissed", comment)}


class Tracker:
    def __init__(self, db: Database, github: GitHubApp, *, wake: Callable[[], None] = lambda: None) -> None:
        self.db = db
        self.github = github
        self.wake = wake  # the feedback sender: verdicts are waiting

    async def rows(self, job: PrJob) -> list[PrFinding]:
        async with self.db.session() as session:
            return await queries.pr_findings(session, job.installation_id, job.repo_full_name, job.pr_number)

    # --- reactions (the code host sends no webhook for them) -------------------------------

    async def read_reactions(self, installation_id: int, full_name: str, rows: Iterable[PrFinding]) -> int:
        """Read the reactions on our open comments; a new 👍 or 👎 becomes a verdict."""
        changed = 0
        for row in rows:
            if row.state != OPEN or not row.comment_id:
                continue
            reactions = await self.github.reactions(installation_id, full_name, row.comment_id)
            people = sorted(
                (r for r in reactions if not r.bot and r.content in REACTION_VERDICTS), key=lambda r: r.created_at
            )
            if not people or people[-1].content == row.reaction:
                continue
            latest = people[-1]
            values: dict[str, object] = {"reaction": latest.content}
            if REACTION_VERDICTS[latest.content] == "dismissed":
                values.update(dismissed(f"👎 by {latest.login}"))
            else:
                values.update(verdict("accepted", f"👍 by {latest.login}"))
            async with self.db.session() as session:
                await queries.update_pr_finding(session, row.id, **values)
            for name, value in values.items():
                setattr(row, name, value)
            changed += 1
        if changed:
            self.wake()
        return changed

    # --- the new head's analysis -----------------------------------------------------------

    async def settle(
        self,
        job: PrJob,
        rows: list[PrFinding],
        present: dict[str, analyzer_pb2.Finding],
        unreviewed_paths: set[str],
        unlisted_rules: frozenset[str] = frozenset(),
    ) -> list[PrFinding]:
        """Open rows against this head's analysis; returns the rows fixed by this head.
        ``unlisted_rules``: rules the analysis did not list every finding of (a few of one rule
        are listed per change): a row of one of them that is absent may only have been left out."""
        fixed: list[PrFinding] = []
        async with self.db.session() as session:
            for row in rows:
                if row.state != OPEN:
                    continue
                finding = present.get(row.fingerprint)
                values: dict[str, object]
                if finding is not None:
                    values = {"last_head": job.head_sha, "line": finding.start_line, "finding_id": finding.id}
                    if row.person_resolved_at_head:  # resolved by a person, and the code still has it
                        values.update(dismissed("thread resolved by a person without a fix"))
                elif row.path in unreviewed_paths or row.rule in unlisted_rules:
                    continue  # not analysed, or not listed, this time: no verdict either way
                else:
                    # Marked before the thread is touched: the code host's "resolved" webhook for
                    # our own resolution then finds the row no longer open.
                    values = {"state": FIXED, "fixed_by": job.head_sha, **verdict("fixed", f"gone at {job.head_sha}")}
                    fixed.append(row)
                await queries.update_pr_finding(session, row.id, **values)
                for name, value in values.items():
                    setattr(row, name, value)
        pending = [r for r in rows if r.state == FIXED and not r.thread_resolved and r.comment_id]
        if pending:
            threads = {
                t.first_comment_id: t
                for t in await self.github.review_threads(job.installation_id, job.repo_full_name, job.pr_number)
            }
            for row in pending:
                await self._close(job, row, threads.get(row.comment_id or 0))
        if fixed:
            self.wake()
        return fixed

    async def _close(self, job: PrJob, row: PrFinding, thread: ReviewThread | None) -> None:
        if thread is not None and not thread.resolved:
            body = f"Fixed in {row.fixed_by}: this finding is gone from that commit's analysis."
            await self.github.reply(job.installation_id, job.repo_full_name, job.pr_number, row.comment_id or 0, body)
            await self.github.resolve_thread(job.installation_id, thread.id)
        async with self.db.session() as session:
            await queries.update_pr_finding(
                session, row.id, thread_resolved=True, thread_id=thread.id if thread else row.thread_id
            )
        row.thread_resolved = True

    # --- after the review is posted ----------------------------------------------------------

    async def record_comments(self, job: PrJob, review_id: int, commented: list[analyzer_pb2.Finding]) -> int:
        """Rows for the comments of our review, read back for their ids (the review's create
        call does not return them); a resumed job records what an earlier attempt posted."""
        by_key = {review.key(f): f for f in commented}
        comments = await self.github.review_comments(job.installation_id, job.repo_full_name, job.pr_number, review_id)
        recorded = 0
        async with self.db.session() as session:
            for c in comments:
                fingerprint = review.marked_fingerprint(c.body)
                finding = by_key.get(fingerprint)
                if not fingerprint:
                    continue
                await queries.add_pr_finding(
                    session,
                    installation_id=job.installation_id,
                    repo_full_name=job.repo_full_name,
                    pr_number=job.pr_number,
                    fingerprint=fingerprint,
                    finding_id=finding.id if finding else "",
                    rule=finding.rule if finding else "",
                    path=c.path or (finding.path if finding else ""),
                    line=finding.start_line if finding else c.line,
                    state=OPEN,
                    comment_id=c.id,
                    thread_id="",
                    thread_resolved=False,
                    first_head=job.head_sha,
                    last_head=job.head_sha,
                    fixed_by="",
                    person_resolved_at_head="",
                    reaction="",
                    verdict="",
                    verdict_comment="",
                    verdict_sent=True,
                )
                recorded += 1
        return recorded
