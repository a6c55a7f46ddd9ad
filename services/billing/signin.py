"""Sign-in through the code host's OAuth web flow: a single-use ``state`` we issue, the code
exchanged server-side, the user and their organizations mirrored, a session token issued."""

from __future__ import annotations

import logging
import secrets
import time
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncSession

from services.billing import queries, ratelimit
from services.billing.codehost import HostOrg, HostUser
from services.billing.deps import BillingDeps
from services.billing.identity import issue_token, principal_for, principals_changed
from services.billing.models import Membership, Organization, User
from services.contracts.v1 import billing_pb2
from services.kit import tokens
from services.kit.errors import ServiceError

log = logging.getLogger(__name__)
HOST_ROLES = {"admin": "team-admin", "member": "member"}


def _check_redirect(uri: str) -> str:
    if not uri:
        return ""
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https") or not parts.netloc or len(uri) > 2048:
        raise ServiceError(
            "validation_failed", "redirect_uri must be an absolute http(s) URL", {"field": "redirect_uri"}
        )
    return uri


async def _meter(deps: BillingDeps, client_ip: str) -> None:
    """Sign-in carries no token: it is rate limited per client address, on an autocommit
    connection before any unit of work."""
    s = deps.settings
    async with deps.db.autocommit() as conn:
        await ratelimit.hit_address(
            conn, "signin", client_ip, s.signin_rate_limit_per_minute, s.rate_limit_window_seconds
        )


async def start(deps: BillingDeps, client_ip: str, redirect_uri: str) -> billing_pb2.StartHostSignInResponse:
    s, host = deps.settings, deps.host
    await _meter(deps, client_ip)
    if not host.configured:
        raise ServiceError("not_configured", "code-host sign-in is not configured (CR_BILLING_HOST_CLIENT_ID/SECRET)")
    redirect = _check_redirect(redirect_uri) or s.oauth_redirect_uri
    state = secrets.token_urlsafe(32)
    now = int(time.time())
    async with deps.db.session() as session:
        await queries.purge_oauth_states(session, now)  # keeps the table to the states still in flight
        # Only the digest is stored, like tokens: a database leak does not let anyone finish a flow.
        await queries.add_oauth_state(session, tokens.digest(state), redirect, now + s.oauth_state_ttl_seconds)
    return billing_pb2.StartHostSignInResponse(authorize_url=host.authorize_url(state, redirect), state=state)


async def complete(deps: BillingDeps, client_ip: str, code: str, state: str) -> billing_pb2.SignInResponse:
    """Three steps, deliberately in separate transactions: the state is consumed and committed
    first (a failed exchange cannot be retried with it), the host is called outside any
    transaction, then the user is written."""
    host, lifetime_seconds = deps.host, deps.settings.session_lifetime_hours * 3600
    await _meter(deps, client_ip)
    if not host.configured:
        raise ServiceError("not_configured", "code-host sign-in is not configured")
    if not code or not state:
        raise ServiceError("oauth_failed", "code and state are required", {"reason": "missing_parameter"})
    async with deps.db.session() as session:
        issued = await queries.take_oauth_state(session, tokens.digest(state))
    if issued is None:
        raise ServiceError("oauth_failed", "state does not match a sign-in we started", {"reason": "state_mismatch"})
    if issued.expires_at < int(time.time()):
        raise ServiceError("oauth_failed", "the sign-in took too long; start again", {"reason": "state_expired"})
    host_token = await host.exchange(code, issued.redirect_uri)
    host_user = await host.user(host_token)
    async with deps.db.session() as session:
        user = await upsert_user(session, host_user)
        for host_org in host_user.orgs:
            await join_host_org(session, user, host_org)
        await activate_invitations(session, user)
        token, raw = await issue_token(session, user, "session", "sign-in", lifetime_seconds)
        principal = await principal_for(session, user, token, deps.catalogue)
        # Memberships the sign-in added or activated: the user's other tokens see them too.
        await principals_changed(session, [user.id], "membership_changed")
    deps.wake()
    return billing_pb2.SignInResponse(access_token=raw, expires_at=token.expires_at, principal=principal)


async def _move_aside(session: AsyncSession, holder: User) -> None:
    # The host reassigned this login (renames free logins up); the old holder keeps its id.
    holder.login = f"{holder.login}~{holder.host_user_id or holder.id[:8]}"[:100]
    await principals_changed(session, [holder.id], "login_changed")
    await session.flush()


async def upsert_user(session: AsyncSession, host_user: HostUser) -> User:
    user = await queries.user_by_host_id(session, host_user.host_id)
    holder = await queries.user_by_login_ci(session, host_user.login)
    if user is None and holder is not None and holder.host_user_id is None:
        # A user created by an administrator or an invitation under this login: link it.
        user, holder = holder, None
    if holder is not None and (user is None or holder.id != user.id):
        await _move_aside(session, holder)
    if user is None:
        user = User(login=host_user.login, email=host_user.email, host_user_id=host_user.host_id)
        session.add(user)
    else:
        user.host_user_id = host_user.host_id
        user.login = host_user.login
        user.email = host_user.email or user.email
    await session.flush()
    return user


async def join_host_org(session: AsyncSession, user: User, host_org: HostOrg) -> None:
    """Mirror a host organization and the user's place in it, within the seat count."""
    org = await queries.org_by_host_id(session, host_org.host_id)
    if org is None:
        org = await queries.org_by_name(session, host_org.login)
        if org is not None and org.host_org_id not in (None, host_org.host_id):
            log.warning("organization name %s is taken by another host organization", host_org.login)
            return
        if org is None:
            org = Organization(name=host_org.login, host_org_id=host_org.host_id)
            session.add(org)
            await session.flush()
        org.host_org_id = host_org.host_id
    locked = await queries.lock_org(session, org.id)
    assert locked is not None
    if await queries.membership_of_user(session, org.id, user.id) is not None:
        return  # roles are managed here once a member exists; invitations activate below
    if await queries.seated_count(session, org.id) >= locked.seats:
        log.info("not adding %s to %s: all %d seats taken", user.login, org.name, locked.seats)
        return
    session.add(Membership(org_id=org.id, user_id=user.id, role=HOST_ROLES.get(host_org.role, "member")))
    await session.flush()


async def activate_invitations(session: AsyncSession, user: User) -> None:
    # An invitation is addressed to a login; signing in through the host proves the login.
    for membership in await queries.all_memberships_of(session, user.id):
        if membership.status == "invited":
            membership.status = "active"
    await session.flush()
