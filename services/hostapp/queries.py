"""SQL statements of the hostapp service (no rules here)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import delete, func, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from services.hostapp.models import (
    ACTIVE,
    OPEN,
    UNFINISHED,
    IgnoredRule,
    Installation,
    InstallationRepository,
    PendingReply,
    PrFinding,
    PrJob,
    RedeliveryRequest,
    RepositoryIndex,
    WebhookDelivery,
    now_ms,
)
from services.kit.db import advisory_lock


def repo_key(full_name: str) -> str:
    return full_name.strip().lower()


# --- deliveries ---------------------------------------------------------------------------


async def record_delivery(
    session: AsyncSession, delivery_id: str, event: str, action: str, installation_id: int | None
) -> bool:
    """Insert the delivery under its unique id; False when it was already recorded."""
    result = await session.execute(
        insert(WebhookDelivery)
        .values(
            delivery_id=delivery_id,
            event=event,
            action=action,
            installation_id=installation_id,
            handled=False,
            outcome="",
            received_at=now_ms(),
        )
        .on_conflict_do_nothing(index_elements=["delivery_id"])
        .returning(WebhookDelivery.delivery_id)
    )
    return result.first() is not None


async def set_delivery_outcome(
    session: AsyncSession, delivery_id: str, handled: bool, outcome: str, job_id: str | None
) -> None:
    await session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.delivery_id == delivery_id)
        .values(handled=handled, outcome=outcome[:200], job_id=job_id)
    )


async def delivery(session: AsyncSession, delivery_id: str) -> WebhookDelivery | None:
    return await session.get(WebhookDelivery, delivery_id)


async def known_deliveries(session: AsyncSession, ids: Iterable[str]) -> set[str]:
    ids = list(ids)
    if not ids:
        return set()
    rows = await session.execute(select(WebhookDelivery.delivery_id).where(WebhookDelivery.delivery_id.in_(ids)))
    return set(rows.scalars())


# --- installations and their repository records ----------------------------------------------


async def installation(session: AsyncSession, installation_id: int, *, lock: bool = False) -> Installation | None:
    stmt = select(Installation).where(Installation.id == installation_id)
    if lock:
        stmt = stmt.with_for_update()
    return (await session.execute(stmt)).scalar_one_or_none()


async def upsert_installation(
    session: AsyncSession, installation_id: int, account_login: str, account_type: str, status: str
) -> None:
    values = {"account_login": account_login, "account_type": account_type, "status": status, "updated_at": now_ms()}
    await session.execute(
        insert(Installation)
        .values(id=installation_id, created_at=now_ms(), **values)
        .on_conflict_do_update(index_elements=["id"], set_=values)
    )


async def upsert_record(session: AsyncSession, installation_id: int, repo: dict[str, Any], status: str) -> None:
    full_name = str(repo["full_name"])
    values = {
        "repo_id": repo.get("id"),
        "full_name": full_name,
        "private": bool(repo.get("private", False)),
        "status": status,
        "updated_at": now_ms(),
    }
    await session.execute(
        insert(InstallationRepository)
        .values(installation_id=installation_id, full_name_key=repo_key(full_name), created_at=now_ms(), **values)
        .on_conflict_do_update(index_elements=["installation_id", "full_name_key"], set_=values)
    )


async def set_record_status(
    session: AsyncSession,
    installation_id: int,
    status: str,
    *,
    full_names: Sequence[str] | None = None,
    only_from: Sequence[str] | None = None,
) -> list[str]:
    """Move records of an installation (all, or the named ones) to ``status``; return their names."""
    stmt = update(InstallationRepository).where(InstallationRepository.installation_id == installation_id)
    if full_names is not None:
        stmt = stmt.where(InstallationRepository.full_name_key.in_([repo_key(n) for n in full_names]))
    if only_from is not None:
        stmt = stmt.where(InstallationRepository.status.in_(list(only_from)))
    result = await session.execute(
        stmt.values(status=status, updated_at=now_ms()).returning(InstallationRepository.full_name)
    )
    return list(result.scalars())


async def records_of(session: AsyncSession, installation_id: int) -> list[InstallationRepository]:
    rows = await session.execute(
        select(InstallationRepository)
        .where(InstallationRepository.installation_id == installation_id)
        .order_by(InstallationRepository.full_name_key)
    )
    return list(rows.scalars())


async def records_for(session: AsyncSession, full_name: str) -> list[InstallationRepository]:
    """Every installation's record of one repository, active first, newest first."""
    rows = await session.execute(
        select(InstallationRepository)
        .where(InstallationRepository.full_name_key == repo_key(full_name))
        .order_by((InstallationRepository.status == ACTIVE).desc(), InstallationRepository.updated_at.desc())
    )
    return list(rows.scalars())


# --- PR jobs ---------------------------------------------------------------------------------

_UNFINISHED_SQL = text("state IN ('queued', 'running', 'waiting_index')")


async def insert_job(
    session: AsyncSession,
    installation_id: int,
    full_name: str,
    pr_number: int,
    head_sha: str,
    delivery_id: str,
    rerun: bool = False,
) -> str | None:
    """A new queued job, or None when an unfinished job for this PR head already exists."""
    result = await session.execute(
        insert(PrJob)
        .values(
            installation_id=installation_id,
            repo_full_name=full_name,
            repo_key=repo_key(full_name),
            pr_number=pr_number,
            head_sha=head_sha,
            delivery_id=delivery_id,
            rerun=rerun,
            created_at=now_ms(),
            updated_at=now_ms(),
        )
        .on_conflict_do_nothing(
            index_elements=["installation_id", "repo_key", "pr_number", "head_sha"], index_where=_UNFINISHED_SQL
        )
        .returning(PrJob.id)
    )
    return result.scalar()


async def unfinished_job(
    session: AsyncSession, installation_id: int, full_name: str, pr_number: int, head_sha: str
) -> PrJob | None:
    rows = await session.execute(
        select(PrJob).where(
            PrJob.installation_id == installation_id,
            PrJob.repo_key == repo_key(full_name),
            PrJob.pr_number == pr_number,
            PrJob.head_sha == head_sha,
            PrJob.state.in_(UNFINISHED),
        )
    )
    return rows.scalar_one_or_none()


async def reviewed_job(
    session: AsyncSession, installation_id: int, full_name: str, pr_number: int, head_sha: str, states: Sequence[str]
) -> PrJob | None:
    """The latest finished job of this PR head in one of ``states`` (a head already reviewed)."""
    rows = await session.execute(
        select(PrJob)
        .where(
            PrJob.installation_id == installation_id,
            PrJob.repo_key == repo_key(full_name),
            PrJob.pr_number == pr_number,
            PrJob.head_sha == head_sha,
            PrJob.state.in_(list(states)),
        )
        .order_by(PrJob.finished_at.desc())
        .limit(1)
    )
    return rows.scalar_one_or_none()


async def job(session: AsyncSession, job_id: str, *, lock: bool = False) -> PrJob | None:
    stmt = select(PrJob).where(PrJob.id == job_id)
    if lock:
        stmt = stmt.with_for_update()
    return (await session.execute(stmt)).scalar_one_or_none()


async def update_job(session: AsyncSession, job_id: str, **values: Any) -> None:
    await session.execute(update(PrJob).where(PrJob.id == job_id).values({"updated_at": now_ms(), **values}))


async def renew_lease(session: AsyncSession, job_id: str, lease_until: int) -> None:
    await session.execute(
        update(PrJob).where(PrJob.id == job_id, PrJob.state == "running").values(lease_until=lease_until)
    )


async def jobs_waiting_for(session: AsyncSession, key: str) -> list[PrJob]:
    rows = await session.execute(
        select(PrJob).where(PrJob.repo_key == key, PrJob.state == "waiting_index").with_for_update()
    )
    return list(rows.scalars())


async def oldest_active_job_ms(session: AsyncSession) -> int | None:
    """When the oldest queued or running PR job was created (None: none is). Jobs waiting for an
    index are left out: they wait for someone else's work, within their own bound."""
    oldest = await session.execute(select(func.min(PrJob.created_at)).where(PrJob.state.in_(("queued", "running"))))
    return oldest.scalar()


async def jobs_to_reconcile(session: AsyncSession, *, now: int, requeue_before: int, wait_before: int) -> list[PrJob]:
    """Jobs whose message may be lost (queued for long), whose worker died (lease expired),
    or that waited for an index past the bound."""
    rows = await session.execute(
        select(PrJob)
        .where(
            ((PrJob.state == "queued") & (PrJob.updated_at < requeue_before))
            | ((PrJob.state == "running") & (PrJob.lease_until < now))
            | ((PrJob.state == "waiting_index") & (PrJob.waiting_since < wait_before))
        )
        .order_by(PrJob.updated_at)
        .limit(100)
        .with_for_update(skip_locked=True)
    )
    return list(rows.scalars())


async def job_counts(session: AsyncSession) -> dict[str, int]:
    rows = await session.execute(select(PrJob.state, func.count()).group_by(PrJob.state))
    return {state: int(n) for state, n in rows.all()}


# --- the repository index projection ---------------------------------------------------------


async def lock_repo(session: AsyncSession, key: str) -> None:
    """Serialize a job's 'wait for the index' with the event that ends the wait."""
    await advisory_lock(session, f"hostapp.repo:{key}")


async def repo_index(session: AsyncSession, key: str) -> RepositoryIndex | None:
    return await session.get(RepositoryIndex, key)


async def upsert_repo_index(
    session: AsyncSession, key: str, state: str, repository_id: str, head_sha: str, error: str
) -> None:
    values = {
        "state": state,
        "repository_id": repository_id,
        "head_sha": head_sha,
        "error": error[:2000],
        "updated_at": now_ms(),
    }
    await session.execute(
        insert(RepositoryIndex)
        .values(repo_key=key, **values)
        .on_conflict_do_update(index_elements=["repo_key"], set_=values)
    )


# --- redelivery requests ---------------------------------------------------------------------


async def requested_redeliveries(session: AsyncSession, guids: Iterable[str]) -> set[str]:
    guids = list(guids)
    if not guids:
        return set()
    rows = await session.execute(select(RedeliveryRequest.guid).where(RedeliveryRequest.guid.in_(guids)))
    return set(rows.scalars())


async def record_redelivery(session: AsyncSession, guid: str, hook_delivery_id: int) -> None:
    await session.execute(
        insert(RedeliveryRequest)
        .values(guid=guid, hook_delivery_id=hook_delivery_id, requested_at=now_ms())
        .on_conflict_do_nothing(index_elements=["guid"])
    )


# --- findings on pull requests, ignored rules, replies owed -----------------------------------


async def pr_findings(session: AsyncSession, installation_id: int, full_name: str, pr_number: int) -> list[PrFinding]:
    rows = await session.execute(
        select(PrFinding).where(
            PrFinding.installation_id == installation_id,
            PrFinding.repo_key == repo_key(full_name),
            PrFinding.pr_number == pr_number,
        )
    )
    return list(rows.scalars())


async def add_pr_finding(session: AsyncSession, **values: Any) -> None:
    """The first comment on a fingerprint; a second record of the same one changes nothing."""
    now = now_ms()
    await session.execute(
        insert(PrFinding)
        .values(repo_key=repo_key(values["repo_full_name"]), created_at=now, updated_at=now, **values)
        .on_conflict_do_nothing(index_elements=["installation_id", "repo_key", "pr_number", "fingerprint"])
    )


async def update_pr_finding(session: AsyncSession, row_id: str, /, **values: Any) -> None:
    await session.execute(update(PrFinding).where(PrFinding.id == row_id).values({"updated_at": now_ms(), **values}))


async def pr_finding_by_comment(session: AsyncSession, comment_id: int, *, lock: bool = True) -> PrFinding | None:
    stmt = select(PrFinding).where(PrFinding.comment_id == comment_id)
    if lock:
        stmt = stmt.with_for_update()
    return (await session.execute(stmt)).scalars().first()


async def unsent_verdicts(session: AsyncSession, limit: int = 500) -> list[PrFinding]:
    rows = await session.execute(
        select(PrFinding)
        .where(PrFinding.verdict_sent.is_(False))
        .order_by(PrFinding.updated_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list(rows.scalars())


async def open_threads(session: AsyncSession, since: int, limit: int = 200) -> list[PrFinding]:
    """Open findings with a comment, recently active: the reconciler reads their reactions."""
    rows = await session.execute(
        select(PrFinding)
        .where(PrFinding.state == OPEN, PrFinding.comment_id.is_not(None), PrFinding.updated_at >= since)
        .order_by(PrFinding.updated_at.desc())
        .limit(limit)
    )
    return list(rows.scalars())


async def ignored_rules(session: AsyncSession, full_name: str) -> set[str]:
    rows = await session.execute(select(IgnoredRule.rule).where(IgnoredRule.repo_key == repo_key(full_name)))
    return set(rows.scalars())


async def ignore_rule(session: AsyncSession, full_name: str, rule: str, login: str) -> bool:
    result = await session.execute(
        insert(IgnoredRule)
        .values(repo_key=repo_key(full_name), rule=rule, by_login=login, created_at=now_ms())
        .on_conflict_do_nothing(index_elements=["repo_key", "rule"])
        .returning(IgnoredRule.rule)
    )
    return result.first() is not None


async def unignore_rule(session: AsyncSession, full_name: str, rule: str) -> bool:
    result = await session.execute(
        delete(IgnoredRule)
        .where(IgnoredRule.repo_key == repo_key(full_name), IgnoredRule.rule == rule)
        .returning(IgnoredRule.rule)
    )
    return result.first() is not None


async def add_reply(session: AsyncSession, **values: Any) -> None:
    await session.execute(
        insert(PendingReply)
        .values(created_at=now_ms(), posted=False, **values)
        .on_conflict_do_nothing(index_elements=["delivery_id"])
    )


async def unposted_replies(session: AsyncSession, limit: int = 100) -> list[PendingReply]:
    rows = await session.execute(
        select(PendingReply)
        .where(PendingReply.posted.is_(False))
        .order_by(PendingReply.created_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list(rows.scalars())
