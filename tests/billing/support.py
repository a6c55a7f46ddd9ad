"""Helpers of the billing tests: a paid subscription through the real checkout path (service →
Stripe stand-in → "customer pays" → checkout.session.completed), and provider events."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from services.contracts.v1 import billing_pb2, common_pb2
from tests.billing.conftest import Billing
from tests.standins.accounts import StandIns
from tests.standins.fixtures import stripe_event


async def deliver(billing: Billing, event: dict[str, Any]) -> billing_pb2.PaymentEventResponse:
    """What the gateway hands billing once the signature checked out."""
    request = billing_pb2.PaymentEventRequest(
        event_id=event["id"], event_type=event["type"], payload=json.dumps(event).encode()
    )
    return await billing.call("HandlePaymentEvent", request)


async def checkout(
    billing: Billing,
    principal: common_pb2.Principal,
    plan: str = "pro",
    org_id: str = "",
    trial: bool = False,
    seats: int = 1,
) -> billing_pb2.CheckoutSession:
    request = billing_pb2.CheckoutRequest(plan=plan, org_id=org_id, trial=trial, seats=seats)
    return await billing.call("StartCheckout", request, principal)


async def subscribe(
    billing: Billing,
    standins: StandIns,
    principal: common_pb2.Principal,
    plan: str = "pro",
    org_id: str = "",
    trial: bool = False,
    seats: int = 1,
) -> dict[str, Any]:
    """Checkout, pay on the stand-in's hosted page, deliver checkout.session.completed; the
    completed session (with the customer and subscription ids) is returned."""
    started = await checkout(billing, principal, plan, org_id, trial, seats)
    session = await asyncio.to_thread(standins.stripe.complete_checkout, started.id)
    reply = await deliver(billing, stripe_event("checkout.session.completed", session))
    assert reply.handled
    assert not reply.duplicate
    return session


async def status(billing: Billing, principal: common_pb2.Principal, org_id: str = "") -> billing_pb2.AccountStatus:
    return await billing.call("GetAccountStatus", billing_pb2.AccountRequest(org_id=org_id), principal)
