"""Per-request context (request id, caller) carried across awaits with contextvars."""

from __future__ import annotations

import secrets
from contextvars import ContextVar

request_id_var: ContextVar[str] = ContextVar("request_id", default="")


def new_request_id() -> str:
    return secrets.token_hex(8)


def current_request_id() -> str:
    return request_id_var.get()
