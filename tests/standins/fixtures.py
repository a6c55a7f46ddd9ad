"""The published provider fixtures, and Stripe's webhook signature built exactly as Stripe does."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import secrets
import time
from functools import cache
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@cache
def _load(relative: str) -> Any:
    return json.loads((FIXTURES / relative).read_text())


def fixture(relative: str) -> Any:
    """A fresh deep copy of a fixture (``stripe/objects/price.json``, ``github/...``)."""
    return copy.deepcopy(_load(relative))


def stripe_event(
    event_type: str, obj: dict[str, Any] | None = None, *, created: int | None = None, event_id: str | None = None
) -> dict[str, Any]:
    """A webhook event from the fixture of its type; ``obj`` is merged over the fixture's
    ``data.object`` so tests override only the ids that link it to their account."""
    event = fixture(f"stripe/{event_type}.json")
    event["data"]["object"].update(obj or {})
    event["id"] = event_id or f"evt_{secrets.token_hex(12)}"
    event["created"] = int(time.time()) if created is None else created
    return event


def sign(body: bytes, secret: str, timestamp: int | None = None) -> str:
    """``Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>``."""
    t = int(time.time()) if timestamp is None else timestamp
    mac = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def signed(event: dict[str, Any], secret: str, timestamp: int | None = None) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(event).encode()
    return body, {"Stripe-Signature": sign(body, secret, timestamp), "Content-Type": "application/json"}
