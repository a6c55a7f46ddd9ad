"""Token format: ``<prefix>_<30 base62 chars><6 char checksum>`` (like GitHub's ``ghp_``),
so leaked tokens are recognizable and typos are rejected without a database lookup.
Only the SHA-256 of a token is ever stored."""

from __future__ import annotations

import hashlib
import secrets
import string
import zlib

ALPHABET = string.digits + string.ascii_letters
PERSONAL_PREFIX = "crp"
SESSION_PREFIX = "crs"
_BODY = 30
_CHECK = 6


def _base62(n: int, width: int) -> str:
    out = []
    for _ in range(width):
        n, r = divmod(n, 62)
        out.append(ALPHABET[r])
    return "".join(reversed(out))


def _checksum(body: str) -> str:
    return _base62(zlib.crc32(body.encode()), _CHECK)


def generate(prefix: str) -> str:
    body = "".join(secrets.choice(ALPHABET) for _ in range(_BODY))
    return f"{prefix}_{body}{_checksum(body)}"


def parse(token: str) -> str | None:
    """The token's kind prefix when well-formed (checksum included), else None."""
    prefix, sep, rest = token.partition("_")
    if not sep or prefix not in (PERSONAL_PREFIX, SESSION_PREFIX) or len(rest) != _BODY + _CHECK:
        return None
    if any(c not in ALPHABET for c in rest):
        return None
    body, check = rest[:_BODY], rest[_BODY:]
    if not secrets.compare_digest(check, _checksum(body)):
        return None
    return prefix


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
