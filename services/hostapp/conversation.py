"""What people say on our comments, as webhook rules (no code-host call here: GitHub waits 10 s).

- ``pull_request_review_thread`` ``resolved`` on our comment, by a person, with the code
  unchanged since the analysis that had the finding: ``dismissed``. Resolved after a new push:
  the next job decides (still there → ``dismissed``, gone → ``fixed``). ``unresolved`` after a
  dismissal revives the finding (``accepted``).
- ``pull_request_review_comment`` ``created``: a reply on our comment that dismisses it
  ("intended", "false positive", "won't fix", ...) → ``dismissed``.
- ``@<app> ignore <rule>`` (or ``unignore``) in a review comment or a pull request's comment
  turns the rule off (on) for the repository; the reply says how to undo it.

Verdicts are queued on the finding's row and replies in ``pending_replies``; the feedback
sender delivers both. Bots (our own app included) are never read as people.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from services.hostapp import queries, threads
from services.hostapp.models import DISMISSED, OPEN

DISMISSING = re.compile(
    r"\b(intended|intentional(?:ly)?|on purpose|by design|false positive|won'?t fix|wontfix|not a (?:bug|problem|issue)"
    r"|ignore (?:this|it)|deliberate(?:ly)?|as designed)\b",
    re.IGNORECASE,
)
RULE = r"[a-z_]+(?:\.[A-Za-z0-9_\-]+)*"


def _is_bot(payload: dict[str, Any]) -> bool:
    sender = payload.get("sender") or {}
    return sender.get("type") == "Bot" or str(sender.get("login") or "").endswith("[bot]")


def _login(payload: dict[str, Any]) -> str:
    return str((payload.get("sender") or {}).get("login") or "")


def _head(payload: dict[str, Any]) -> str:
    return str(((payload.get("pull_request") or {}).get("head") or {}).get("sha") or "")


def command(body: str, slug: str) -> tuple[str, str] | None:
    """``("ignore" | "unignore", rule or "")`` when the text mentions the app with a command."""
    match = re.search(rf"@{re.escape(slug)}(?:\[bot\])?\s+(ignore|unignore)\b[ \t]*`?({RULE})?`?", body, re.IGNORECASE)
    if not match:
        return None
    return match.group(1).lower(), match.group(2) or ""


async def on_review_thread(
    session: AsyncSession, delivery_id: str, payload: dict[str, Any], action: str, slug: str
) -> tuple[bool, str]:
    if action not in ("resolved", "unresolved"):
        return False, f"ignored action {action!r}"
    if _is_bot(payload):
        return False, "ignored: resolved by a bot (our own resolution included)"
    comments = (payload.get("thread") or {}).get("comments") or []
    first = comments[0].get("id") if comments and isinstance(comments[0], dict) else None
    if not isinstance(first, int):
        return False, "ignored: the thread has no comment"
    row = await queries.pr_finding_by_comment(session, first)
    if row is None:
        return False, "ignored: not a thread of ours"
    if action == "resolved":
        if row.state != OPEN:
            return False, f"ignored: the finding is already {row.state}"
        head = _head(payload)
        if head and head == row.last_head:
            values = {"thread_resolved": True, **threads.dismissed(f"thread resolved by {_login(payload)}")}
            await queries.update_pr_finding(session, row.id, **values)
            return True, "finding dismissed: thread resolved without a code change"
        await queries.update_pr_finding(session, row.id, thread_resolved=True, person_resolved_at_head=head or "?")
        return True, "thread resolved after a push: the next analysis decides"
    if row.state == DISMISSED:
        values = {"state": OPEN, "thread_resolved": False, "person_resolved_at_head": "", "reaction": ""}
        await queries.update_pr_finding(session, row.id, **values, **threads.verdict("accepted", "thread reopened"))
        return True, "finding revived: thread unresolved"
    await queries.update_pr_finding(session, row.id, thread_resolved=False, person_resolved_at_head="")
    return True, "thread unresolved"


async def on_review_comment(
    session: AsyncSession, delivery_id: str, payload: dict[str, Any], action: str, slug: str
) -> tuple[bool, str]:
    if action != "created":
        return False, f"ignored action {action!r}"
    if _is_bot(payload):
        return False, "ignored: a bot's comment"
    comment = payload.get("comment") or {}
    body = str(comment.get("body") or "")
    parent = comment.get("in_reply_to_id")
    row = await queries.pr_finding_by_comment(session, parent) if isinstance(parent, int) else None
    asked = command(body, slug)
    if asked is not None:
        reply_to = parent if isinstance(parent, int) else comment.get("id")
        return await _command(session, delivery_id, payload, asked, row.rule if row else "", reply_to, slug)
    if row is None:
        return False, "ignored: not a reply to our comment"
    if row.state == OPEN and DISMISSING.search(body):
        await queries.update_pr_finding(session, row.id, **threads.dismissed(body))
        return True, "finding dismissed by a reply"
    return False, "reply recorded, no verdict in it"


async def on_issue_comment(
    session: AsyncSession, delivery_id: str, payload: dict[str, Any], action: str, slug: str
) -> tuple[bool, str]:
    if action != "created" or not (payload.get("issue") or {}).get("pull_request"):
        return False, "ignored: not a new comment on a pull request"
    if _is_bot(payload):
        return False, "ignored: a bot's comment"
    asked = command(str((payload.get("comment") or {}).get("body") or ""), slug)
    if asked is None:
        return False, "ignored: no command"
    return await _command(session, delivery_id, payload, asked, "", None, slug)


async def _command(
    session: AsyncSession,
    delivery_id: str,
    payload: dict[str, Any],
    asked: tuple[str, str],
    default_rule: str,
    reply_to: Any,
    slug: str,
) -> tuple[bool, str]:
    verb, rule = asked
    rule = rule or default_rule
    repo = str((payload.get("repository") or {}).get("full_name") or "")
    installation = (payload.get("installation") or {}).get("id")
    number = (payload.get("pull_request") or payload.get("issue") or {}).get("number")
    if not repo or not isinstance(installation, int) or not isinstance(number, int):
        return False, "ignored: command without repository, installation or pull request"
    mention = f"@{slug}"
    if not rule:
        body = f"Which rule? Write `{verb} <rule>` after mentioning {mention}, e.g. `{verb} naming.case.function`."
    elif verb == "ignore":
        await queries.ignore_rule(session, repo, rule, _login(payload))
        body = (
            f"`{rule}` is now ignored in {repo}: its findings are no longer commented, annotated or counted. "
            f"To undo, comment `unignore {rule}` after mentioning {mention}."
        )
    else:
        removed = await queries.unignore_rule(session, repo, rule)
        body = f"`{rule}` is checked again in {repo}." if removed else f"`{rule}` was not ignored in {repo}."
    await queries.add_reply(
        session,
        delivery_id=delivery_id,
        installation_id=installation,
        repo_full_name=repo,
        pr_number=number,
        in_reply_to=reply_to if isinstance(reply_to, int) else None,
        body=body,
    )
    return True, f"command {verb} {rule or '(no rule)'}"


Handler = Callable[[AsyncSession, str, dict[str, Any], str, str], Awaitable[tuple[bool, str]]]
HANDLERS: dict[str, Handler] = {
    "pull_request_review_thread": on_review_thread,
    "pull_request_review_comment": on_review_comment,
    "issue_comment": on_issue_comment,
}
