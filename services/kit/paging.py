"""Opaque page cursors: one spelling and one refusal for every paginated read.

A cursor is ``base64url("<kind>:<value>")``; ``kind`` names the listing that issued it, so a
cursor of one listing handed to another is refused like a garbled one: ``validation_failed``
with ``details.field = "cursor"`` (422 at the gateway), never a server error.
"""

from __future__ import annotations

import base64
import binascii

from services.kit.errors import ServiceError

MAX_CURSOR_LENGTH = 200
# What the gateway accepts before any service decodes it (base64url, padded or not).
CURSOR_PATTERN = r"^[A-Za-z0-9_-]*={0,2}$"


def invalid_cursor(reason: str = "invalid cursor") -> ServiceError:
    return ServiceError("validation_failed", reason, {"field": "cursor"})


def encode_cursor(kind: str, value: str) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{value}".encode()).decode()


def _parts(cursor: str) -> tuple[str, str]:
    """A cursor's (kind, value), or ``ValueError``."""
    if len(cursor) > MAX_CURSOR_LENGTH:
        raise ValueError("cursor is too long")
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode()
    except (ValueError, binascii.Error, UnicodeError):
        raise ValueError("invalid cursor") from None
    kind, sep, value = text.partition(":")
    if not sep or not kind.isalpha():
        raise ValueError("invalid cursor")
    return kind, value


def decode_cursor(cursor: str, kind: str) -> str | None:
    """The value a cursor of ``kind`` carries; ``None`` for no cursor (the first page)."""
    if not cursor:
        return None
    try:
        found, value = _parts(cursor)
    except ValueError as exc:
        raise invalid_cursor(str(exc)) from None
    if found != kind:
        raise invalid_cursor()
    return value


def decode_offset(cursor: str, kind: str = "o") -> int:
    """An offset cursor's position; 0 for the first page."""
    value = decode_cursor(cursor, kind)
    if value is None:
        return 0
    if not value.isdigit() or len(value) > 12:
        raise invalid_cursor()
    return int(value)


def check_limit(limit: int, default: int, maximum: int) -> int:
    """0 means the listing's default; above the maximum is clamped; negative is refused."""
    if limit < 0:
        raise ServiceError("validation_failed", "limit must be positive", {"field": "limit"})
    return min(limit or default, maximum)


def cursor_syntax(cursor: str) -> str:
    """What any cursor must look like, whichever listing issued it (the gateway's check):
    ``ValueError`` otherwise, so a garbled cursor is refused before it reaches a service."""
    if cursor:
        _parts(cursor)
    return cursor
