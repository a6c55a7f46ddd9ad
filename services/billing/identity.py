"""Identity rules: users, organizations, memberships and access tokens (session and personal)."""

from __future__ import annotations

import time
from typing import NamedTuple

from sqlalchemy.ext.asyncio import AsyncSession

from services.billing import queries, ratelimit
from services.billing.deps import BillingDeps
from services.billing.models import AccessToken, Membership, Organization, User, outbox
from services.billing.plans import Catalogue, effective_plan_id
from services.contracts.v1 import billing_pb2, common_pb2, events_pb2
from services.kit import tokens
from services.kit.bus import SUBJECT_PRINCIPALS_CHANGED
from services.kit.db import Database
from services.kit.errors import ServiceError
from services.kit.identity import ROLES, owner_of_org, owner_of_user
from services.kit.outbox import add_event

# last_used_at is telemetry; writing it on every request would serialize hot tokens.
TOUCH_INTERVAL_SECONDS = 60
PRINCIPALS_CHANGED_EVENT_TYPE = "identity.principals_changed"


async def principals_changed(session: AsyncSession, user_ids: list[str], reason: str) -> None:
    """Stage the event that makes every gateway replica drop these users' cached principals
    (docs/accounts.md, "Revocation"): in the transaction of the change, so it leaves only if
    the change commits, and always does then."""
    message = events_pb2.PrincipalsChanged(user_ids=sorted(set(user_ids)), reason=reason)
    await add_event(session, outbox, SUBJECT_PRINCIPALS_CHANGED, PRINCIPALS_CHANGED_EVENT_TYPE, message)


async def principal_for(
    session: AsyncSession, user: User, token: AccessToken | None, catalogue: Catalogue | None = None
) -> common_pb2.Principal:
    principal = common_pb2.Principal(user_id=user.id, login=user.login)
    if token is not None:
        principal.token_id = token.id
        principal.token_kind = token.kind
    memberships = await queries.memberships_of(session, user.id)
    for membership, org in memberships:
        principal.memberships.add(org_id=org.id, org_name=org.name, role=membership.role)
    if catalogue is not None:
        # The user's plan for user-level limits: the best of their own and their teams' plans.
        owners = [owner_of_user(user.id)] + [owner_of_org(org.id) for _, org in memberships]
        rows = await queries.subscriptions_for(session, owners)
        principal.plan = catalogue.best([effective_plan_id(r.plan, r.status) for r in rows]).id
    return principal


class Validated(NamedTuple):
    principal: common_pb2.Principal
    expires_at: int
    counted: int | None  # the request's count in the token's rate-limit window, when asked to count


async def validate_token(
    db: queries.Executor, raw: str, catalogue: Catalogue | None = None, *, count_window: int | None = None
) -> Validated:
    """Resolve a bearer token; expired → not_authenticated, malformed/revoked → invalid_token.

    With ``count_window`` the same statement counts the request against the token's window.
    """
    if not raw:
        raise ServiceError("not_authenticated", "missing bearer token")
    if tokens.parse(raw) is None:
        raise ServiceError("invalid_token", "malformed token")
    now = int(time.time())
    row = await queries.token_identity(db, tokens.digest(raw), count_window=count_window, now=now)
    if row is None or row.revoked_at is not None:
        raise ServiceError("invalid_token", "token revoked or unknown")
    if row.expires_at and row.expires_at <= now:
        raise ServiceError("not_authenticated", "token expired")
    if now - row.last_used_at > TOUCH_INTERVAL_SECONDS:
        await queries.touch_token(db, row.token_id, now)
    principal = common_pb2.Principal(user_id=row.user_id, login=row.login, token_id=row.token_id, token_kind=row.kind)
    for org_id, org_name, role in row.memberships:
        principal.memberships.add(org_id=org_id, org_name=org_name, role=role)
    if catalogue is not None:
        # The user's plan for user-level limits: the best of their own and their teams' plans.
        principal.plan = catalogue.best([effective_plan_id(plan, status) for plan, status in row.plans]).id
    return Validated(principal, row.expires_at, row.token_count if count_window is not None else None)


async def authenticate(deps: BillingDeps, raw: str, client_ip: str, org_id: str, meter: bool) -> Validated:
    """``ValidateToken``, which every /v1 request comes to: single statements on an autocommit
    connection (no unit of work), and the token's rate-limit window counted by the statement
    that validates it."""
    s = deps.settings
    seconds = s.rate_limit_window_seconds
    window = ratelimit.window_of(time.time(), seconds) if meter else None
    async with deps.db.autocommit() as conn:
        try:
            found = await validate_token(conn, raw, deps.catalogue, count_window=window)
        except ServiceError as exc:
            if exc.code in ("invalid_token", "not_authenticated"):
                # Counted only on failure: a valid token costs nothing more on the hot path.
                await ratelimit.hit_address(
                    conn,
                    "authfail",
                    client_ip,
                    s.auth_failure_limit_per_minute,
                    seconds,
                    message="too many failed authentications from this address",
                )
            raise
        if found.counted is not None:
            counted = {ratelimit.token_key(found.principal): found.counted}
            await ratelimit.hit(conn, deps.catalogue, found.principal, org_id[:64], seconds, counted=counted)
    return found


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


def token_message(token: AccessToken) -> billing_pb2.PersonalToken:
    return billing_pb2.PersonalToken(
        id=token.id,
        name=token.name,
        prefix=token.prefix,
        created_at=token.created_at,
        expires_at=token.expires_at,
        last_used_at=token.last_used_at,
    )


async def create_personal_token(
    db: Database, user_id: str, name: str, expires_in_days: int, max_tokens: int
) -> tuple[AccessToken, str]:
    name = name.strip()
    if not name or len(name) > 100:
        raise ServiceError("validation_failed", "name must be 1 to 100 characters", {"field": "name"})
    if expires_in_days < 0 or expires_in_days > 3650:
        raise ServiceError("validation_failed", "expires_in_days must be 0 to 3650", {"field": "expires_in_days"})
    async with db.session() as session:
        user = await queries.lock_user(session, user_id)  # serializes the count check below per user
        if user is None:
            raise ServiceError("invalid_token", "token owner no longer exists")
        if len(await queries.personal_tokens(session, user_id)) >= max_tokens:
            raise ServiceError("conflict", f"at most {max_tokens} personal access tokens; revoke one first")
        return await issue_token(session, user, "pat", name, expires_in_days * 86400)


async def list_personal_tokens(db: Database, user_id: str) -> list[AccessToken]:
    async with db.session() as session:
        return list(await queries.personal_tokens(session, user_id))


async def revoke_personal_token(db: Database, user_id: str, token_id: str) -> None:
    async with db.session() as session:
        token = await queries.token_by_id(session, token_id) if token_id else None
        # Someone else's token and no token at all answer alike, so ids cannot be probed.
        if token is None or token.user_id != user_id or token.kind != "pat" or token.revoked_at is not None:
            raise ServiceError("not_found", "no such personal access token", {"token_id": token_id})
        await queries.revoke_token(session, token.id, int(time.time()))
        await principals_changed(session, [user_id], "token_revoked")


async def sign_out(db: Database, user_id: str, raw: str) -> None:
    """Revoke the presented token; the gateways drop the user's cached principals on the event."""
    async with db.session() as session:
        token = await queries.token_by_digest(session, tokens.digest(raw)) if raw else None
        if token is None or token.user_id != user_id:
            raise ServiceError("invalid_token", "the presented token is not the caller's")
        await queries.revoke_token(session, token.id, int(time.time()))
        await principals_changed(session, [user_id], "signed_out")


async def create_user(
    db: Database,
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
    async with db.session() as session:
        user = await queries.user_by_login(session, login)
        if user is None:
            user = User(login=login, email=email)
            session.add(user)
            await session.flush()
        org = None
        if org_name:
            org = await queries.org_by_name(session, org_name)
            if org is None:
                org = Organization(name=org_name)
                session.add(org)
                await session.flush()
            existing = {m.org_id: m for m in await queries.all_memberships_of(session, user.id)}
            if org.id not in existing:
                session.add(Membership(org_id=org.id, user_id=user.id, role=role))
                await session.flush()
            else:
                existing[org.id].status = "active"  # an administrator's word accepts a pending invitation
            await principals_changed(session, [user.id], "membership_changed")
        _, raw = await issue_token(session, user, "pat", token_name or "admin-created")
    return user, org, raw
