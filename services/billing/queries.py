"""SQL statements of the billing service (no rules here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from services.billing.models import (
    AccessToken,
    Membership,
    OAuthState,
    Organization,
    PaymentEvent,
    RateCounter,
    Subscription,
    UsageRecord,
    User,
    new_id,
)

# Statements that run in a unit of work or on a single-statement (autocommit) connection.
Executor = AsyncSession | AsyncConnection

# --- users, organizations, tokens -------------------------------------------------------------


async def user_by_login(session: AsyncSession, login: str) -> User | None:
    return (await session.execute(select(User).where(User.login == login))).scalar_one_or_none()


async def user_by_login_ci(session: AsyncSession, login: str) -> User | None:
    # Code-host logins are case-insensitive; ours keep the host's spelling.
    stmt = select(User).where(func.lower(User.login) == login.lower()).limit(1)
    return (await session.execute(stmt)).scalar_one_or_none()


async def user_by_id(session: AsyncSession, user_id: str) -> User | None:
    return await session.get(User, user_id)


async def user_by_host_id(session: AsyncSession, host_user_id: int) -> User | None:
    stmt = select(User).where(User.host_user_id == host_user_id)
    return (await session.execute(stmt)).scalar_one_or_none()


async def lock_user(session: AsyncSession, user_id: str) -> User | None:
    return await session.get(User, user_id, with_for_update=True)


async def org_by_name(session: AsyncSession, name: str) -> Organization | None:
    return (await session.execute(select(Organization).where(Organization.name == name))).scalar_one_or_none()


async def org_by_host_id(session: AsyncSession, host_org_id: int) -> Organization | None:
    stmt = select(Organization).where(Organization.host_org_id == host_org_id)
    return (await session.execute(stmt)).scalar_one_or_none()


async def lock_org(session: AsyncSession, org_id: str) -> Organization | None:
    """The organization row, locked: team changes are serialized per organization so two
    admins cannot both remove each other or both take the last seat."""
    return await session.get(Organization, org_id, with_for_update=True)


async def token_by_digest(session: AsyncSession, digest: str) -> AccessToken | None:
    return (await session.execute(select(AccessToken).where(AccessToken.digest == digest))).scalar_one_or_none()


async def token_by_id(session: AsyncSession, token_id: str) -> AccessToken | None:
    return await session.get(AccessToken, token_id)


async def personal_tokens(session: AsyncSession, user_id: str) -> Sequence[AccessToken]:
    stmt = (
        select(AccessToken)
        .where(AccessToken.user_id == user_id, AccessToken.kind == "pat", AccessToken.revoked_at.is_(None))
        .order_by(AccessToken.created_at.desc(), AccessToken.id)
    )
    return (await session.execute(stmt)).scalars().all()


async def revoke_token(session: AsyncSession, token_id: str, at: int) -> None:
    await session.execute(
        update(AccessToken).where(AccessToken.id == token_id, AccessToken.revoked_at.is_(None)).values(revoked_at=at)
    )


async def memberships_of(
    session: AsyncSession, user_id: str, status: str = "active"
) -> list[tuple[Membership, Organization]]:
    """The user's memberships in that status (``invited``: their pending invitations)."""
    rows = await session.execute(
        select(Membership, Organization)
        .join(Organization, Organization.id == Membership.org_id)
        .where(Membership.user_id == user_id, Membership.status == status)
        .order_by(Organization.name)
    )
    return [(m, o) for m, o in rows.all()]


async def all_memberships_of(session: AsyncSession, user_id: str) -> Sequence[Membership]:
    return (await session.execute(select(Membership).where(Membership.user_id == user_id))).scalars().all()


async def touch_token(db: Executor, token_id: str, at: int) -> None:
    await db.execute(update(AccessToken).where(AccessToken.id == token_id).values(last_used_at=at))


async def add_oauth_state(session: AsyncSession, digest: str, redirect_uri: str, expires_at: int) -> None:
    session.add(OAuthState(digest=digest, redirect_uri=redirect_uri, expires_at=expires_at))
    await session.flush()


async def take_oauth_state(session: AsyncSession, digest: str) -> OAuthState | None:
    """Consume a state: whoever deletes it first owns it, so a state works once."""
    stmt = delete(OAuthState).where(OAuthState.digest == digest).returning(OAuthState)
    return (await session.execute(stmt)).scalar_one_or_none()


async def purge_oauth_states(session: AsyncSession, before: int) -> None:
    await session.execute(delete(OAuthState).where(OAuthState.expires_at < before))


# --- teams -----------------------------------------------------------------------------------


async def members_of(session: AsyncSession, org_id: str) -> list[tuple[Membership, User]]:
    rows = await session.execute(
        select(Membership, User)
        .join(User, User.id == Membership.user_id)
        .where(Membership.org_id == org_id)
        .order_by(Membership.created_at, User.login)
    )
    return [(m, u) for m, u in rows.all()]


async def membership_in(session: AsyncSession, org_id: str, member_id: str) -> Membership | None:
    stmt = select(Membership).where(Membership.org_id == org_id, Membership.id == member_id)
    return (await session.execute(stmt)).scalar_one_or_none()


async def membership_of_user(session: AsyncSession, org_id: str, user_id: str) -> Membership | None:
    stmt = select(Membership).where(Membership.org_id == org_id, Membership.user_id == user_id)
    return (await session.execute(stmt)).scalar_one_or_none()


async def seated_count(session: AsyncSession, org_id: str) -> int:
    """Members holding a seat: active ones and pending invitations."""
    stmt = select(func.count()).where(Membership.org_id == org_id, Membership.status.in_(("active", "invited")))
    return int((await session.execute(stmt)).scalar() or 0)


async def admin_count(session: AsyncSession, org_id: str) -> int:
    stmt = select(func.count()).where(
        Membership.org_id == org_id, Membership.status == "active", Membership.role == "team-admin"
    )
    return int((await session.execute(stmt)).scalar() or 0)


# --- subscriptions ---------------------------------------------------------------------------


async def subscription_for(session: AsyncSession, owner: str, *, lock: bool = False) -> Subscription | None:
    stmt = select(Subscription).where(Subscription.owner == owner)
    if lock:
        stmt = stmt.with_for_update()
    return (await session.execute(stmt)).scalar_one_or_none()


async def subscriptions_for(session: AsyncSession, owners: list[str]) -> Sequence[Subscription]:
    if not owners:
        return []
    return (await session.execute(select(Subscription).where(Subscription.owner.in_(owners)))).scalars().all()


async def subscription_by(
    session: AsyncSession, *, customer_id: str = "", checkout_session_id: str = ""
) -> Subscription | None:
    stmt = select(Subscription).with_for_update()
    if customer_id:
        stmt = stmt.where(Subscription.customer_id == customer_id)
    elif checkout_session_id:
        stmt = stmt.where(Subscription.checkout_session_id == checkout_session_id)
    else:
        return None
    return (await session.execute(stmt.limit(1))).scalar_one_or_none()


async def ensure_subscription(session: AsyncSession, owner: str, seats: int) -> Subscription:
    """The owner's row, created on the free plan when missing, locked for this transaction."""
    await session.execute(
        insert(Subscription)
        .values(id=new_id(), owner=owner, seats=seats)
        .on_conflict_do_nothing(index_elements=["owner"])
    )
    row = await subscription_for(session, owner, lock=True)
    assert row is not None
    return row


# --- usage -----------------------------------------------------------------------------------


async def add_usage(session: AsyncSession, record: dict[str, object]) -> bool:
    """Insert one usage record; False when its (owner, metric, source) was already counted."""
    result = await session.execute(
        insert(UsageRecord)
        .values(id=new_id(), **record)
        .on_conflict_do_nothing(index_elements=["owner", "metric", "source_id"])
        .returning(UsageRecord.id)
    )
    return result.first() is not None


async def usage_totals(session: AsyncSession, owner: str, start: int, end: int) -> dict[str, int]:
    rows = await session.execute(
        select(UsageRecord.metric, func.sum(UsageRecord.amount))
        .where(UsageRecord.owner == owner, UsageRecord.occurred_at >= start, UsageRecord.occurred_at < end)
        .group_by(UsageRecord.metric)
    )
    return {metric: int(total or 0) for metric, total in rows.all()}


async def usage_records(session: AsyncSession, owner: str, start: int, end: int, limit: int) -> Sequence[UsageRecord]:
    stmt = (
        select(UsageRecord)
        .where(UsageRecord.owner == owner, UsageRecord.occurred_at >= start, UsageRecord.occurred_at < end)
        .order_by(UsageRecord.occurred_at.desc(), UsageRecord.id)
        .limit(limit)
    )
    return (await session.execute(stmt)).scalars().all()


# --- payment events --------------------------------------------------------------------------


async def payment_event_seen(session: AsyncSession, event_id: str) -> bool:
    return (await session.get(PaymentEvent, event_id)) is not None


async def record_payment_event(session: AsyncSession, event_id: str, event_type: str, created: int) -> bool:
    """Claim the event id; False for a redelivery (a concurrent twin waits here, then loses)."""
    result = await session.execute(
        insert(PaymentEvent)
        .values(id=event_id, type=event_type, created=created)
        .on_conflict_do_nothing(index_elements=["id"])
        .returning(PaymentEvent.id)
    )
    return result.first() is not None


async def mark_payment_event_applied(session: AsyncSession, event_id: str) -> None:
    await session.execute(update(PaymentEvent).where(PaymentEvent.id == event_id).values(applied=True))


# --- rate limits -----------------------------------------------------------------------------


async def bump_counters(db: Executor, keys: list[str], window: int, amount: int = 1) -> dict[str, int]:
    """Count ``amount`` hits on each key in this window, atomically; the new counts.

    The table is UNLOGGED: these writes produce no WAL, so their commit never waits for a flush.
    """
    if not keys:
        return {}
    # Keys arrive sorted, so two requests bumping the same pair lock the rows in the same order.
    stmt = (
        insert(RateCounter)
        .values([{"key": k, "window": window, "count": amount} for k in keys])
        .on_conflict_do_update(index_elements=["key", "window"], set_={"count": RateCounter.count + amount})
        .returning(RateCounter.key, RateCounter.count)
    )
    return {key: count for key, count in (await db.execute(stmt)).all()}


async def plan_status(db: Executor, owner: str) -> tuple[str, str] | None:
    """An owner's subscribed plan and its status, without loading the row."""
    row = (await db.execute(select(Subscription.plan, Subscription.status).where(Subscription.owner == owner))).first()
    return None if row is None else (row[0], row[1])


async def purge_counters(db: Executor, before_window: int) -> None:
    await db.execute(delete(RateCounter).where(RateCounter.window < before_window))


# One round trip for the gateway's hot path: the token, its user, their active memberships
# and the subscriptions of the user and those organizations (plan and status).
_IDENTITY_SQL = """
    select t.id as token_id, t.kind, t.expires_at, t.revoked_at, t.last_used_at,
           u.id as user_id, u.login,
           coalesce(m.items, '[]'::json) as memberships,
           coalesce((select json_agg(json_build_array(s.plan, s.status)) from subscriptions s
                     where s.owner = 'user:' || u.id or s.owner = any(m.owners)), '[]'::json) as plans
    from access_tokens t
    join users u on u.id = t.user_id
    left join lateral (
        select json_agg(json_build_array(o.id, o.name, ms.role) order by o.name) as items,
               array_agg('org:' || o.id) as owners
        from memberships ms join organizations o on o.id = ms.org_id
        where ms.user_id = u.id and ms.status = 'active'
    ) m on true
    where t.digest = :digest
"""
_TOKEN_IDENTITY = text(_IDENTITY_SQL)
# The same, also counting the request against the token's rate-limit window when the token is
# usable: validation and metering of a request in a single statement.
_TOKEN_IDENTITY_COUNTED = text(
    f"""
    with ident as ({_IDENTITY_SQL}),
    bump as (
        insert into rate_counters (key, "window", count)
        select 'token:' || token_id, :window, 1 from ident
        where revoked_at is null and (expires_at = 0 or expires_at > :now)
        on conflict (key, "window") do update set count = rate_counters.count + 1
        returning count
    )
    select ident.*, (select count from bump) as token_count from ident
    """
)


async def token_identity(db: Executor, digest: str, *, count_window: int | None = None, now: int = 0) -> Any | None:
    """The token's identity row; with ``count_window``, also its new count in that window
    (``token_count``, None when the token is not usable)."""
    if count_window is None:
        return (await db.execute(_TOKEN_IDENTITY, {"digest": digest})).first()
    params = {"digest": digest, "window": count_window, "now": now}
    return (await db.execute(_TOKEN_IDENTITY_COUNTED, params)).first()
