"""Payment-provider events: the spec's four, exactly once, never rolled back by a stale one."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import func, select

from services.billing.models import PaymentEvent, Subscription, outbox
from services.kit.errors import ServiceError
from services.kit.grpc_client import MAX_ATTEMPTS
from tests.billing.conftest import Billing
from tests.billing.support import deliver, status, subscribe
from tests.standins.accounts import StandIns
from tests.standins.fixtures import fixture, stripe_event


async def row_of(billing: Billing, owner: str) -> Subscription:
    async with billing.db.session() as session:
        row = (await session.execute(select(Subscription).where(Subscription.owner == owner))).scalar_one()
    return row


def linked(session: dict, **extra: object) -> dict:
    """The ids that tie a provider object to the test's account."""
    return {"customer": session["customer"], **extra}


async def test_the_published_fixtures_parse_and_change_nothing_unlinked(billing: Billing) -> None:
    # Their customer (cus_QXg1o8vcGmoR32) belongs to no account here: acknowledged, no effect.
    for name in (
        "checkout.session.completed",
        "customer.subscription.updated",
        "customer.subscription.deleted",
        "invoice.payment_failed",
    ):
        event = fixture(f"stripe/{name}.json")
        reply = await deliver(billing, event)
        assert reply.handled
        assert not reply.duplicate
        async with billing.db.session() as session:
            assert (await session.get(PaymentEvent, event["id"])).applied is False


async def test_other_event_types_are_acknowledged_and_ignored(billing: Billing) -> None:
    event = fixture("stripe/objects/event.json")  # a plan.created event
    reply = await deliver(billing, event)
    assert not reply.handled
    assert not reply.duplicate


async def test_a_redelivered_event_changes_nothing(billing: Billing, standins: StandIns) -> None:
    _, me = await billing.user()
    session = await subscribe(billing, standins, me)
    event = stripe_event("invoice.payment_failed", linked(session, subscription=session["subscription"]))
    event["data"]["object"]["parent"]["subscription_details"]["subscription"] = session["subscription"]
    assert not (await deliver(billing, event)).duplicate
    assert (await status(billing, me)).status == "past_due"
    row = await row_of(billing, f"user:{me.user_id}")
    async with billing.db.session() as s:
        staged = (await s.execute(select(func.count()).select_from(outbox))).scalar()
    again = await deliver(billing, event)
    assert again.duplicate
    after = await row_of(billing, f"user:{me.user_id}")
    assert (after.version, after.status, after.updated_at) == (row.version, row.status, row.updated_at)
    async with billing.db.session() as s:
        assert (await s.execute(select(func.count()).select_from(outbox))).scalar() == staged


async def test_payment_failed_then_deleted(billing: Billing, standins: StandIns) -> None:
    _, me = await billing.user()
    session = await subscribe(billing, standins, me)
    failed = stripe_event("invoice.payment_failed", linked(session))
    failed["data"]["object"]["parent"]["subscription_details"]["subscription"] = session["subscription"]
    await deliver(billing, failed)
    assert (await status(billing, me)).status == "past_due"
    assert (await status(billing, me)).effective_plan == "pro"  # kept while the provider retries
    deleted = stripe_event("customer.subscription.deleted", linked(session, id=session["subscription"]))
    await deliver(billing, deleted)
    after = await status(billing, me)
    assert after.status == "canceled"
    assert after.effective_plan == "free"
    # A failure notice older than the deletion arrives late: no resurrection.
    late = stripe_event("invoice.payment_failed", linked(session), created=deleted["created"] - 60)
    late["data"]["object"]["parent"]["subscription_details"]["subscription"] = session["subscription"]
    await deliver(billing, late)
    assert (await status(billing, me)).status == "canceled"


async def test_an_older_update_does_not_roll_back_a_newer_one(billing: Billing, standins: StandIns) -> None:
    _, me = await billing.user()
    session = await subscribe(billing, standins, me)
    sub_id = session["subscription"]
    now = int(time.time()) + 5
    # The customer schedules a cancellation on the provider's side; its event is newer.
    newer_object = standins.stripe.update_subscription(sub_id, cancel_at_period_end=True)
    older_object = {**newer_object, "cancel_at_period_end": False}
    await deliver(billing, stripe_event("customer.subscription.updated", newer_object, created=now))
    assert (await status(billing, me)).cancel_at_period_end is True
    standins.stripe.update_subscription(sub_id, cancel_at_period_end=False)  # even if the provider changed back
    await deliver(billing, stripe_event("customer.subscription.updated", older_object, created=now - 30))
    assert (await status(billing, me)).cancel_at_period_end is True


async def test_update_applies_the_providers_current_state_not_the_body(billing: Billing, standins: StandIns) -> None:
    _, me = await billing.user()
    session = await subscribe(billing, standins, me)
    current = standins.stripe.update_subscription(session["subscription"], cancel_at_period_end=True)
    stale_body = {**current, "cancel_at_period_end": False, "status": "unpaid"}
    await deliver(billing, stripe_event("customer.subscription.updated", stale_body))
    after = await status(billing, me)
    assert after.cancel_at_period_end is True
    assert after.status == "active"


async def test_update_for_an_unlinked_customer_changes_nothing(billing: Billing, standins: StandIns) -> None:
    _, me = await billing.user()
    session = await subscribe(billing, standins, me)
    obj = {**standins.stripe.subscription(session["subscription"]), "customer": "cus_unknown0000"}
    await deliver(billing, stripe_event("customer.subscription.deleted", {**obj, "status": "canceled"}))
    assert (await status(billing, me)).status == "active"


async def test_event_about_another_subscription_of_the_customer_is_ignored(
    billing: Billing, standins: StandIns
) -> None:
    _, me = await billing.user()
    session = await subscribe(billing, standins, me)
    deleted = stripe_event("customer.subscription.deleted", linked(session, id="sub_previous000000"))
    await deliver(billing, deleted)
    assert (await status(billing, me)).status == "active"


async def test_provider_outage_leaves_the_event_for_redelivery(billing: Billing, standins: StandIns) -> None:
    _, me = await billing.user()
    session = await subscribe(billing, standins, me)
    obj = standins.stripe.update_subscription(session["subscription"], cancel_at_period_end=True)
    event = stripe_event("customer.subscription.updated", obj)
    # More than every try: the SDK's three per call, times the channel's attempts (the contract
    # marks HandlePaymentEvent idempotent, and upstream_error travels as UNAVAILABLE).
    standins.stripe.fail("/v1/subscriptions/", 500, times=3 * MAX_ATTEMPTS)
    with pytest.raises(ServiceError) as err:
        await deliver(billing, event)
    assert err.value.code == "upstream_error"
    async with billing.db.session() as s:
        assert await s.get(PaymentEvent, event["id"]) is None  # not claimed: the redelivery applies it
    reply = await deliver(billing, event)
    assert not reply.duplicate
    assert (await status(billing, me)).cancel_at_period_end is True


async def test_changes_are_announced_through_the_outbox(billing: Billing, standins: StandIns) -> None:
    _, me = await billing.user()
    async with billing.db.session() as s:
        before = (await s.execute(select(func.count()).select_from(outbox))).scalar()
    await subscribe(billing, standins, me)
    async with billing.db.session() as s:
        rows = (await s.execute(select(outbox.c.type).order_by(outbox.c.created_at.desc()).limit(1))).all()
        after = (await s.execute(select(func.count()).select_from(outbox))).scalar()
    assert after == before + 1
    assert rows[0].type == "subscription.changed"


@pytest.fixture(scope="module")
async def keyless_billing(databases, standins: StandIns):  # type: ignore[no-untyped-def]
    """A deployment with the webhook secret but no provider API key (payment links, say)."""
    from tests.billing.conftest import settings_for, start_billing

    url = databases.create("billing", "keyless")
    running, server = await start_billing(url, settings_for(url, standins, stripe_api_key=""))
    assert not running.deps.payments.configured
    yield running
    await running._channel.close()
    await server.server.stop(0)
    await running.db.dispose()


async def test_a_checkout_without_a_provider_key_still_sets_the_period_end(keyless_billing: Billing) -> None:
    from datetime import UTC, datetime

    _, me = await keyless_billing.user()
    owner = f"user:{me.user_id}"
    created = int(datetime(2027, 1, 31, 12, tzinfo=UTC).timestamp())
    session = {"metadata": {"owner": owner, "plan": "pro"}, "customer": "cus_keyless1", "subscription": "sub_k1"}
    assert (
        await deliver(keyless_billing, stripe_event("checkout.session.completed", session, created=created))
    ).handled
    shown = await status(keyless_billing, me)
    assert shown.plan == "pro"
    assert shown.current_period_end.seconds == int(datetime(2027, 2, 28, 12, tzinfo=UTC).timestamp())
    # An expanded subscription in the event carries the provider's own period: that one is used.
    _, you = await keyless_billing.user()
    provider = fixture("stripe/customer.subscription.updated.json")["data"]["object"]
    provider.update(id="sub_k2", customer="cus_keyless2", current_period_end=1_900_000_000)
    session = {"metadata": {"owner": f"user:{you.user_id}"}, "customer": "cus_keyless2", "subscription": provider}
    assert (await deliver(keyless_billing, stripe_event("checkout.session.completed", session))).handled
    assert (await status(keyless_billing, you)).current_period_end.seconds == 1_900_000_000
