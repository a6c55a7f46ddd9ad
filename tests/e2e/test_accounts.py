"""Accounts end to end, through the real gateway and billing processes: sign-in through the code
host's OAuth (stand-in), tokens, teams and seats, authorization across organizations, and
subscriptions driven by signed payment webhooks (Stripe stand-in: localstripe and friends)."""

from __future__ import annotations

import json
import secrets
import time
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.e2e.conftest import admin_token
from tests.e2e.harness import RunningSystem
from tests.e2e.test_code_host import wait_for
from tests.e2e.test_foundation import assert_error
from tests.standins import accounts as standins_module
from tests.standins.accounts import Identity, StandIns
from tests.standins.fixtures import sign, signed, stripe_event

pytestmark = pytest.mark.e2e
SECRET = "whsec_e2e"  # CR_GATEWAY_PAYMENT_WEBHOOK_SECRET of the e2e system


@pytest.fixture(scope="module")
def standins(system: RunningSystem) -> StandIns:
    return standins_module.start()  # the same stand-ins the system was configured with


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def name(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(3)}"


def me(http: httpx.Client, token: str) -> dict[str, Any]:
    reply = http.get("/v1/auth/validate", headers=bearer(token))
    assert reply.status_code == 200, reply.text
    return reply.json()


def org_of(http: httpx.Client, token: str) -> str:
    return me(http, token)["memberships"][0]["org_id"]


def sign_in(http: httpx.Client, standins: StandIns, who: Identity) -> dict[str, Any]:
    redirect = "https://dashboard.example.test/callback"
    started = http.get("/v1/auth/host/authorize", params={"redirect_uri": redirect})  # no bearer token
    assert started.status_code == 200, started.text
    standins.host.login_as(who)
    location = urlsplit(httpx.get(started.json()["authorize_url"], follow_redirects=False).headers["location"])
    query = parse_qs(location.query)
    assert query["state"] == [started.json()["state"]]
    reply = http.post("/v1/auth/host", json={"code": query["code"][0], "state": query["state"][0]})
    assert reply.status_code == 200, reply.text
    return reply.json()


def user(http: httpx.Client, standins: StandIns, org: str = "", role: str = "admin") -> str:
    """A session token of a new user signed in through the code host (in ``org`` with the host
    role ``admin`` → team-admin, ``member`` → member). Much faster than the admin CLI."""
    orgs = [(org, _org_ids.setdefault(org, secrets.randbelow(10**9) + 10**6), role)] if org else []
    who = Identity(login=name("user"), host_id=secrets.randbelow(10**9) + 10**6, orgs=orgs)
    return sign_in(http, standins, who)["access_token"]


_org_ids: dict[str, int] = {}


def webhook(http: httpx.Client, event: dict[str, Any], secret: str = SECRET, **kw: Any) -> httpx.Response:
    body, headers = signed(event, secret, **kw)
    return http.post("/webhooks/payment", content=body, headers=headers)


def status(http: httpx.Client, token: str, org_id: str = "") -> dict[str, Any]:
    reply = http.get("/v1/account/status", params={"org_id": org_id} if org_id else {}, headers=bearer(token))
    assert reply.status_code == 200, reply.text
    return reply.json()


def subscribe(http: httpx.Client, standins: StandIns, token: str, plan: str, trial: bool = False) -> dict[str, Any]:
    started = http.post("/v1/account/checkout", json={"plan": plan, "trial": trial}, headers=bearer(token))
    assert started.status_code == 200, started.text
    assert started.json()["url"].startswith(standins.url)
    session = standins.stripe.complete_checkout(started.json()["id"])
    reply = webhook(http, stripe_event("checkout.session.completed", session))
    assert reply.status_code == 200, reply.text
    assert reply.json() == {"received": True, "duplicate": False, "handled": True}
    return session


def test_sign_in_use_a_personal_token_and_sign_out(http: httpx.Client, standins: StandIns) -> None:
    who = Identity(login=name("octo"), host_id=secrets.randbelow(10**9) + 10**6, email="octo@example.test")
    signed_in = sign_in(http, standins, who)
    session_token = signed_in["access_token"]
    assert session_token.startswith("crs_")
    assert signed_in["token_type"] == "bearer"
    assert me(http, session_token)["token_kind"] == "session"

    created = http.post("/v1/account/tokens", json={"name": "ci", "expires_in_days": 30}, headers=bearer(session_token))
    assert created.status_code == 201, created.text
    pat = created.json()["secret"]
    assert pat.startswith("crp_")
    assert me(http, pat)["login"] == who.login
    listed = http.get("/v1/account/tokens", headers=bearer(pat)).json()["tokens"]
    assert [t["name"] for t in listed] == ["ci"]
    assert pat not in json.dumps(listed)
    assert datetime.fromisoformat(listed[0]["expires_at"]).timestamp() > time.time()  # RFC 3339 (#12)
    assert listed[0]["last_used_at"] is None or listed[0]["last_used_at"].endswith("Z")

    assert http.delete("/v1/auth/signout", headers=bearer(session_token)).status_code == 204
    refused_within(http, session_token)
    assert me(http, pat)["token_kind"] == "pat"  # signing out ends the session, not the PAT
    assert http.delete(f"/v1/account/tokens/{created.json()['token']['id']}", headers=bearer(pat)).status_code == 204
    refused_within(http, pat)


# docs/accounts.md, "Revocation": every gateway worker refuses a revoked token within this delay.
REVOCATION_BOUND_SECONDS = 1.0


def refused_within(http: httpx.Client, token: str) -> None:
    """The token is refused (401 invalid_token) on whichever worker answers, within the bound."""
    started = time.monotonic()
    while (reply := http.get("/v1/auth/validate", headers=bearer(token))).status_code == 200:
        assert time.monotonic() - started < REVOCATION_BOUND_SECONDS, "a revoked token still served"
    assert_error(reply, 401, "invalid_token")


def test_failed_oauth_is_oauth_failed(http: httpx.Client) -> None:
    assert_error(http.post("/v1/auth/host", json={"code": "x", "state": "forged"}), 401, "oauth_failed")


def test_an_organization_with_two_seats_refuses_a_third_member(system: RunningSystem, http: httpx.Client) -> None:
    token = admin_token(system, name("lead"), org=name("pair"))  # the admin CLI path, once
    org_id = org_of(http, token)
    seats = http.post(f"/v1/teams/{org_id}/seats", json={"seats": 2}, headers=bearer(token))
    assert seats.status_code == 200, seats.text
    assert seats.json()["subscription"]["seats"] == 2
    invited = http.post(f"/v1/teams/{org_id}/invite", json={"login": name("second")}, headers=bearer(token))
    assert invited.status_code == 201, invited.text
    assert invited.json()["member"]["status"] == "invited"
    body = assert_error(
        http.post(f"/v1/teams/{org_id}/invite", json={"login": name("third")}, headers=bearer(token)),
        409,
        "seat_limit_reached",
    )
    assert body["details"] == {"seats": 2, "members": 2}
    assert_error(http.post(f"/v1/teams/{org_id}/seats", json={"seats": 1}, headers=bearer(token)), 409, "conflict")


def test_an_invitee_accepts_through_the_gateway(system: RunningSystem, http: httpx.Client) -> None:
    admin = admin_token(system, name("host"), org=name("guild"))
    org_id = org_of(http, admin)
    login = name("guest")
    guest = admin_token(system, login)  # an account of their own, no membership yet
    assert http.post(f"/v1/teams/{org_id}/invite", json={"login": login}, headers=bearer(admin)).status_code == 201
    pending = http.get("/v1/invitations", headers=bearer(guest))
    assert pending.status_code == 200, pending.text
    assert [(i["org_id"], i["status"]) for i in pending.json()["invitations"]] == [(org_id, "invited")]
    assert http.get("/v1/auth/validate", headers=bearer(guest)).json()["memberships"] == []
    accepted = http.post(f"/v1/invitations/{org_id}/accept", headers=bearer(guest))
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["invitation"]["status"] == "active"
    # A worker may still hold the principal it validated before the acceptance: the change
    # reaches it as an event, within the documented bound (docs/accounts.md, "Revocation").
    started = time.monotonic()
    while not (memberships := http.get("/v1/auth/validate", headers=bearer(guest)).json()["memberships"]):
        assert time.monotonic() - started < REVOCATION_BOUND_SECONDS, "the new membership never showed"
    assert [(m["org_id"], m["role"]) for m in memberships] == [(org_id, "member")]
    assert_error(http.post(f"/v1/invitations/{org_id}/decline", headers=bearer(guest)), 404, "not_found")


def team_routes(org_id: str, member_id: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    return [
        ("GET", f"/v1/teams/{org_id}/members", None),
        ("POST", f"/v1/teams/{org_id}/invite", {"login": name("x")}),
        ("DELETE", f"/v1/teams/{org_id}/members/{member_id}", None),
        ("PATCH", f"/v1/teams/{org_id}/members/{member_id}/role", {"role": "viewer"}),
        ("POST", f"/v1/teams/{org_id}/seats", {"seats": 3}),
    ]


def test_a_member_gets_403_on_every_team_route(http: httpx.Client, standins: StandIns) -> None:
    org = name("crew")
    admin = user(http, standins, org)
    member = user(http, standins, org, role="member")
    org_id = org_of(http, admin)
    target = http.get(f"/v1/teams/{org_id}/members", headers=bearer(admin)).json()["members"][0]["id"]
    for method, path, body in team_routes(org_id, target):
        reply = http.request(method, path, json=body, headers=bearer(member))
        assert_error(reply, 403, "forbidden")


def test_a_user_of_one_organization_cannot_reach_another(http: httpx.Client, standins: StandIns) -> None:
    a_token = user(http, standins, name("org-a"))
    b_token = user(http, standins, name("org-b"))
    a_org, b_org = org_of(http, a_token), org_of(http, b_token)
    b_member = http.get(f"/v1/teams/{b_org}/members", headers=bearer(b_token)).json()["members"][0]["id"]
    a = bearer(a_token)
    for method, path, body in team_routes(b_org, b_member):
        assert_error(http.request(method, path, json=body, headers=a), 403, "forbidden")
    # B's member id under A's organization: not found, not "someone else's".
    assert_error(http.delete(f"/v1/teams/{a_org}/members/{b_member}", headers=a), 404, "not_found")
    for path in ("/v1/account/status", "/v1/account/usage"):
        assert_error(http.get(path, params={"org_id": b_org}, headers=a), 403, "forbidden")
    for path, body in (
        ("/v1/account/checkout", {"plan": "pro", "org_id": b_org}),
        ("/v1/account/billing-portal", {"org_id": b_org}),
        ("/v1/account/switch-plan", {"plan": "team", "org_id": b_org}),
        ("/v1/account/cancel", {"org_id": b_org}),
        ("/v1/account/reactivate", {"org_id": b_org}),
    ):
        assert_error(http.post(path, json=body, headers=a), 403, "forbidden")
    b_pat = http.post("/v1/account/tokens", json={"name": "b"}, headers=bearer(b_token)).json()["token"]["id"]
    assert_error(http.delete(f"/v1/account/tokens/{b_pat}", headers=a), 404, "not_found")


def test_subscription_follows_the_payment_webhooks(http: httpx.Client, standins: StandIns) -> None:
    token = user(http, standins)
    plans = http.get("/v1/account/plans", headers=bearer(token)).json()["plans"]
    assert next(p for p in plans if p["id"] == "pro")["price"]["unit_amount"] == 2000
    session = subscribe(http, standins, token, "pro", trial=True)
    current = status(http, token)
    assert (current["plan"], current["status"], current["trial_used"]) == ("pro", "trialing", True)
    assert datetime.fromisoformat(current["current_period_end"]).timestamp() > time.time()
    assert type(current["seats"]) is int  # was 5.0
    assert current["period_start"].endswith("Z")

    failed = stripe_event("invoice.payment_failed", {"customer": session["customer"]})
    failed["data"]["object"]["parent"]["subscription_details"]["subscription"] = session["subscription"]
    assert webhook(http, failed).status_code == 200
    assert status(http, token)["status"] == "past_due"

    deleted = stripe_event(
        "customer.subscription.deleted", {"customer": session["customer"], "id": session["subscription"]}
    )
    assert webhook(http, deleted).status_code == 200
    assert status(http, token)["status"] == "canceled"
    assert status(http, token)["effective_plan"] == "free"

    # Subscribing again is possible; a second trial is not.
    assert_error(
        http.post("/v1/account/checkout", json={"plan": "pro", "trial": True}, headers=bearer(token)),
        409,
        "trial_already_used",
    )


def test_replayed_unsigned_or_tampered_webhooks_change_nothing(http: httpx.Client, standins: StandIns) -> None:
    token = user(http, standins)
    session = subscribe(http, standins, token, "pro")
    failed = stripe_event("invoice.payment_failed", {"customer": session["customer"]})
    failed["data"]["object"]["parent"]["subscription_details"]["subscription"] = session["subscription"]
    body, headers = signed(failed, SECRET)

    unsigned = http.post("/webhooks/payment", content=body, headers={"Content-Type": "application/json"})
    assert_error(unsigned, 400, "invalid_signature")
    assert_error(webhook(http, failed, secret="whsec_wrong"), 400, "invalid_signature")
    assert_error(webhook(http, failed, timestamp=int(time.time()) - 3600), 400, "invalid_signature")  # an old capture
    tampered = body.replace(b'"open"', b'"paid"')
    assert_error(http.post("/webhooks/payment", content=tampered, headers=headers), 400, "invalid_signature")
    garbage = b"{not json"  # correctly signed, but not JSON
    garbage_headers = {"Stripe-Signature": sign(garbage, SECRET), "Content-Type": "application/json"}
    assert_error(http.post("/webhooks/payment", content=garbage, headers=garbage_headers), 400, "invalid_signature")
    assert status(http, token)["status"] == "active"

    first = http.post(
        "/webhooks/payment", content=body, headers={**headers, "Payment-Signature": headers["Stripe-Signature"]}
    )
    assert first.json()["duplicate"] is False
    assert status(http, token)["status"] == "past_due"
    # The subscription recovers; then the same failure notice is delivered again.
    standins.stripe.update_subscription(session["subscription"], cancel_at_period_end=False)
    recovered = stripe_event("customer.subscription.updated", standins.stripe.subscription(session["subscription"]))
    assert webhook(http, recovered).status_code == 200
    assert status(http, token)["status"] == "active"
    replay = http.post("/webhooks/payment", content=body, headers=headers)
    assert replay.status_code == 200
    assert replay.json()["duplicate"] is True
    assert status(http, token)["status"] == "active"


def tiny_in_force(http: httpx.Client, token: str) -> bool:
    reply = http.get("/v1/auth/validate", headers=bearer(token))
    return reply.status_code == 429 or reply.json()["plan"] == "tiny"


def test_rate_limit_answers_429_with_retry_after(http: httpx.Client, standins: StandIns) -> None:
    token = user(http, standins)
    subscribe(http, standins, token, "tiny")  # 5 requests a minute
    # The gateway's principal cache takes the new plan within its bound (docs/accounts.md); the
    # requests before then are limited by the old plan, and none after spends what it granted
    # (so the new plan may show as its 429 at once: what the old plan drew counts in the window).
    wait_for(lambda: tiny_in_force(http, token), timeout=10, what="the new plan in the gateway")
    if time.time() % 60 > 57:  # keep the burst inside one window
        time.sleep(61 - time.time() % 60)
    codes = [http.get("/v1/auth/validate", headers=bearer(token)).status_code for _ in range(6)]
    assert codes[:5] == [200] * 5 or 429 in codes
    refused = http.get("/v1/auth/validate", headers=bearer(token))
    body = assert_error(refused, 429, "rate_limited")
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert body["details"]["scope"] == "token"
    # Counts and times are JSON integers (a Struct crossing gRPC made them 5.0 before: #22).
    assert all(type(body["details"][k]) is int for k in ("limit", "retry_after", "reset_at")), body


def test_ai_chat_streams_through_the_gateway(http: httpx.Client, standins: StandIns) -> None:
    token = user(http, standins)
    body = {"stream": True, "messages": [{"role": "user", "content": "hello there"}]}
    with http.stream("POST", "/v1/ai/chat", json=body, headers=bearer(token)) as reply:
        assert reply.status_code == 200
        lines = [line for line in reply.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    usage = http.get("/v1/account/usage", headers=bearer(token)).json()
    assert usage["usage"]["ai_tokens"]["used"] > 0


def test_sign_in_is_rate_limited_per_client_address(http: httpx.Client) -> None:
    # The gateway trusts X-Forwarded-For from loopback (CR_GATEWAY_FORWARDED_ALLOW_IPS), as it
    # would from its own reverse proxy: these requests come from two distinct clients.
    crowd = {"X-Forwarded-For": "203.0.113.9"}
    refused = None
    for _ in range(2):  # a second round when the first straddled a window boundary
        for _ in range(31):  # one more than CR_BILLING_SIGNIN_RATE_LIMIT_PER_MINUTE (default 30)
            reply = http.post("/v1/auth/host", json={"code": "x", "state": "y"}, headers=crowd)
            if reply.status_code == 429:
                refused = reply
                break
            assert_error(reply, 401, "oauth_failed")  # counted, then refused on its merits
        if refused is not None:
            break
    assert refused is not None
    assert_error(refused, 429, "rate_limited")
    assert refused.json()["details"]["scope"] == "ip"
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert http.get("/v1/auth/host/authorize", headers=crowd).status_code == 429  # both routes share it
    other = http.get("/v1/auth/host/authorize", headers={"X-Forwarded-For": "198.51.100.4"})
    assert other.status_code == 200
