"""SQL statements of the billing service (no rules here)."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from services.billing.models import AccessToken, Membership, Organization, User


async def user_by_login(session: AsyncSession, login: str) -> User | None:
    return (await session.execute(select(User).where(User.login == login))).scalar_one_or_none()


async def user_by_id(session: AsyncSession, user_id: str) -> User | None:
    return await session.get(User, user_id)


async def org_by_name(session: AsyncSession, name: str) -> Organization | None:
    return (await session.execute(select(Organization).where(Organization.name == name))).scalar_one_or_none()


async def token_by_digest(session: AsyncSession, digest: str) -> AccessToken | None:
    return (await session.execute(select(AccessToken).where(AccessToken.digest == digest))).scalar_one_or_none()


async def memberships_of(session: AsyncSession, user_id: str) -> list[tuple[Membership, Organization]]:
    rows = await session.execute(
        select(Membership, Organization)
        .join(Organization, Organization.id == Membership.org_id)
        .where(Membership.user_id == user_id, Membership.status == "active")
        .order_by(Organization.name)
    )
    return [(m, o) for m, o in rows.all()]


async def touch_token(session: AsyncSession, token_id: str, at: int) -> None:
    await session.execute(update(AccessToken).where(AccessToken.id == token_id).values(last_used_at=at))
