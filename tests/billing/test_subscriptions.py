"""Plans and subscriptions against the Stripe stand-in (localstripe plus checkout/portal/prices)."""

from __future__ import annotations

import re

import pytest

from services.contracts.v1 import billing_pb2
from services.kit.errors import ServiceError
from tests.billing.conftest import Billing, unique
from tests.billing.support import checkout, status, subscribe
from tests.standins.accounts import StandIns


async def expect(code: str, call: object) -> ServiceError:
    with pytest.raises(ServiceError) as err:
        await call  # type: ignore[misc]
    assert err.value.code == code, err.value
    return err.value


async def test_plans_carry_live_price_detail_and_are_cached(billing: Billing, standins: StandIns) -> None:
    _, me = await billing.user()
    plans = (await billing.call("ListPlans", billing_pb2.ListPlansRequest(), me)).plans
    by_id = {p.id: p for p in plans}
    assert [p.id for p in plans] == ["free", "tiny", "pro", "team"]
    assert not by_id["free"].HasField("price")
    assert by_id["free"].paid is False
    assert by_id["pro"].paid is True
    assert by_id["pro"].price_unavailable == ""
    assert by_id["pro"].price.unit_amount == 2000
    assert by_id["pro"].price.currency == "usd"
    assert by_id["pro"].price.interval == "month"
    assert by_id["pro"].caps.analyses == 5000
    assert by_id["tiny"].rate_limit_per_minute == 5
    standins.stripe.prices["price_standin_pro"]["unit_amount"] = 9999
    try:
        again = (await billing.call("ListPlans", billing_pb2.ListPlansRequest(), me)).plans
        assert next(p for p in again if p.id == "pro").price.unit_amount == 2000  # from the cache
    finally:
        standins.stripe.prices["price_standin_pro"]["unit_amount"] = 2000


async def test_paid_plans_without_a_configured_price_say_so(default_billing: Billing) -> None:
    _, me = await default_billing.user()
    reply = await default_billing.call("ListPlans", billing_pb2.ListPlansRequest(), me)
    by_id = {p.id: p for p in reply.plans}
    assert (by_id["free"].paid, by_id["free"].price_available, by_id["free"].price_unavailable) == (False, True, "")
    for plan in ("pro", "team"):
        shown = by_id[plan]
        assert shown.paid is True
        assert not shown.HasField("price")
        assert shown.price_available is False
        assert shown.price_unavailable == "no_price_configured"
    await expect("not_configured", checkout(default_billing, me, "pro"))


async def test_checkout_completed_sets_plan_period_and_trial(billing: Billing, standins: StandIns) -> None:
    token, me = await billing.user()
    before = await status(billing, me)
    assert (before.plan, before.status, before.customer_linked) == ("free", "active", False)
    session = await subscribe(billing, standins, me, "pro", trial=True)
    after = await status(billing, me)
    assert after.plan == after.effective_plan == "pro"
    assert after.status == "trialing"
    assert after.customer_linked is True
    assert after.current_period_end.seconds > after.period_start.seconds > 0
    assert after.trial_used is True
    assert after.usage.analyses == billing_pb2.MetricUsage(used=0, cap=5000, remaining=5000)
    assert (await billing.principal(token)).plan == "pro"  # the plan behind the user's own limits
    provider = standins.stripe.subscription(session["subscription"])
    assert provider["metadata"]["owner"] == f"user:{me.user_id}"


async def test_a_trial_is_given_once_per_user(billing: Billing, standins: StandIns) -> None:
    org = unique("trialists")
    _, me = await billing.user(org=org)
    await subscribe(billing, standins, me, "pro", trial=True)
    # Not again, neither for the same account nor for a team the user pays for.
    await expect("trial_already_used", checkout(billing, me, "team", trial=True))
    error = await expect(
        "trial_already_used", checkout(billing, me, "team", org_id=billing.org_id(me, org), trial=True)
    )
    assert error.http_status == 409
    # Without a trial the team subscription is fine.
    started = await checkout(billing, me, "team", org_id=billing.org_id(me, org))
    assert started.url.startswith(standins.url)


async def test_a_second_subscription_is_refused(billing: Billing, standins: StandIns) -> None:
    _, me = await billing.user()
    await subscribe(billing, standins, me, "pro")
    await expect("conflict", checkout(billing, me, "team"))


async def test_checkout_retried_gets_the_same_session(billing: Billing) -> None:
    _, me = await billing.user()
    first = await checkout(billing, me, "pro")
    second = await checkout(billing, me, "pro")
    assert first.id == second.id  # same operation, same Idempotency-Key, replayed by the provider
    other = await checkout(billing, me, "team")
    assert other.id != first.id


async def test_unknown_and_free_plans_are_not_for_sale(billing: Billing) -> None:
    _, me = await billing.user()
    assert (await expect("validation_failed", checkout(billing, me, "platinum"))).details == {"field": "plan"}
    await expect("validation_failed", checkout(billing, me, "free"))
    await expect("validation_failed", checkout(billing, me, "tiny", trial=True))  # tiny has no trial


async def test_switch_plan_changes_the_provider_price(billing: Billing, standins: StandIns) -> None:
    _, me = await billing.user()
    session = await subscribe(billing, standins, me, "pro")
    switched = await billing.call("SwitchPlan", billing_pb2.SwitchPlanRequest(plan="team"), me)
    assert switched.subscription.plan == "team"
    item = standins.stripe.subscription(session["subscription"])["items"]["data"][0]
    assert item["price"]["id"] == "price_standin_team"
    assert (await status(billing, me)).plan == "team"


async def test_cancel_and_reactivate(billing: Billing, standins: StandIns) -> None:
    _, me = await billing.user()
    session = await subscribe(billing, standins, me, "pro")
    canceled = await billing.call("CancelSubscription", billing_pb2.AccountRequest(), me)
    assert canceled.subscription.cancel_at_period_end is True
    assert canceled.subscription.status == "active"  # until the period ends
    assert standins.stripe.subscription(session["subscription"])["cancel_at_period_end"] is True
    again = await billing.call("ReactivateSubscription", billing_pb2.AccountRequest(), me)
    assert again.subscription.cancel_at_period_end is False
    assert standins.stripe.subscription(session["subscription"])["cancel_at_period_end"] is False
    assert (await status(billing, me)).cancel_at_period_end is False


async def test_actions_without_a_subscription_need_a_plan(billing: Billing) -> None:
    _, me = await billing.user()
    for method in ("CancelSubscription", "ReactivateSubscription", "OpenBillingPortal"):
        await expect("plan_required", billing.call(method, billing_pb2.AccountRequest(), me))
    await expect("plan_required", billing.call("SwitchPlan", billing_pb2.SwitchPlanRequest(plan="team"), me))


async def test_billing_portal_opens_for_the_customer(billing: Billing, standins: StandIns) -> None:
    _, me = await billing.user()
    session = await subscribe(billing, standins, me, "pro")
    portal = await billing.call("OpenBillingPortal", billing_pb2.AccountRequest(), me)
    assert portal.url.startswith(f"{standins.url}/stripe/portal/bps_")
    assert portal.return_url == billing.deps.settings.portal_return_url
    assert session["customer"]


async def test_seat_changes_follow_through_the_provider(billing: Billing, standins: StandIns) -> None:
    org = unique("seated")
    _, admin = await billing.user(org=org)
    org_id = billing.org_id(admin, org)
    session = await subscribe(billing, standins, admin, "team", org_id=org_id, seats=3)
    assert (await status(billing, admin, org_id)).seats == 3
    changed = await billing.call("ChangeSeats", billing_pb2.ChangeSeatsRequest(org_id=org_id, seats=7), admin)
    assert changed.subscription.seats == 7
    assert standins.stripe.subscription(session["subscription"])["items"]["data"][0]["quantity"] == 7
    members = await billing.call("ListMembers", billing_pb2.ListMembersRequest(org_id=org_id), admin)
    assert members.seats == 7


async def test_organization_subscriptions_are_for_team_admins(billing: Billing, standins: StandIns) -> None:
    org = unique("ranks")
    _, admin = await billing.user(org=org)
    org_id = billing.org_id(admin, org)
    await subscribe(billing, standins, admin, "team", org_id=org_id)
    _, viewer = await billing.user(org=org, role="viewer")
    _, stranger = await billing.user()
    for caller in (viewer, stranger):
        await expect("forbidden", checkout(billing, caller, "pro", org_id=org_id))
        for method in ("CancelSubscription", "ReactivateSubscription", "OpenBillingPortal"):
            await expect("forbidden", billing.call(method, billing_pb2.AccountRequest(org_id=org_id), caller))
        await expect(
            "forbidden", billing.call("SwitchPlan", billing_pb2.SwitchPlanRequest(org_id=org_id, plan="pro"), caller)
        )
    # Exempt: any member reads the plan and usage; a stranger does not.
    assert (await status(billing, viewer, org_id)).plan == "team"
    usage = await billing.call("GetUsage", billing_pb2.AccountRequest(org_id=org_id), viewer)
    assert usage.owner == f"org:{org_id}"
    await expect("forbidden", status(billing, stranger, org_id))


async def test_switch_plan_checks_the_callers_role_before_the_plan(billing: Billing) -> None:
    # Before: the plan was checked first, so a stranger or a plain member got 422 (unknown or
    # free plan) or 501 (a plan without a price) and learnt about the catalogue, not 403.
    org = unique("order")
    _, admin = await billing.user(org=org)
    org_id = billing.org_id(admin, org)
    _, member = await billing.user(org=org, role="member")
    _, stranger = await billing.user()
    for caller in (member, stranger):
        for plan in ("platinum", "free", "pro"):
            request = billing_pb2.SwitchPlanRequest(org_id=org_id, plan=plan)
            await expect("forbidden", billing.call("SwitchPlan", request, caller))
    await expect(
        "validation_failed",
        billing.call("SwitchPlan", billing_pb2.SwitchPlanRequest(org_id=org_id, plan="platinum"), admin),
    )


async def test_every_mutating_provider_call_carries_our_idempotency_key(billing: Billing, standins: StandIns) -> None:
    _, me = await billing.user()
    await subscribe(billing, standins, me, "pro")
    await billing.call("CancelSubscription", billing_pb2.AccountRequest(), me)
    # Only the service goes through the stand-in (the "customer pays" helper talks to localstripe).
    assert {path.split("/")[3] for _, path, _ in standins.stripe.mutations} >= {
        "customers",
        "checkout",
        "subscriptions",
    }
    for method, path, key in standins.stripe.mutations:
        # Ours name the operation ("checkout.create:..."); the SDK's own fallback would be a bare UUID.
        assert re.match(r"^[a-z_.]+:", key), (method, path, key)
