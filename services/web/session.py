"""The browser session (OWASP session management): the API token lives in an HttpOnly,
SameSite cookie (``Secure`` and ``__Host-`` outside loopback); state-changing calls carry a CSRF
token derived from it and must come from this origin. docs/dashboard.md has the design."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

from starlette.requests import HTTPConnection
from starlette.responses import Response

SESSION = "cr_session"
OAUTH_STATE = "cr_oauth_state"
CSRF_HEADER = "x-csrf-token"
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
# A personal access token signs in for at most this long (absolute timeout); a code-host
# session token for its own lifetime, if shorter.
MAX_AGE_SECONDS = 8 * 3600
OAUTH_STATE_MAX_AGE_SECONDS = 600
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_secure(conn: HTTPConnection) -> bool:
    """Secure cookies everywhere but on loopback, where development runs on plain http."""
    return conn.url.scheme == "https" or (conn.url.hostname or "") not in LOOPBACK


def cookie_name(conn: HTTPConnection, base: str) -> str:
    # __Host-: the browser refuses it unless Secure, Path=/ and no Domain, so no sibling
    # subdomain can plant or shadow it.
    return f"__Host-{base}" if is_secure(conn) else base


def session_token(conn: HTTPConnection) -> str:
    return conn.cookies.get(cookie_name(conn, SESSION), "")


def csrf_token(session: str) -> str:
    """Bound to the session (a keyed hash of its token), so it changes with every sign-in and
    needs no server-side storage; only a page of this origin can read it (GET /ui/session)."""
    return hmac.new(session.encode(), b"codereview dashboard csrf", hashlib.sha256).hexdigest()


def same_origin(conn: HTTPConnection) -> bool:
    """Fetch metadata and Origin, when the browser sends them, must say this origin."""
    site = conn.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = conn.headers.get("origin")
    if origin is not None:
        return urlsplit(origin).netloc == conn.headers.get("host", "")
    return True


def csrf_ok(conn: HTTPConnection, method: str, session: str) -> bool:
    if method in SAFE_METHODS:
        return True
    sent = conn.headers.get(CSRF_HEADER, "")
    return bool(sent) and hmac.compare_digest(sent, csrf_token(session)) and same_origin(conn)


def set_cookie(response: Response, conn: HTTPConnection, base: str, value: str, max_age: int) -> None:
    response.set_cookie(
        cookie_name(conn, base),
        value,
        max_age=max_age,
        path="/",
        secure=is_secure(conn),
        httponly=True,
        # Lax, not Strict: the code host's redirect back to the callback is a cross-site
        # navigation, and the state cookie must come with it. CSRF tokens cover the rest.
        samesite="lax",
    )


def clear_cookie(response: Response, conn: HTTPConnection, base: str) -> None:
    response.delete_cookie(cookie_name(conn, base), path="/", secure=is_secure(conn), httponly=True, samesite="lax")
