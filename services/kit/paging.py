"""Page cursors: one spelling and one refusal for every paginated read.

A cursor is ``<kind><value>``: the kind (one letter) names the listing that issued it, and each
kind's whole cursor has one pattern (``CURSOR_PATTERNS``). The gateway publishes that pattern
per route in the OpenAPI document and the services decode with the same one, so any cursor the
document admits is one the service reads (a page past the end is empty, never an error), and
anything else, another listing's cursor included, is ``validation_failed`` with
``details.field = "cursor"`` (422 at the gateway), never a server error. Clients still send
back a page's ``next_cursor`` as they got it.
"""

from __future__ import annotations

import re

from services.kit.errors import ServiceError

OFFSET = "o"  # the indexer's read documents: the next item's position, "o40"
REPOSITORIES = "r"  # the repository list, newest first: the last one's keyset, "r<created_at>.<id>"
# Whole cursors, "" (the first page) included. Ids are ``services.kit.db.new_id`` (uuid4 hex).
CURSOR_PATTERNS: dict[str, str] = {
    OFFSET: r"^(o[0-9]{1,12})?$",
    REPOSITORIES: r"^(r[0-9]{1,18}\.[0-9a-f]{32})?$",
}
MAX_CURSOR_LENGTH = 52  # the longest a pattern admits: "r" + 18 digits + "." + 32
_COMPILED = {kind: re.compile(pattern) for kind, pattern in CURSOR_PATTERNS.items()}


def invalid_cursor(reason: str = "invalid cursor") -> ServiceError:
    return ServiceError("validation_failed", reason, {"field": "cursor"})


def encode_cursor(kind: str, value: str) -> str:
    cursor = kind + value
    if not cursor or not _COMPILED[kind].fullmatch(cursor):
        raise ValueError(f"{cursor!r} is not a cursor of kind {kind!r}")  # our own bug, never the client's
    return cursor


def decode_cursor(cursor: str, kind: str) -> str | None:
    """The value a cursor of ``kind`` carries; ``None`` for no cursor (the first page)."""
    if not cursor:
        return None
    if not _COMPILED[kind].fullmatch(cursor):
        raise invalid_cursor()
    return cursor[len(kind) :]


def encode_offset(offset: int) -> str:
    return encode_cursor(OFFSET, str(offset))


def decode_offset(cursor: str) -> int:
    """An offset cursor's position; 0 for the first page."""
    value = decode_cursor(cursor, OFFSET)
    return int(value) if value is not None else 0


def check_limit(limit: int, default: int, maximum: int) -> int:
    """0 means the listing's default; above the maximum is clamped; negative is refused."""
    if limit < 0:
        raise ServiceError("validation_failed", "limit must be positive", {"field": "limit"})
    return min(limit or default, maximum)
