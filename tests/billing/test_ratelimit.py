"""Rate limits: fixed windows per token and per organization, from the plan, in PostgreSQL."""

from __future__ import annotations

import asyncio
import secrets
import time

import pytest

from services.billing import ratelimit
from services.billing.models import Subscription
from services.contracts.v1 import billing_pb2, common_pb2
from services.gateway.ratelimit import RateBudgets
from services.kit.errors import ServiceError
from tests.billing.conftest import Billing, unique


async def hit(billing: Billing, principal: common_pb2.Principal, org_id: str = "") -> billing_pb2.RateLimitResponse:
    return await billing.call("HitRateLimit", billing_pb2.RateLimitRequest(org_id=org_id), principal)


async def tiny(billing: Billing, owner: str) -> None:
    async with billing.db.session() as session:
        session.add(Subscription(owner=owner, plan="tiny", status="active", subscription_id=f"sub_{unique('r')}"))


async def test_token_limit_follows_the_plan(billing: Billing) -> None:
    token, me = await billing.user()
    await tiny(billing, f"user:{me.user_id}")
    me = await billing.principal(token)  # the principal now carries plan "tiny": 5 per minute
    assert me.plan == "tiny"
    if time.time() % 60 > 55:  # keep the five hits inside one window
        await asyncio.sleep(61 - time.time() % 60)
    remaining = [(await hit(billing, me)).remaining for _ in range(5)]
    assert remaining == [4, 3, 2, 1, 0]
    with pytest.raises(ServiceError) as err:
        await hit(billing, me)
    assert err.value.code == "rate_limited"
    assert err.value.http_status == 429
    assert 1 <= err.value.details["retry_after"] <= 60
    assert err.value.details["scope"] == "token"


async def test_an_organization_budget_is_shared_by_members_only(billing: Billing) -> None:
    org = unique("busy")
    _, admin = await billing.user(org=org)
    org_id = billing.org_id(admin, org)
    await tiny(billing, f"org:{org_id}")
    _, member = await billing.user(org=org, role="member")
    _, stranger = await billing.user()
    # A stranger naming the organization spends only their own (free, unlimited here) budget.
    for _ in range(10):
        await hit(billing, stranger, org_id)
    if time.time() % 60 > 55:
        await asyncio.sleep(61 - time.time() % 60)
    for caller in (admin, member, admin, member, admin):
        await hit(billing, caller, org_id)
    with pytest.raises(ServiceError) as err:
        await hit(billing, member, org_id)
    assert err.value.details["scope"] == "org"
    await hit(billing, member)  # requests about nothing in particular still pass


async def test_windows_roll_over_and_old_ones_are_purged(billing: Billing) -> None:
    _, me = await billing.user()
    async with billing.db.session() as session:
        first = await ratelimit.hit(session, billing.deps.catalogue, me, "", now=1_000_000.0)
        assert first.reset_at == 1_000_020  # the window of 60 s containing 1,000,000
        assert first.limit > 0
    async with billing.db.session() as session:
        await ratelimit.purge(session)
        counts = await ratelimit.queries.bump_counters(session, [f"token:{me.token_id}"], 1_000_000 // 60)
    assert counts[f"token:{me.token_id}"] == 1  # the old window was gone


async def validate(billing: Billing, token: str, org_id: str = "") -> billing_pb2.ValidateTokenResponse:
    request = billing_pb2.ValidateTokenRequest(token=token, meter=True, org_id=org_id)
    return await billing.call("ValidateToken", request)


async def counter(billing: Billing, key: str) -> int:
    async with billing.db.session() as session:
        counts = await ratelimit.queries.bump_counters(session, [key], ratelimit.window_of(time.time(), 60))
    return counts[key] - 1  # without the probe's own hit


async def test_validation_meters_each_request_once_in_the_same_statement(billing: Billing) -> None:
    token, me = await billing.user()
    await tiny(billing, f"user:{me.user_id}")
    if time.time() % 60 > 55:
        await asyncio.sleep(61 - time.time() % 60)
    for _ in range(5):
        await validate(billing, token)
    assert await counter(billing, ratelimit.token_key(me)) == 5
    with pytest.raises(ServiceError) as err:
        await validate(billing, token)
    assert err.value.code == "rate_limited"
    assert err.value.details["scope"] == "token"


async def test_a_refused_token_is_not_counted(billing: Billing) -> None:
    token, me = await billing.user()
    await billing.call("SignOut", billing_pb2.SignOutRequest(token=token), me)
    before = await counter(billing, ratelimit.token_key(me))
    for _ in range(3):
        with pytest.raises(ServiceError) as err:
            await validate(billing, token)
        assert err.value.code == "invalid_token"
    assert await counter(billing, ratelimit.token_key(me)) == before + 1  # the probe's own hit only


async def test_validation_also_meters_the_organization_a_member_names(billing: Billing) -> None:
    org = unique("metered")
    admin_token, admin = await billing.user(org=org)
    org_id = billing.org_id(admin, org)
    member_token, _ = await billing.user(org=org, role="member")
    await tiny(billing, f"org:{org_id}")  # 5 per minute for the organization and for each member's token
    if time.time() % 60 > 55:
        await asyncio.sleep(61 - time.time() % 60)
    for token in (admin_token, member_token, admin_token, member_token, admin_token):
        await validate(billing, token, org_id)
    with pytest.raises(ServiceError) as err:
        await validate(billing, member_token, org_id)  # this token's third request, the org's sixth
    assert err.value.details["scope"] == "org"
    await validate(billing, member_token)  # a request about nothing in particular still passes


async def test_sign_in_addresses_have_their_own_budget(billing: Billing) -> None:
    address = f"192.0.2.{secrets.randbelow(250)}-{unique('a')}"
    if time.time() % 60 > 55:
        await asyncio.sleep(61 - time.time() % 60)
    async with billing.db.autocommit() as conn:
        for _ in range(3):
            await ratelimit.hit_address(conn, "signin", address, 3)
        with pytest.raises(ServiceError) as err:
            await ratelimit.hit_address(conn, "signin", address, 3)
        await ratelimit.hit_address(conn, "signin", address, 0)  # 0: no limit
        await ratelimit.hit_address(conn, "signin", "", 3)  # no address known: nothing to count
    assert err.value.details["scope"] == "ip"
    assert err.value.http_status == 429


async def reserve(
    billing: Billing, principal: common_pb2.Principal, want: int, org_id: str = ""
) -> billing_pb2.RateBudgetResponse:
    return await billing.call("ReserveRateBudget", billing_pb2.RateBudgetRequest(org_id=org_id, want=want), principal)


async def test_concurrent_reservations_never_grant_past_the_limit(billing: Billing) -> None:
    org = unique("batch")
    token, me = await billing.user(org=org)
    org_id = billing.org_id(me, org)
    await tiny(billing, f"user:{me.user_id}")
    await tiny(billing, f"org:{org_id}")
    me = await billing.principal(token)
    if time.time() % 60 > 55:  # all reservations inside one window
        await asyncio.sleep(61 - time.time() % 60)
    replies = await asyncio.gather(*(reserve(billing, me, 2, org_id) for _ in range(8)))
    for scope in (f"token:{me.token_id}", f"org:{org_id}"):
        grants = [b.granted for r in replies for b in r.budgets if b.scope == scope]
        assert len(grants) == 8
        assert sum(grants) == 5  # the plan's limit: 16 asked, 5 granted, none refused with an error
        assert all(b.limit == 5 for r in replies for b in r.budgets)
    assert {r.reset_at for r in replies} == {replies[0].reset_at}
    assert all(b.granted == 0 for b in (await reserve(billing, me, 1, org_id)).budgets)


async def test_a_stranger_reserves_nothing_on_an_organization(billing: Billing) -> None:
    org = unique("closed")
    _, owner = await billing.user(org=org)
    _, stranger = await billing.user()
    reply = await reserve(billing, stranger, 3, billing.org_id(owner, org))
    assert [b.scope for b in reply.budgets] == [f"token:{stranger.token_id}"]  # not the organization's


async def test_a_gateway_does_not_spend_a_batch_drawn_under_the_old_plan(billing: Billing) -> None:
    # The gateway draws budget in batches (services/gateway/ratelimit.py); a downgrade to tiny must
    # limit the caller as soon as the principal carries the new plan, not after the old batch.
    async def reserve(p: common_pb2.Principal, org_id: str, want: int) -> billing_pb2.RateBudgetResponse:
        return await billing.call("ReserveRateBudget", billing_pb2.RateBudgetRequest(org_id=org_id, want=want), p)

    token, me = await billing.user()
    budgets = RateBudgets(reserve)
    if time.time() % 60 > 55:  # keep both draws inside one window
        await asyncio.sleep(61 - time.time() % 60)
    for _ in range(3):
        await budgets.take(me, "")
    assert budgets.reservations == 2  # one to learn the limit, then a batch of free's 120 // 20
    await tiny(billing, f"user:{me.user_id}")
    me = await billing.principal(token)
    assert me.plan == "tiny"
    with pytest.raises(ServiceError) as err:  # 7 drawn this window: over tiny's 5, though 4 are unspent
        await budgets.take(me, "")
    assert err.value.code == "rate_limited"
