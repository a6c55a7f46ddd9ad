"""Payment-provider events (the gateway verified the signature). Four types change state, exactly
as the spec's table says; every other type is acknowledged and ignored.

Each event id is claimed in the transaction that applies it, so a redelivery changes nothing.
The provider does not order deliveries: the row remembers the ``created`` time of the newest
event applied and an older one is dropped. Subscription state is re-read from the provider
(outside the transaction) rather than trusted from a possibly stale event body.
"""

from __future__ import annotations

import calendar
import json
import logging
import time
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from services.billing import queries
from services.billing.deps import BillingDeps
from services.billing.models import Organization, Subscription, User
from services.billing.payments import ProviderSubscription
from services.billing.subscriptions import apply_state, publish_change
from services.contracts.v1 import billing_pb2

log = logging.getLogger(__name__)

CHECKOUT_COMPLETED = "checkout.session.completed"
SUBSCRIPTION_UPDATED = "customer.subscription.updated"
SUBSCRIPTION_DELETED = "customer.subscription.deleted"
PAYMENT_FAILED = "invoice.payment_failed"
HANDLED = (CHECKOUT_COMPLETED, SUBSCRIPTION_UPDATED, SUBSCRIPTION_DELETED, PAYMENT_FAILED)


def _id(value: Any) -> str:
    return str(value.get("id") or "") if isinstance(value, dict) else str(value or "")


def _subscription_of(event_type: str, obj: dict[str, Any]) -> str:
    if event_type == CHECKOUT_COMPLETED:
        return _id(obj.get("subscription"))
    if event_type == PAYMENT_FAILED:
        # Newer API versions moved it under parent.subscription_details.
        details = ((obj.get("parent") or {}).get("subscription_details")) or {}
        return _id(details.get("subscription")) or _id(obj.get("subscription"))
    return _id(obj.get("id"))


async def handle(deps: BillingDeps, event_id: str, event_type: str, payload: bytes) -> billing_pb2.PaymentEventResponse:
    if event_type not in HANDLED:
        return billing_pb2.PaymentEventResponse(duplicate=False, handled=False)
    try:
        event = json.loads(payload)
        obj = event["data"]["object"]
        created = int(event.get("created") or 0)
        assert isinstance(obj, dict)
    except (ValueError, KeyError, TypeError, AssertionError):
        # Retrying cannot fix a body the provider signed: acknowledge it and say so in the log.
        log.error("payment event %s (%s) has no usable data.object; ignored", event_id, event_type)
        return billing_pb2.PaymentEventResponse(duplicate=False, handled=False)
    async with deps.db.session() as session:
        if await queries.payment_event_seen(session, event_id):  # spares the provider call below
            return billing_pb2.PaymentEventResponse(duplicate=True, handled=True)
    fetched: ProviderSubscription | None = None
    subscription_id = _subscription_of(event_type, obj)
    if event_type in (CHECKOUT_COMPLETED, SUBSCRIPTION_UPDATED) and subscription_id and deps.payments.configured:
        # An outage raises upstream_error: the webhook answers 5xx and the provider redelivers.
        fetched = await deps.payments.get_subscription(subscription_id)
    async with deps.db.session() as session:
        if not await queries.record_payment_event(session, event_id, event_type, created):
            return billing_pb2.PaymentEventResponse(duplicate=True, handled=True)
        if event_type == CHECKOUT_COMPLETED:
            applied = await _checkout_completed(session, deps, obj, created, fetched)
        elif event_type == SUBSCRIPTION_UPDATED:
            applied = await _subscription_updated(session, deps, obj, created, fetched)
        else:
            status = "canceled" if event_type == SUBSCRIPTION_DELETED else "past_due"
            applied = await _set_status(session, obj, subscription_id, created, status)
        if applied:
            await queries.mark_payment_event_applied(session, event_id)
        log.info("payment event %s (%s) %s", event_id, event_type, "applied" if applied else "changed nothing")
    deps.wake()
    return billing_pb2.PaymentEventResponse(duplicate=False, handled=True)


async def _owner_row(session: AsyncSession, owner: str) -> Subscription | None:
    kind, _, ident = owner.partition(":")
    exists = (
        await session.get(User, ident)
        if kind == "user"
        else await session.get(Organization, ident)
        if kind == "org"
        else None
    )
    return await queries.ensure_subscription(session, owner, 1) if exists is not None else None


def _stale(row: Subscription, created: int) -> bool:
    # Whole seconds tie; a tie is applied (it is re-read state or the same moment).
    return created < row.provider_state_at


async def _checkout_completed(
    session: AsyncSession, deps: BillingDeps, obj: dict[str, Any], created: int, fetched: ProviderSubscription | None
) -> bool:
    if obj.get("mode") not in (None, "subscription"):
        return False
    metadata = obj.get("metadata") or {}
    owner = str(metadata.get("owner") or str(obj.get("client_reference_id") or "").replace("_", ":", 1))
    customer = _id(obj.get("customer"))
    row = await _owner_row(session, owner) if owner else None
    row = row or await queries.subscription_by(session, checkout_session_id=_id(obj.get("id")))
    row = row or (await queries.subscription_by(session, customer_id=customer) if customer else None)
    if row is None:
        log.warning("checkout %s belongs to no account we know", _id(obj.get("id")))
        return False
    if customer and customer != row.customer_id:
        holder = await queries.subscription_by(session, customer_id=customer)
        if holder is not None and holder.id != row.id:
            log.error("customer %s is already linked to %s, not to %s", customer, holder.owner, row.owner)
            return False
        row.customer_id = customer
    row.checkout_session_id = None
    embedded = obj.get("subscription")
    if fetched is None and isinstance(embedded, dict):  # an expanded subscription carries its period
        fetched = ProviderSubscription.from_object(embedded)
    if fetched is not None:
        await apply_state(session, row, fetched, deps.catalogue)
    else:
        # No provider API key to read the subscription with (a payment link, say): the spec still
        # wants a period end. A month from the checkout, until the subscription's own update event
        # (which carries the provider's period) replaces it.
        plan = deps.catalogue.known(str(metadata.get("plan") or ""))
        row.plan = plan.id if plan else row.plan
        row.subscription_id = _id(embedded) or row.subscription_id
        row.status = "active"
        start = created or int(time.time())
        row.current_period_start, row.current_period_end = start, one_month_after(start)
        log.info("checkout %s: period end provisional (no provider API key to read it)", _id(obj.get("id")))
        row.version += 1
        await publish_change(session, row)
    row.provider_state_at = max(row.provider_state_at, created)
    user_id = str(metadata.get("user_id") or (row.owner[5:] if row.owner.startswith("user:") else ""))
    user = await queries.lock_user(session, user_id) if user_id else None
    if user is not None:
        user.trial_used = True  # spec: every completed checkout marks the user's trial used
    return True


def one_month_after(ts: int) -> int:
    """The same day and time next month (the last day when next month is shorter)."""
    day = datetime.fromtimestamp(ts, UTC)
    year, month = (day.year + 1, 1) if day.month == 12 else (day.year, day.month + 1)
    last = calendar.monthrange(year, month)[1]
    return int(day.replace(year=year, month=month, day=min(day.day, last)).timestamp())


async def _linked_row(session: AsyncSession, obj: dict[str, Any], subscription_id: str) -> Subscription | None:
    """The subscription row the event is about, or None when the customer is not linked yet or
    the event concerns another (earlier) subscription of the customer."""
    customer = _id(obj.get("customer"))
    row = await queries.subscription_by(session, customer_id=customer) if customer else None
    if row is None:
        log.info("customer %s is not linked to an account (yet)", customer)
        return None
    if row.subscription_id and subscription_id and row.subscription_id != subscription_id:
        log.info("event for subscription %s, account %s has %s", subscription_id, row.owner, row.subscription_id)
        return None
    return row


async def _subscription_updated(
    session: AsyncSession, deps: BillingDeps, obj: dict[str, Any], created: int, fetched: ProviderSubscription | None
) -> bool:
    state = fetched or ProviderSubscription.from_object(obj)
    row = await _linked_row(session, obj, state.id)
    if row is None or _stale(row, created):
        return False
    await apply_state(session, row, state, deps.catalogue)
    row.provider_state_at = max(row.provider_state_at, created)
    return True


async def _set_status(
    session: AsyncSession, obj: dict[str, Any], subscription_id: str, created: int, status: str
) -> bool:
    if not subscription_id:  # e.g. a one-off invoice: no subscription to mark
        return False
    row = await _linked_row(session, obj, subscription_id)
    if row is None or _stale(row, created):
        return False
    row.subscription_id = subscription_id
    row.status = status
    if status == "canceled":
        row.cancel_at_period_end = False
    row.version += 1
    row.provider_state_at = max(row.provider_state_at, created)
    await publish_change(session, row)
    return True
