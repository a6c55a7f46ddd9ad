"""Sign-in through the code host's OAuth web flow, against the code-host stand-in."""

from __future__ import annotations

import secrets
import time
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from sqlalchemy import update

from services.billing.models import OAuthState
from services.contracts.v1 import billing_pb2
from services.kit import tokens
from services.kit.errors import ServiceError
from tests.billing.conftest import Billing, unique
from tests.standins.accounts import Identity, StandIns

REDIRECT = "https://app.example.test/callback"


def identity(**kw: object) -> Identity:
    fields: dict = {"login": unique("octo"), "host_id": secrets.randbelow(10**9) + 1000, "email": "o@example.test"}
    fields.update(kw)
    return Identity(**fields)


async def authorize(billing: Billing, standins: StandIns, who: Identity) -> tuple[str, str]:
    """Start a sign-in and follow the authorize URL as a browser: the code and state come back."""
    started = await billing.call("StartHostSignIn", billing_pb2.StartHostSignInRequest(redirect_uri=REDIRECT))
    assert started.authorize_url.startswith(f"{standins.url}/github/login/oauth/authorize?")
    standins.host.login_as(who)
    async with httpx.AsyncClient() as client:
        reply = await client.get(started.authorize_url, follow_redirects=False)
    assert reply.status_code == 302
    location = urlsplit(reply.headers["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == REDIRECT
    query = parse_qs(location.query)
    assert query["state"] == [started.state]
    return query["code"][0], started.state


async def sign_in(billing: Billing, standins: StandIns, who: Identity) -> billing_pb2.SignInResponse:
    code, state = await authorize(billing, standins, who)
    return await billing.call("SignInWithHost", billing_pb2.SignInWithHostRequest(code=code, state=state))


async def test_sign_in_creates_the_user_and_issues_a_session_token(billing: Billing, standins: StandIns) -> None:
    who = identity(orgs=[(unique("acme"), secrets.randbelow(10**9), "admin")])
    signed = await sign_in(billing, standins, who)
    assert tokens.parse(signed.access_token) == "crs"
    lifetime = billing.deps.settings.session_lifetime_hours * 3600
    principal = await billing.principal(signed.access_token)
    assert principal.login == who.login
    assert principal.token_kind == "session"
    assert [(m.org_name, m.role) for m in principal.memberships] == [(who.orgs[0][0], "team-admin")]
    assert signed.expires_at - lifetime <= time.time() <= signed.expires_at - lifetime + 5
    exchange = standins.host.exchanges[-1]
    assert exchange["redirect_uri"] == REDIRECT
    assert exchange["client_secret"] == billing.deps.settings.host_client_secret


async def test_second_sign_in_updates_the_same_user(billing: Billing, standins: StandIns) -> None:
    who = identity()
    first = await sign_in(billing, standins, who)
    who.login = unique("renamed")
    second = await sign_in(billing, standins, who)
    assert second.principal.user_id == first.principal.user_id
    assert second.principal.login == who.login


async def test_host_member_role_maps_to_member(billing: Billing, standins: StandIns) -> None:
    org = (unique("guild"), secrets.randbelow(10**9), "admin")
    admin = await sign_in(billing, standins, identity(orgs=[org]))
    member = await sign_in(billing, standins, identity(orgs=[(org[0], org[1], "member")]))
    assert [m.role for m in member.principal.memberships] == ["member"]
    assert member.principal.memberships[0].org_id == admin.principal.memberships[0].org_id


async def test_invitation_is_accepted_by_signing_in(billing: Billing, standins: StandIns) -> None:
    org = unique("inviters")
    _, admin = await billing.user(org=org)
    invitee = identity()
    await billing.call(
        "InviteMember",
        billing_pb2.InviteMemberRequest(org_id=billing.org_id(admin, org), login=invitee.login.upper(), role="viewer"),
        admin,
    )
    signed = await sign_in(billing, standins, invitee)
    assert [(m.org_name, m.role) for m in signed.principal.memberships] == [(org, "viewer")]


async def test_state_we_did_not_issue_is_refused(billing: Billing, standins: StandIns) -> None:
    code, _ = await authorize(billing, standins, identity())
    with pytest.raises(ServiceError) as err:
        await billing.call("SignInWithHost", billing_pb2.SignInWithHostRequest(code=code, state="forged-state"))
    assert err.value.code == "oauth_failed"
    assert err.value.details["reason"] == "state_mismatch"
    assert err.value.http_status == 401


async def test_state_works_once(billing: Billing, standins: StandIns) -> None:
    who = identity()
    code, state = await authorize(billing, standins, who)
    await billing.call("SignInWithHost", billing_pb2.SignInWithHostRequest(code=code, state=state))
    with pytest.raises(ServiceError) as err:
        await billing.call(
            "SignInWithHost", billing_pb2.SignInWithHostRequest(code=standins.host.issue_code(who), state=state)
        )
    assert err.value.details["reason"] == "state_mismatch"


async def test_expired_state_is_refused(billing: Billing, standins: StandIns) -> None:
    code, state = await authorize(billing, standins, identity())
    async with billing.db.session() as session:
        await session.execute(
            update(OAuthState).where(OAuthState.digest == tokens.digest(state)).values(expires_at=10**9)
        )
    with pytest.raises(ServiceError) as err:
        await billing.call("SignInWithHost", billing_pb2.SignInWithHostRequest(code=code, state=state))
    assert err.value.details["reason"] == "state_expired"


async def test_refused_code_is_oauth_failed(billing: Billing, standins: StandIns) -> None:
    _, state = await authorize(billing, standins, identity())
    with pytest.raises(ServiceError) as err:
        await billing.call("SignInWithHost", billing_pb2.SignInWithHostRequest(code="not-a-code", state=state))
    assert err.value.code == "oauth_failed"
    assert err.value.details["reason"] == "bad_verification_code"


async def test_grant_without_the_required_scope_is_oauth_failed(billing: Billing, standins: StandIns) -> None:
    # The published example grant ("repo,gist") lacks read:org.
    with pytest.raises(ServiceError) as err:
        await sign_in(billing, standins, identity(scope="repo,gist"))
    assert err.value.code == "oauth_failed"
    assert err.value.details == {"reason": "missing_scope", "missing": ["read:org"]}


async def test_broader_scope_satisfies_a_narrower_one(billing: Billing, standins: StandIns) -> None:
    signed = await sign_in(billing, standins, identity(scope="admin:org"))
    assert signed.access_token


async def test_redirect_uri_must_be_absolute_http(billing: Billing) -> None:
    with pytest.raises(ServiceError) as err:
        await billing.call("StartHostSignIn", billing_pb2.StartHostSignInRequest(redirect_uri="javascript:alert(1)"))
    assert err.value.code == "validation_failed"
