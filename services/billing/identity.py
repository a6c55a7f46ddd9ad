"""Identity rules: users, organizations, memberships and access tokens."""

from __future__ import annotations

import time

from sqlalchemy.ext.asyncio import AsyncSession

from services.billing import repository as repo
from services.billing.models import AccessToken, Membership, Organization, User
from services.contracts.v1 import common_pb2
from services.kit import tokens
from services.kit.errors import ServiceError
from services.kit.identity import ROLES

# last_used_at is telemetry; writing it on every request would serialize hot tokens.
TOUCH_INTERVAL_SECONDS = 60


async def principal_for(session: AsyncSession, user: User, token: AccessToken | None) -> common_pb2.Principal:
    principal = common_pb2.Principal(user_id=user.id, login=user.login)
    if token is not None:
        principal.token_id = token.id
        principal.token_kind = token.kind
    for membership, org in await repo.memberships_of(session, user.id):
        principal.memberships.add(org_id=org.id, org_name=org.name, role=membership.role)
    return principal


async def validate_token(session: AsyncSession, raw: str) -> tuple[common_pb2.Principal, int]:
    """Resolve a bearer token; expired → not_authenticated, malformed/revoked → invalid_token."""
    if not raw:
        raise ServiceError("not_authenticated", "missing bearer token")
    if tokens.parse(raw) is None:
        raise ServiceError("invalid_token", "malformed token")
    token = await repo.token_by_digest(session, tokens.digest(raw))
    if token is None or token.revoked_at is not None:
        raise ServiceError("invalid_token", "token revoked or unknown")
    now = int(time.time())
    if token.expires_at and token.expires_at <= now:
        raise ServiceError("not_authenticated", "token expired")
    user = await repo.user_by_id(session, token.user_id)
    if user is None:
        raise ServiceError("invalid_token", "token owner no longer exists")
    if now - token.last_used_at > TOUCH_INTERVAL_SECONDS:
        await repo.touch_token(session, token.id, now)
    return await principal_for(session, user, token), token.expires_at


async def issue_token(
    session: AsyncSession, user: User, kind: str, name: str = "", lifetime_seconds: int = 0
) -> tuple[AccessToken, str]:
    raw = tokens.generate(tokens.SESSION_PREFIX if kind == "session" else tokens.PERSONAL_PREFIX)
    token = AccessToken(
        user_id=user.id,
        kind=kind,
        name=name,
        digest=tokens.digest(raw),
        prefix=raw[:8],
        expires_at=int(time.time()) + lifetime_seconds if lifetime_seconds else 0,
    )
    session.add(token)
    await session.flush()
    return token, raw


async def create_user(
    session: AsyncSession,
    login: str,
    email: str = "",
    org_name: str = "",
    org_role: str = "",
    token_name: str = "admin-created",
) -> tuple[User, Organization | None, str]:
    """The admin path: a user (optionally in an organization) and a personal access token."""
    if not login or len(login) > 100:
        raise ServiceError("validation_failed", "login is required", {"field": "login"})
    role = org_role or "team-admin"
    if role not in ROLES:
        raise ServiceError("validation_failed", f"role must be one of {ROLES}", {"field": "org_role"})
    user = await repo.user_by_login(session, login)
    if user is None:
        user = User(login=login, email=email)
        session.add(user)
        await session.flush()
    org = None
    if org_name:
        org = await repo.org_by_name(session, org_name)
        if org is None:
            org = Organization(name=org_name)
            session.add(org)
            await session.flush()
        existing = {m.org_id for m, _ in await repo.memberships_of(session, user.id)}
        if org.id not in existing:
            session.add(Membership(org_id=org.id, user_id=user.id, role=role))
            await session.flush()
    _, raw = await issue_token(session, user, "pat", token_name)
    return user, org, raw
