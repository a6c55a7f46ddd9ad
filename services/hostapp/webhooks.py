"""Code-host webhook rules (spec: "Code-host events", "Subscription and installation moves").

A delivery was checked and recorded when it was acknowledged (``intake.py``); its effect is
applied here, after the answer, by the delivery processor (``deliveries.py``), in the
processor's transaction: the state change, any job or event in the outbox, and the delivery's
outcome commit together. Nothing is sent to the code host while applying a delivery.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from services.contracts.v1 import events_pb2
from services.hostapp import conversation, intake, jobs, queries
from services.hostapp.models import ACTIVE, COMPLETED, FAILED, REMOVED, SKIPPED, SUSPENDED, outbox
from services.kit.bus import SUBJECT_INSTALLATION_REPOS
from services.kit.outbox import add_event

log = logging.getLogger(__name__)

PR_ACTIONS = frozenset({"opened", "synchronize", "reopened"})
DEFAULT_SLUG = "code-review"
# A head whose job ended so is reviewed again only when a person asks (a check-run re-request):
# redeliveries, re-opens and repeated synchronize deliveries of it change nothing.
REVIEWED = (COMPLETED, SKIPPED, FAILED)
INSTALLATION_REPOS_EVENT_TYPE = "installation.repositories_changed"


@dataclass(frozen=True)
class Outcome:
    handled: bool
    outcome: str  # a short reason, stored with the delivery
    job_id: str = ""
    duplicate: bool = False
    conversation: bool = False  # a verdict or reply was queued for the feedback sender


Handler = Callable[[AsyncSession, str, str, dict[str, Any]], Awaitable[Outcome]]


async def apply(
    session: AsyncSession, delivery_id: str, event: str, payload: dict[str, Any], *, slug: str = DEFAULT_SLUG
) -> Outcome:
    """The effect of one recorded delivery (``intake.py`` checked and recorded it), in the
    caller's unit of work; the caller stores the outcome with the delivery."""
    action = str(payload.get("action") or "")
    handler = HANDLERS.get(event)
    if handler is not None:
        result = await handler(session, delivery_id, action, payload)
    elif event in conversation.HANDLERS:
        handled, said = await conversation.HANDLERS[event](session, delivery_id, payload, action, slug)
        result = Outcome(handled, said, conversation=handled)
    else:
        result = Outcome(False, "unknown_event")
    log.info("webhook.code_host.processed %s %s.%s: %s", delivery_id, event, action, result.outcome)
    return result


def _account(payload: dict[str, Any]) -> tuple[str, str]:
    account = (payload.get("installation") or {}).get("account") or {}
    return str(account.get("login") or ""), str(account.get("type") or "")


def _repos(payload: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [r for r in payload.get(key) or [] if isinstance(r, dict) and r.get("full_name")]


async def _announce(
    session: AsyncSession, installation_id: int, login: str, added: list[str], removed: list[str]
) -> None:
    """Tell the indexer which repositories to register or forget (outbox, same transaction)."""
    if not added and not removed:
        return
    message = events_pb2.InstallationRepositoriesChanged(
        installation_id=installation_id, account_login=login, added=sorted(added), removed=sorted(removed)
    )
    await add_event(session, outbox, SUBJECT_INSTALLATION_REPOS, INSTALLATION_REPOS_EVENT_TYPE, message)


async def on_installation(session: AsyncSession, delivery_id: str, action: str, payload: dict[str, Any]) -> Outcome:
    installation_id = intake.installation_id(payload)
    if installation_id is None:
        return Outcome(False, "no installation id")
    login, kind = _account(payload)
    current = await queries.installation(session, installation_id, lock=True)
    if action == "created":
        # Installation ids are never reused: a "created" arriving after "deleted" is stale.
        if current is not None and current.status == REMOVED:
            return Outcome(False, "stale: installation already deleted")
        await queries.upsert_installation(session, installation_id, login, kind, ACTIVE)
        repos = _repos(payload, "repositories")
        for r in repos:
            await queries.upsert_record(session, installation_id, r, ACTIVE)
        await _announce(session, installation_id, login, [r["full_name"] for r in repos], [])
        return Outcome(True, f"installation created with {len(repos)} repositories")
    if action == "deleted":
        await queries.upsert_installation(session, installation_id, login, kind, REMOVED)
        removed = await queries.set_record_status(session, installation_id, REMOVED, only_from=(ACTIVE, SUSPENDED))
        await _announce(session, installation_id, login, [], removed)
        return Outcome(True, f"installation deleted, {len(removed)} records removed")
    if action in ("suspend", "unsuspend"):
        if current is not None and current.status == REMOVED:
            return Outcome(False, "stale: installation already deleted")
        # Removed records stay removed: suspension acts on the live ones only.
        target, source = (SUSPENDED, ACTIVE) if action == "suspend" else (ACTIVE, SUSPENDED)
        await queries.upsert_installation(session, installation_id, login, kind, target)
        moved = await queries.set_record_status(session, installation_id, target, only_from=(source,))
        return Outcome(True, f"installation {action}ed, {len(moved)} records {target}")
    return Outcome(False, f"ignored action {action!r}")


async def on_installation_repositories(
    session: AsyncSession, delivery_id: str, action: str, payload: dict[str, Any]
) -> Outcome:
    installation_id = intake.installation_id(payload)
    if installation_id is None:
        return Outcome(False, "no installation id")
    login, kind = _account(payload)
    current = await queries.installation(session, installation_id, lock=True)
    if current is not None and current.status == REMOVED:
        return Outcome(False, "stale: installation already deleted")
    if current is None:
        # The "created" delivery may have been lost (GitHub does not retry on its own).
        await queries.upsert_installation(session, installation_id, login, kind, ACTIVE)
    if action in ("added", "repositories_added"):
        added = _repos(payload, "repositories_added")
        for r in added:
            await queries.upsert_record(session, installation_id, r, ACTIVE)
        await _announce(session, installation_id, login, [r["full_name"] for r in added], [])
        return Outcome(True, f"{len(added)} repositories added")
    if action in ("removed", "repositories_removed"):
        names = [str(r["full_name"]) for r in _repos(payload, "repositories_removed")]
        removed = await queries.set_record_status(session, installation_id, REMOVED, full_names=names)
        await _announce(session, installation_id, login, [], removed)
        return Outcome(True, f"{len(removed)} repositories removed")
    return Outcome(False, f"ignored action {action!r}")


async def on_pull_request(session: AsyncSession, delivery_id: str, action: str, payload: dict[str, Any]) -> Outcome:
    if action not in PR_ACTIONS:
        return Outcome(False, f"ignored action {action!r}")
    installation_id = intake.installation_id(payload)
    pr = payload.get("pull_request") or {}
    full_name = str((payload.get("repository") or {}).get("full_name") or "")
    number = pr.get("number")
    head_sha = str((pr.get("head") or {}).get("sha") or "")
    if installation_id is None or not full_name or not isinstance(number, int) or not head_sha:
        return Outcome(False, "ignored: payload lacks installation, repository, number or head sha")
    installation = await queries.installation(session, installation_id)
    if installation is not None and installation.status != ACTIVE:
        return Outcome(False, f"ignored: installation {installation.status}")
    records = [r for r in await queries.records_for(session, full_name) if r.installation_id == installation_id]
    if records and records[0].status != ACTIVE:
        return Outcome(False, f"ignored: repository {records[0].status}")
    # No record at all is accepted: the code host only sends this event to an installed app.
    reviewed = await queries.reviewed_job(session, installation_id, full_name, number, head_sha, REVIEWED)
    if reviewed is not None:
        return Outcome(False, f"head already reviewed ({reviewed.state})", reviewed.id)
    result = await jobs.enqueue(session, installation_id, full_name, number, head_sha, delivery_id)
    if result.created:
        return Outcome(True, "job enqueued", result.job_id)
    return Outcome(True, "job already queued for this head", result.job_id)


async def on_check_run(session: AsyncSession, delivery_id: str, action: str, payload: dict[str, Any]) -> Outcome:
    """A person re-ran our check run: that head is reviewed again (the only way a finished head is)."""
    if action != "rerequested":
        return Outcome(False, f"ignored action {action!r}")
    external_id = str((payload.get("check_run") or {}).get("external_id") or "")
    earlier = await queries.job(session, external_id) if external_id else None
    installation_id = intake.installation_id(payload)
    if earlier is None or earlier.installation_id != installation_id:
        return Outcome(False, "ignored: not a check run of ours")
    result = await jobs.enqueue(
        session,
        earlier.installation_id,
        earlier.repo_full_name,
        earlier.pr_number,
        earlier.head_sha,
        delivery_id,
        rerun=True,
    )
    return Outcome(True, "re-run requested" if result.created else "job already queued for this head", result.job_id)


HANDLERS: dict[str, Handler] = {
    "installation": on_installation,
    "installation_repositories": on_installation_repositories,
    "pull_request": on_pull_request,
    "check_run": on_check_run,
}
