"""The payment provider (Stripe) as billing needs it: async calls through the official SDK,
an Idempotency-Key on every mutating call, provider errors turned into our codes, provider
objects normalized into :class:`ProviderSubscription`, and a price cache."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import stripe

from services.kit.errors import ServiceError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProviderSubscription:
    """The fields of a provider subscription we copy (spec: plan, status, seats, period end,
    cancel-at-period-end)."""

    id: str
    customer: str
    status: str
    price_id: str
    quantity: int
    current_period_start: int
    current_period_end: int
    cancel_at_period_end: bool
    trial_end: int
    item_id: str

    @classmethod
    def from_object(cls, obj: dict[str, Any]) -> ProviderSubscription:
        items = (obj.get("items") or {}).get("data") or [{}]
        item = items[0]
        # Newer API versions keep the period on the item, older ones on the subscription.
        price = item.get("price") or item.get("plan") or obj.get("plan") or {}
        return cls(
            id=str(obj.get("id") or ""),
            customer=_id_of(obj.get("customer")),
            status=str(obj.get("status") or ""),
            price_id=_id_of(price),
            quantity=int(item.get("quantity") or obj.get("quantity") or 1),
            current_period_start=int(obj.get("current_period_start") or item.get("current_period_start") or 0),
            current_period_end=int(obj.get("current_period_end") or item.get("current_period_end") or 0),
            cancel_at_period_end=bool(obj.get("cancel_at_period_end")),
            trial_end=int(obj.get("trial_end") or 0),
            item_id=str(item.get("id") or ""),
        )


def _id_of(value: Any) -> str:
    """An expandable field: either the id or the expanded object."""
    if isinstance(value, dict):
        return str(value.get("id") or "")
    return str(value or "")


def idempotency_key(operation: str, *parts: object, params: dict[str, Any] | None = None) -> str:
    """A key derived from the business operation (and its parameters, because the provider
    refuses a reused key with different parameters)."""
    digest = hashlib.sha256(json.dumps(params or {}, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return ":".join([operation, *(str(p) for p in parts), digest])[:255]


class Payments:
    def __init__(self, api_key: str, api_base: str = "", *, timeout: float = 20.0, price_ttl: int = 300) -> None:
        self.configured = bool(api_key)
        self.price_ttl = price_ttl
        self._prices: dict[str, tuple[float, dict[str, Any] | None]] = {}
        self.client = stripe.StripeClient(
            api_key or "sk_unconfigured",
            base_addresses={"api": api_base} if api_base else None,
            http_client=stripe.HTTPXClient(timeout=timeout),
            max_network_retries=2,  # the SDK retries only what is safe (with our idempotency keys)
        )

    def require_configured(self) -> None:
        if not self.configured:
            raise ServiceError("not_configured", "no payment provider is configured (CR_BILLING_STRIPE_API_KEY)")

    async def _do(self, what: str, call: Any) -> dict[str, Any]:
        self.require_configured()
        try:
            result = await call
        except stripe.CardError as exc:
            raise ServiceError("payment_failed", exc.user_message or "the payment method was declined") from None
        except stripe.InvalidRequestError as exc:
            if exc.http_status == 404:
                raise ProviderNotFound(what) from None
            log.warning("provider refused %s: %s", what, exc)
            raise ServiceError(
                "upstream_error", f"payment provider refused {what}", {"provider_code": exc.code or ""}
            ) from None
        except stripe.StripeError as exc:
            log.warning("provider call %s failed: %s", what, exc)
            raise ServiceError("upstream_error", f"payment provider unavailable ({what})") from None
        return result.to_dict()

    async def create_customer(self, owner: str, name: str, email: str) -> str:
        params: dict[str, Any] = {"name": name, "metadata": {"owner": owner}}
        if email:
            params["email"] = email
        key = idempotency_key("customer.create", owner, params=params)
        obj = await self._do("customer", self.client.v1.customers.create_async(params, {"idempotency_key": key}))  # type: ignore[arg-type]
        return str(obj["id"])

    async def create_checkout_session(self, params: dict[str, Any], key: str) -> dict[str, Any]:
        return await self._do(
            "checkout session",
            self.client.v1.checkout.sessions.create_async(params, {"idempotency_key": key}),  # type: ignore[arg-type]
        )

    async def create_portal_session(self, customer: str, return_url: str, key: str) -> dict[str, Any]:
        params = {"customer": customer, "return_url": return_url}
        return await self._do(
            "billing portal session",
            self.client.v1.billing_portal.sessions.create_async(params, {"idempotency_key": key}),  # type: ignore[arg-type]
        )

    async def get_subscription(self, subscription_id: str) -> ProviderSubscription | None:
        """The provider's current state, or None when it has no such subscription."""
        try:
            obj = await self._do("subscription", self.client.v1.subscriptions.retrieve_async(subscription_id))
        except ProviderNotFound:
            return None
        return ProviderSubscription.from_object(obj)

    async def update_subscription(self, subscription_id: str, params: dict[str, Any], key: str) -> ProviderSubscription:
        try:
            obj = await self._do(
                "subscription update",
                self.client.v1.subscriptions.update_async(subscription_id, params, {"idempotency_key": key}),  # type: ignore[arg-type]
            )
        except ProviderNotFound:
            raise ServiceError("conflict", "the provider no longer has this subscription") from None
        return ProviderSubscription.from_object(obj)

    async def get_price(self, price_id: str) -> dict[str, Any] | None:
        """Price detail, cached for ``price_ttl`` seconds (a failure for a tenth of that)."""
        now = time.monotonic()
        cached = self._prices.get(price_id)
        if cached and cached[0] > now:
            return cached[1]
        try:
            obj: dict[str, Any] | None = await self._do("price", self.client.v1.prices.retrieve_async(price_id))
            ttl = self.price_ttl
        except (ServiceError, ProviderNotFound) as exc:
            log.warning("price %s unavailable: %s", price_id, exc)
            obj, ttl = None, max(1, self.price_ttl // 10)
        self._prices[price_id] = (now + ttl, obj)
        return obj


class ProviderNotFound(Exception):
    """The provider answered 404 for the object."""
