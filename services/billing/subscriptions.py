"""Subscription rules: status, checkout, billing portal, switch plan, cancel, reactivate, seats.

Provider calls happen while the owner's subscription row is locked, so changes to one account
are serialized. Each call's Idempotency-Key names the operation, the row's ``version`` and the
parameters: a retry after a lost answer repeats the same key (the provider replays its
result), the next operation gets a new one.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncSession

from services.billing import queries, teams
from services.billing.access import account_owner
from services.billing.deps import BillingDeps
from services.billing.models import Organization, Subscription, outbox
from services.billing.payments import ProviderSubscription, idempotency_key
from services.billing.plans import LIVE_STATUSES, METRICS, UNLIMITED, Catalogue, PlanConfig
from services.billing.usage import plan_of, usage_against_caps, usage_report
from services.contracts.v1 import billing_pb2, common_pb2, events_pb2
from services.kit.bus import SUBJECT_SUBSCRIPTION_CHANGED
from services.kit.errors import ServiceError
from services.kit.messages import timestamp_of_seconds
from services.kit.outbox import add_event

log = logging.getLogger(__name__)
ADMIN = "team-admin"


def subscription_message(owner: str, row: Subscription | None, seats: int = 1) -> billing_pb2.Subscription:
    if row is None:
        return billing_pb2.Subscription(plan="free", status="active", seats=seats, owner=owner)
    return billing_pb2.Subscription(
        plan=row.plan,
        status=row.status,
        seats=row.seats,
        current_period_end=row.current_period_end,
        cancel_at_period_end=row.cancel_at_period_end,
        customer_id=row.customer_id or "",
        owner=row.owner,
    )


async def publish_change(session: AsyncSession, row: Subscription) -> None:
    message = events_pb2.SubscriptionChanged(owner=row.owner, plan=row.plan, status=row.status, seats=row.seats)
    await add_event(session, outbox, SUBJECT_SUBSCRIPTION_CHANGED, "subscription.changed", message)


async def apply_state(
    session: AsyncSession, row: Subscription, state: ProviderSubscription, catalogue: Catalogue
) -> None:
    """Copy the provider's subscription onto the row (spec: plan, status, seat count, period end,
    cancel-at-period-end), keep an organization's seats in step, and announce the change."""
    plan = catalogue.by_price(state.price_id)
    if plan is not None:
        row.plan = plan.id
    else:
        log.warning("subscription %s has price %s that no plan uses; plan kept", state.id, state.price_id)
    row.subscription_id = state.id or row.subscription_id
    row.customer_id = state.customer or row.customer_id
    row.status = state.status or row.status
    row.seats = max(1, state.quantity)
    row.current_period_start = state.current_period_start
    row.current_period_end = state.current_period_end
    row.cancel_at_period_end = state.cancel_at_period_end
    row.trial_end = state.trial_end
    row.version += 1
    await sync_org_seats(session, row)
    await publish_change(session, row)


async def sync_org_seats(session: AsyncSession, row: Subscription) -> None:
    kind, _, org_id = row.owner.partition(":")
    if kind == "org":
        org = await queries.lock_org(session, org_id)
        if org is not None:
            org.seats = row.seats


async def _seats(session: AsyncSession, owner: str) -> int:
    kind, _, ident = owner.partition(":")
    if kind == "org":
        org = await session.get(Organization, ident)
        return org.seats if org else 1
    return 1


def _live(row: Subscription | None) -> bool:
    return row is not None and bool(row.subscription_id) and row.status in LIVE_STATUSES


async def account_status(deps: BillingDeps, principal: common_pb2.Principal, org_id: str) -> billing_pb2.AccountStatus:
    catalogue = deps.catalogue
    # Exempt from team-admin: any member may see the plan and usage they work under.
    owner = account_owner(principal, org_id, "viewer")
    async with deps.db.session() as session:
        row = await queries.subscription_for(session, owner)
        plan = plan_of(row, catalogue)
        user = await queries.user_by_id(session, principal.user_id)
        start, end, usage = await usage_against_caps(session, owner, row, catalogue, int(time.time()))
        return billing_pb2.AccountStatus(
            owner=owner,
            plan=row.plan if row else "free",
            plan_name=catalogue.get(row.plan if row else "free").name,
            effective_plan=plan.id,
            status=row.status if row else "active",
            seats=row.seats if row else await _seats(session, owner),
            current_period_end=timestamp_of_seconds(row.current_period_end if row else 0),
            cancel_at_period_end=row.cancel_at_period_end if row else False,
            trial_end=timestamp_of_seconds(row.trial_end if row else 0),
            trial_used=bool(user and user.trial_used),
            customer_linked=bool(row and row.customer_id),
            rate_limit=billing_pb2.RateLimits(
                per_minute=plan.rate_limit_per_minute, org_per_minute=plan.org_rate_limit_per_minute
            ),
            period_start=timestamp_of_seconds(start),
            period_end=timestamp_of_seconds(end),
            usage=usage,
        )


async def usage(deps: BillingDeps, principal: common_pb2.Principal, org_id: str) -> billing_pb2.Usage:
    owner = account_owner(principal, org_id, "viewer")
    async with deps.db.session() as session:
        return await usage_report(session, owner, await queries.subscription_for(session, owner), deps.catalogue)


def _price(detail: dict[str, Any]) -> billing_pb2.Price:
    """The provider's price object: the fields shown (absent or null ones stay unset)."""
    recurring = detail.get("recurring") or {}
    fields: dict[str, Any] = {
        "id": detail.get("id"),
        "currency": detail.get("currency"),
        "unit_amount": detail.get("unit_amount"),
        # str(): the SDK gives decimals as Decimal.
        "unit_amount_decimal": str(v) if (v := detail.get("unit_amount_decimal")) is not None else None,
        "billing_scheme": detail.get("billing_scheme"),
        "product": detail.get("product") if isinstance(detail.get("product"), str) else None,
        "nickname": detail.get("nickname"),
        "active": detail.get("active"),
        "interval": recurring.get("interval"),
        "interval_count": recurring.get("interval_count"),
    }
    return billing_pb2.Price(**{k: v for k, v in fields.items() if v is not None})


async def plan_catalogue(deps: BillingDeps) -> billing_pb2.PlanList:
    """Plans with the provider's live price detail (cached by ``Payments.get_price``)."""
    plans = []
    for plan in deps.catalogue.plans:
        price: billing_pb2.Price | None = None
        if plan.priced and deps.payments.configured:
            detail = await deps.payments.get_price(plan.price_id)
            if detail is not None:
                price = _price(detail)
        plans.append(
            billing_pb2.Plan(
                id=plan.id,
                name=plan.name,
                paid=plan.paid,
                price_id=plan.price_id,
                price=price,  # unset: free, or no price to show (see price_unavailable)
                price_available=price is not None or not plan.paid,
                # Why a paid plan shows no price: checkout works only when this is empty.
                price_unavailable=_price_unavailable(plan, price, deps.payments.configured) or "",
                trial_days=plan.trial_days,
                caps=billing_pb2.MetricCaps(**{metric: plan.cap(metric) for metric in METRICS}),
                max_seats=plan.max_seats,
                rate_limit_per_minute=plan.rate_limit_per_minute,
                org_rate_limit_per_minute=plan.org_rate_limit_per_minute,
            )
        )
    return billing_pb2.PlanList(plans=plans, currency_note="amounts are in the currency's smallest unit")


def _price_unavailable(plan: PlanConfig, price: billing_pb2.Price | None, payments_configured: bool) -> str | None:
    if not plan.paid or price is not None:
        return None
    if not plan.priced:
        return "no_price_configured"  # the operator has not tied the plan to a provider price
    if not payments_configured:
        return "payments_not_configured"  # no provider API key
    return "provider_unreachable"  # retried after a tenth of the price cache's TTL


def _url(value: str, default: str, field: str) -> str:
    if not value:
        return default
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or len(value) > 2048:
        raise ServiceError("validation_failed", f"{field} must be an absolute http(s) URL", {"field": field})
    return value


async def _customer(
    deps: BillingDeps, session: AsyncSession, row: Subscription, principal: common_pb2.Principal
) -> str:
    if row.customer_id:
        return row.customer_id
    user = await queries.user_by_id(session, principal.user_id)
    name = next((m.org_name for m in principal.memberships if f"org:{m.org_id}" == row.owner), principal.login)
    row.customer_id = await deps.payments.create_customer(row.owner, name, user.email if user else "")
    return row.customer_id


async def checkout(
    deps: BillingDeps, principal: common_pb2.Principal, request: billing_pb2.CheckoutRequest
) -> billing_pb2.CheckoutSession:
    owner = account_owner(principal, request.org_id, ADMIN)
    plan = deps.catalogue.paid_plan(request.plan)
    async with deps.db.session() as session:
        user = await queries.user_by_id(session, principal.user_id)
        if request.trial:
            if plan.trial_days <= 0:
                raise ServiceError("validation_failed", f"the {plan.name} plan has no trial", {"field": "trial"})
            if user is None or user.trial_used:
                raise ServiceError("trial_already_used", "a trial can be started only once per user")
        deps.payments.require_configured()  # before any row is written
        seats = 1
        if request.org_id:
            seats = max(request.seats or 1, await queries.seated_count(session, request.org_id))
            if plan.max_seats != UNLIMITED and seats > plan.max_seats:
                raise ServiceError(
                    "validation_failed", f"the {plan.name} plan allows {plan.max_seats} seats", {"field": "seats"}
                )
        row = await queries.ensure_subscription(session, owner, seats)
        if _live(row):
            raise ServiceError(
                "conflict",
                "this account already has a subscription; use switch-plan",
                {"plan": row.plan, "status": row.status},
            )
        customer = await _customer(deps, session, row, principal)
        subscription_data: dict[str, Any] = {"metadata": {"owner": owner, "plan": plan.id}}
        if request.trial:
            subscription_data["trial_period_days"] = plan.trial_days
        params = {
            "mode": "subscription",
            "customer": customer,
            "line_items": [{"price": plan.price_id, "quantity": seats}],
            "success_url": _url(request.success_url, deps.settings.checkout_success_url, "success_url"),
            "cancel_url": _url(request.cancel_url, deps.settings.checkout_cancel_url, "cancel_url"),
            "client_reference_id": owner.replace(":", "_"),
            "metadata": {"owner": owner, "plan": plan.id, "user_id": principal.user_id},
            "subscription_data": subscription_data,
        }
        key = idempotency_key("checkout.create", owner, row.version, params=params)
        created = await deps.payments.create_checkout_session(params, key)
        row.checkout_session_id = str(created.get("id") or "")
        return billing_pb2.CheckoutSession(
            id=row.checkout_session_id,
            url=created.get("url"),
            expires_at=timestamp_of_seconds(int(created.get("expires_at") or 0)),
            plan=plan.id,
            seats=seats,
            trial_days=plan.trial_days if request.trial else 0,
        )


async def portal(deps: BillingDeps, principal: common_pb2.Principal, org_id: str) -> billing_pb2.PortalSession:
    owner = account_owner(principal, org_id, ADMIN)
    async with deps.db.session() as session:
        row = await queries.subscription_for(session, owner)
        if row is None or not row.customer_id:
            raise ServiceError("plan_required", "no billing account yet: start with a checkout")
        # Each opening is its own operation; the SDK's own retries reuse this key.
        key = idempotency_key("portal.create", owner, uuid.uuid4().hex)
        created = await deps.payments.create_portal_session(row.customer_id, deps.settings.portal_return_url, key)
    return billing_pb2.PortalSession(id=created.get("id"), url=created.get("url"), return_url=created.get("return_url"))


async def _locked_live(session: AsyncSession, owner: str) -> Subscription:
    row = await queries.subscription_for(session, owner, lock=True)
    if row is None or not _live(row):
        raise ServiceError("plan_required", "no active paid subscription on this account; start with a checkout")
    return row


async def _update(deps: BillingDeps, session: AsyncSession, row: Subscription, op: str, params: dict[str, Any]) -> None:
    key = idempotency_key(op, row.subscription_id, row.version, params=params)
    state = await deps.payments.update_subscription(str(row.subscription_id), params, key)
    await apply_state(session, row, state, deps.catalogue)


async def switch_plan(
    deps: BillingDeps, principal: common_pb2.Principal, org_id: str, plan_id: str
) -> billing_pb2.Subscription:
    # Authorization first: a stranger learns nothing about plans or subscriptions here.
    owner = account_owner(principal, org_id, ADMIN)
    plan = deps.catalogue.paid_plan(plan_id)
    async with deps.db.session() as session:
        row = await _locked_live(session, owner)
        if row.plan == plan.id:
            return subscription_message(row.owner, row)
        if plan.max_seats != UNLIMITED and row.seats > plan.max_seats:
            raise ServiceError(
                "validation_failed", f"the {plan.name} plan allows {plan.max_seats} seats", {"field": "plan"}
            )
        current = await deps.payments.get_subscription(str(row.subscription_id))
        if current is None:
            raise ServiceError("conflict", "the provider no longer has this subscription")
        params = {
            "items": [{"id": current.item_id, "price": plan.price_id}],
            "proration_behavior": "create_prorations",
            "metadata": {"owner": row.owner, "plan": plan.id},
        }
        await _update(deps, session, row, "subscription.switch", params)
    deps.wake()
    return subscription_message(row.owner, row)


async def cancel(deps: BillingDeps, principal: common_pb2.Principal, org_id: str) -> billing_pb2.Subscription:
    async with deps.db.session() as session:
        row = await _locked_live(session, account_owner(principal, org_id, ADMIN))
        if not row.cancel_at_period_end:
            await _update(deps, session, row, "subscription.cancel", {"cancel_at_period_end": True})
    deps.wake()
    return subscription_message(row.owner, row)


async def reactivate(deps: BillingDeps, principal: common_pb2.Principal, org_id: str) -> billing_pb2.Subscription:
    async with deps.db.session() as session:
        row = await _locked_live(session, account_owner(principal, org_id, ADMIN))
        if row.cancel_at_period_end:
            await _update(deps, session, row, "subscription.reactivate", {"cancel_at_period_end": False})
    deps.wake()
    return subscription_message(row.owner, row)


async def change_seats(
    deps: BillingDeps, principal: common_pb2.Principal, org_id: str, seats: int
) -> billing_pb2.Subscription:
    """``ChangeSeats``: ``teams.check_seats`` (the organization locked), then the provider's
    quantity follows, then the organization's seats."""
    owner = f"org:{org_id}"
    async with deps.db.session() as session:
        await teams.check_seats(session, principal, org_id, seats)
        row = await queries.subscription_for(session, owner, lock=True)
        plan = plan_of(row, deps.catalogue)
        if plan.max_seats != UNLIMITED and seats > plan.max_seats:
            raise ServiceError(
                "plan_required", f"the {plan.name} plan allows {plan.max_seats} seats", {"max_seats": plan.max_seats}
            )
        if row is not None and _live(row) and row.seats != seats:
            current = await deps.payments.get_subscription(str(row.subscription_id))
            if current is None:
                raise ServiceError("conflict", "the provider no longer has this subscription")
            params = {"items": [{"id": current.item_id, "quantity": seats}], "proration_behavior": "create_prorations"}
            await _update(deps, session, row, "subscription.seats", params)
        elif row is not None:
            row.seats = seats
        org = await queries.lock_org(session, org_id)
        if org is not None:
            org.seats = seats
    deps.wake()
    return subscription_message(owner, row, seats)
