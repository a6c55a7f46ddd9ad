"""Stripe in the tests: localstripe (a stateful fake from PyPI) for customers, products, plans,
subscriptions and invoices, behind this stand-in, which serves what localstripe lacks from
Stripe's published fixtures: Checkout Sessions, billing-portal sessions and Prices.

It also bridges two gaps of localstripe so the service can speak today's API: subscription
items name a ``price`` (localstripe knows ``plan``; a price id is used as the plan id) and
``proration_behavior`` (localstripe knows ``prorate``); a subscription on trial is reported
``trialing``. Every mutating request is logged with its Idempotency-Key.
"""

from __future__ import annotations

import re
import secrets
import time
from typing import Any
from urllib.parse import parse_qsl, urlencode

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.standins.fixtures import fixture

API_KEY = "sk_test_standin"


def unflatten(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Stripe's form encoding (``a[b][0][c]=v``) back into nested dicts and lists."""
    root: dict[str, Any] = {}
    for key, value in pairs:
        parts = re.findall(r"[^\[\]]+", key)
        node: Any = root
        for part, nxt in zip(parts, [*parts[1:], None], strict=True):
            if nxt is None:
                node[part] = value
            else:
                node = node.setdefault(part, {})
    return _lists(root)


def _lists(node: Any) -> Any:
    if isinstance(node, dict):
        if node and all(k.isdigit() for k in node):
            return [_lists(node[k]) for k in sorted(node, key=int)]
        return {k: _lists(v) for k, v in node.items()}
    return node


class StripeStandIn:
    def __init__(self, localstripe_url: str, public_url: str) -> None:
        self.localstripe_url = localstripe_url
        self.public_url = public_url  # where this stand-in is reached (checkout page links)
        self.sessions: dict[str, dict[str, Any]] = {}
        self.prices: dict[str, dict[str, Any]] = {}
        self.replies: dict[str, tuple[int, bytes]] = {}  # Idempotency-Key -> the answer given
        self.mutations: list[tuple[str, str, str]] = []  # (method, path, Idempotency-Key)
        self.failures: dict[str, list[int]] = {}  # path prefix -> [status, times left] (fault injection)
        self._client = httpx.AsyncClient(base_url=localstripe_url, timeout=10)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/checkout/sessions", self.create_session, methods=["POST"]),
                Route("/v1/checkout/sessions/{sid}", self.get_session, methods=["GET"]),
                Route("/v1/billing_portal/sessions", self.create_portal, methods=["POST"]),
                Route("/v1/prices", self.list_prices, methods=["GET"]),
                Route("/v1/prices/{pid}", self.get_price, methods=["GET"]),
                Route("/{path:path}", self.proxy, methods=["GET", "POST", "DELETE"]),
            ]
        )

    # --- what localstripe lacks ------------------------------------------------------------

    async def _form(self, request: Request) -> dict[str, Any]:
        if request.method in ("POST", "DELETE"):
            self.mutations.append((request.method, request.url.path, request.headers.get("idempotency-key", "")))
        return unflatten(parse_qsl((await request.body()).decode(), keep_blank_values=True))

    def _replay(self, request: Request) -> Response | None:
        key = request.headers.get("idempotency-key", "")
        if key in self.replies:
            status, body = self.replies[key]
            return Response(body, status, media_type="application/json", headers={"Idempotent-Replayed": "true"})
        return None

    def _answer(self, request: Request, body: dict[str, Any], status: int = 200) -> JSONResponse:
        response = JSONResponse(body, status)
        if key := request.headers.get("idempotency-key", ""):
            self.replies[key] = (status, bytes(response.body))
        return response

    async def create_session(self, request: Request) -> Response:
        form = await self._form(request)
        if replay := self._replay(request):
            return replay
        items = form.get("line_items") or []
        if not items or items[0].get("price") not in self.prices:
            return _error(400, "invalid_request_error", "No such price", "line_items")
        price = self.prices[items[0]["price"]]
        quantity = int(items[0].get("quantity") or 1)
        session = fixture("stripe/objects/checkout.session.json")
        sid = f"cs_test_{secrets.token_hex(16)}"
        session.update(
            id=sid,
            customer=form.get("customer"),
            client_reference_id=form.get("client_reference_id"),
            metadata=form.get("metadata") or {},
            mode=form.get("mode", "subscription"),
            status="open",
            payment_status="unpaid",
            subscription=None,
            success_url=form.get("success_url"),
            cancel_url=form.get("cancel_url"),
            amount_subtotal=price["unit_amount"] * quantity,
            amount_total=price["unit_amount"] * quantity,
            currency=price["currency"],
            created=int(time.time()),
            expires_at=int(time.time()) + 86400,
            url=f"{self.public_url}/pay/{sid}",
        )
        # Kept beside the session for complete_checkout (Stripe keeps them internally too).
        session["_line_items"] = [{"price": price["id"], "quantity": quantity}]
        session["_subscription_data"] = form.get("subscription_data") or {}
        self.sessions[sid] = session
        return self._answer(request, _public(session))

    async def get_session(self, request: Request) -> Response:
        session = self.sessions.get(request.path_params["sid"])
        if session is None:
            return _error(404, "invalid_request_error", "No such checkout.session", "id")
        return JSONResponse(_public(session))

    async def create_portal(self, request: Request) -> Response:
        form = await self._form(request)
        if replay := self._replay(request):
            return replay
        if not str(form.get("customer", "")).startswith("cus_"):
            return _error(400, "invalid_request_error", "customer is required", "customer")
        portal = fixture("stripe/objects/billing_portal.session.json")
        pid = f"bps_{secrets.token_hex(12)}"
        portal.update(
            id=pid,
            customer=form["customer"],
            return_url=form.get("return_url"),
            created=int(time.time()),
            livemode=False,
            url=f"{self.public_url}/portal/{pid}",
        )
        return self._answer(request, portal)

    async def get_price(self, request: Request) -> Response:
        price = self.prices.get(request.path_params["pid"])
        if price is None:
            return _error(404, "invalid_request_error", "No such price", "id")
        return JSONResponse(price)

    async def list_prices(self, request: Request) -> Response:
        listing = fixture("stripe/objects/price.list.json")
        listing["data"] = list(self.prices.values())
        return JSONResponse(listing)

    # --- everything else: localstripe, with the API gaps bridged ---------------------------

    async def proxy(self, request: Request) -> Response:
        path = "/" + request.path_params["path"]
        await self._form(request)
        for prefix, failure in list(self.failures.items()):
            if path.startswith(prefix) and failure[1] > 0:
                failure[1] -= 1
                return _error(failure[0], "api_error", "injected failure", None)
        body = await request.body()
        if request.method == "POST" and path.startswith("/v1/subscriptions"):
            body = _bridge_subscription_params(body)
        reply = await self._client.request(
            request.method,
            path,
            params=list(request.query_params.multi_items()),
            content=body,
            headers={
                "authorization": request.headers.get("authorization", ""),
                "content-type": request.headers.get("content-type", "application/x-www-form-urlencoded"),
            },
        )
        if path.startswith("/v1/subscriptions") and reply.status_code == 200:
            data = reply.json()
            for sub in data.get("data", []) if data.get("object") == "list" else [data]:
                _modernize_subscription(sub)
            return JSONResponse(data)
        return Response(reply.content, reply.status_code, media_type="application/json")

    # --- test helpers (called from the tests' thread) ---------------------------------------

    def fail(self, path_prefix: str, status: int = 500, times: int = 1) -> None:
        """Answer the next ``times`` requests under ``path_prefix`` with ``status``."""
        self.failures[path_prefix] = [status, times]

    def register_price(self, price_id: str, name: str, unit_amount: int, currency: str = "usd") -> None:
        """A price served here, and a localstripe plan of the same id for subscriptions."""
        with httpx.Client(base_url=self.localstripe_url, auth=(API_KEY, ""), timeout=10) as c:
            product = f"prod_{price_id.removeprefix('price_')}"
            c.post("/v1/products", data={"id": product, "name": name}).raise_for_status()
            c.post(
                "/v1/plans",
                data={
                    "id": price_id,
                    "product": product,
                    "amount": unit_amount,
                    "currency": currency,
                    "interval": "month",
                },
            ).raise_for_status()
        price = fixture("stripe/objects/price.json")
        price.update(id=price_id, product=product, unit_amount=unit_amount, unit_amount_decimal=str(unit_amount))
        price.update(currency=currency, nickname=name, created=int(time.time()))
        price["transform_quantity"] = None
        self.prices[price_id] = price

    def complete_checkout(self, session_id: str) -> dict[str, Any]:
        """What the hosted page does when the customer pays: a card on the customer, the
        subscription created, the session complete. Returns the completed session object."""
        session = self.sessions[session_id]
        sub_data = session["_subscription_data"]
        with httpx.Client(base_url=self.localstripe_url, auth=(API_KEY, ""), timeout=10) as c:
            card = {"card[number]": "4242424242424242", "card[exp_month]": 12, "card[exp_year]": 2030, "card[cvc]": 123}
            token = c.post("/v1/tokens", data=card).json()["id"]
            c.post(f"/v1/customers/{session['customer']}/sources", data={"source": token}).raise_for_status()
            form: dict[str, Any] = {
                "customer": session["customer"],
                "items[0][plan]": session["_line_items"][0]["price"],
                "items[0][quantity]": session["_line_items"][0]["quantity"],
            }
            for key, value in (sub_data.get("metadata") or {}).items():
                form[f"metadata[{key}]"] = value
            if sub_data.get("trial_period_days"):
                form["trial_period_days"] = sub_data["trial_period_days"]
            subscription = c.post("/v1/subscriptions", data=form)
            subscription.raise_for_status()
        session.update(status="complete", payment_status="paid", subscription=subscription.json()["id"])
        return _public(session)

    def subscription(self, subscription_id: str) -> dict[str, Any]:
        with httpx.Client(base_url=self.localstripe_url, auth=(API_KEY, ""), timeout=10) as c:
            data = c.get(f"/v1/subscriptions/{subscription_id}").json()
        return _modernize_subscription(data)

    def update_subscription(self, subscription_id: str, **fields: Any) -> dict[str, Any]:
        """A change made on the provider's side (dashboard, portal), not through the service."""
        with httpx.Client(base_url=self.localstripe_url, auth=(API_KEY, ""), timeout=10) as c:
            reply = c.post(f"/v1/subscriptions/{subscription_id}", data={k: str(v).lower() for k, v in fields.items()})
            reply.raise_for_status()
        return _modernize_subscription(reply.json())


def _public(session: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in session.items() if not k.startswith("_")}


def _error(status: int, kind: str, message: str, param: str | None) -> JSONResponse:
    return JSONResponse({"error": {"type": kind, "message": message, "param": param}}, status)


def _bridge_subscription_params(body: bytes) -> bytes:
    pairs = []
    for key, value in parse_qsl(body.decode(), keep_blank_values=True):
        if re.fullmatch(r"items\[\d+\]\[price\]", key):
            key = key.replace("[price]", "[plan]")
        elif key == "proration_behavior":
            key, value = "prorate", "true" if value == "create_prorations" else "false"
        pairs.append((key, value))
    return urlencode(pairs).encode()


def _modernize_subscription(sub: dict[str, Any]) -> dict[str, Any]:
    for item in (sub.get("items") or {}).get("data") or []:
        if item.get("plan") and not item.get("price"):
            item["price"] = {**item["plan"], "object": "price", "unit_amount": item["plan"].get("amount")}
    if sub.get("status") == "incomplete" and sub.get("trial_period_days"):
        start = int(sub.get("start_date") or time.time())
        sub["status"] = "trialing"
        sub["trial_start"] = start
        sub["trial_end"] = start + int(sub["trial_period_days"]) * 86400
    return sub
