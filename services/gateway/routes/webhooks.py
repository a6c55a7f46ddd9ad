"""Webhook receivers at the host root: verify the raw body first (fail closed), then hand
the event to the owning service, which records it under its unique id before acting."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from typing import Any

import orjson
import stripe
from fastapi import APIRouter, Request

from services.api.schemas import CodeHostReceived, PaymentReceived
from services.contracts.v1 import billing_pb2, hostapp_pb2
from services.gateway.deliveries import DEADLINE_SECONDS, DeliveryBatches
from services.gateway.deps import ClientsDep
from services.kit.errors import ServiceError
from services.kit.grpc_client import call

router = APIRouter(prefix="/webhooks", tags=["webhooks"])


def _headers(*names: str) -> dict[str, Any]:
    """The signature and delivery headers in the OpenAPI document. The route reads them itself
    (a FastAPI ``Header`` would answer 422 before the signature is checked)."""
    return {
        "parameters": [
            {"name": name, "in": "header", "required": True, "schema": {"type": "string", "minLength": 1}}
            for name in names
        ]
    }


def verify_code_host_signature(secret: str, body: bytes, header: str) -> bool:
    if not secret or not header.startswith("sha256="):
        return False
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header)


@router.post(
    "/code_host",
    response_model=CodeHostReceived,
    summary="Code-host app events (X-Hub-Signature-256; 401 on a bad or missing signature)",
    openapi_extra=_headers("X-Hub-Signature-256", "X-GitHub-Event", "X-GitHub-Delivery"),
)
async def code_host(request: Request) -> CodeHostReceived:
    # The raw request, not a body model: FastAPI would parse (and answer 422) before we verify.
    body = await request.body()
    settings = request.app.state.settings
    if not verify_code_host_signature(
        settings.code_host_webhook_secret, body, request.headers.get("x-hub-signature-256", "")
    ):
        raise ServiceError("invalid_signature", "invalid webhook signature", http_status=401)
    delivery = request.headers.get("x-github-delivery", "")
    event = request.headers.get("x-github-event", "")
    if not delivery or not event:
        raise ServiceError("bad_request", "X-GitHub-Delivery and X-GitHub-Event are required")
    # Hostapp parses and checks the body (a body that is not a JSON object is its 400): parsed
    # once, where it is recorded. Deliveries reaching this worker together share one call.
    deliveries: DeliveryBatches = request.app.state.deliveries
    try:
        async with asyncio.timeout(DEADLINE_SECONDS):  # the code host gives up after 10 s
            response = await deliveries.forward(
                hostapp_pb2.HostWebhookRequest(delivery_id=delivery, event=event, payload=body)
            )
    except TimeoutError:
        raise ServiceError("timeout", "hostapp did not record the delivery in time") from None
    return CodeHostReceived(duplicate=response.duplicate, handled=response.handled, job_id=response.job_id)


def payment_event_identity(body: bytes) -> tuple[str, str]:
    """The signed body's event id and type. Anything else is refused with 400 (the provider
    stops retrying a 4xx; a 5xx it would retry for days, and no retry can fix a signed body)."""
    try:
        event = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise ServiceError("invalid_signature", "payload is not valid JSON") from None
    if not isinstance(event, dict):
        raise ServiceError("bad_request", "payload is not an event object", {"field": "body"})
    event_id, event_type = event.get("id"), event.get("type")
    if not (isinstance(event_id, str) and isinstance(event_type, str)):
        raise ServiceError("bad_request", "event object needs a string id and type", {"field": "body"})
    if not (0 < len(event_id) <= 255 and 0 < len(event_type) <= 255):
        raise ServiceError("bad_request", "event id and type must be 1 to 255 characters", {"field": "body"})
    return event_id, event_type


@router.post(
    "/payment",
    response_model=PaymentReceived,
    summary="Payment-provider events (Payment-Signature; 400 invalid_signature: bad signature or malformed JSON)",
    openapi_extra=_headers("Payment-Signature"),
)
async def payment(request: Request, clients: ClientsDep) -> PaymentReceived:
    body = await request.body()
    settings = request.app.state.settings
    header = request.headers.get("payment-signature") or request.headers.get("stripe-signature") or ""
    if not settings.payment_webhook_secret or not header:
        raise ServiceError("invalid_signature", "missing signature or webhook secret not configured")
    try:
        stripe.WebhookSignature.verify_header(
            body, header, settings.payment_webhook_secret, tolerance=settings.payment_signature_tolerance_seconds
        )
    except (stripe.SignatureVerificationError, ValueError):  # ValueError: a body that is not UTF-8
        raise ServiceError("invalid_signature", "signature verification failed") from None
    event_id, event_type = payment_event_identity(body)
    response = await call(
        clients.billing.HandlePaymentEvent,
        billing_pb2.PaymentEventRequest(event_id=event_id, event_type=event_type, payload=body),
        timeout=20,
    )
    return PaymentReceived(duplicate=response.duplicate, handled=response.handled)
