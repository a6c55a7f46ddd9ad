"""Plain ASGI in front of the gateway: the browser's way to /v1 (``/ui/api/*``: the session cookie
becomes the bearer token, after the CSRF check) and the security headers of every page."""

from __future__ import annotations

import orjson
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.kit.errors import error_body
from services.web.session import CSRF_HEADER, csrf_ok, session_token

PROXY = "/ui/api/"
# No inline script anywhere; styles only from files (scripts set element styles through the
# CSSOM, which style-src does not govern). Pages may not be framed (clickjacking).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
PAGE_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
DROPPED = frozenset({b"cookie", b"authorization", CSRF_HEADER.encode()})


def is_page(path: str) -> bool:
    """Everything but the API and the webhooks is the dashboard's (its pages, assets, /v1/docs)."""
    return path == "/v1/docs" or not path.startswith(("/v1/", "/webhooks/"))


class WebEdge:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif scope["path"].startswith(PROXY):
            await self.proxy(scope, receive, send)
        elif is_page(scope["path"]):
            await self.app(scope, receive, _with_headers(send, PAGE_HEADERS))
        else:
            await self.app(scope, receive, send)

    async def proxy(self, scope: Scope, receive: Receive, send: Send) -> None:
        conn = HTTPConnection(scope)
        token = session_token(conn)
        if not token:
            await _refuse(send, 401, "not_authenticated", "sign in first")
            return
        if not csrf_ok(conn, scope["method"], token):
            await _refuse(send, 403, "forbidden", "missing or wrong CSRF token, or a request from another site")
            return
        rest = scope["path"][len(PROXY) - 1 :]
        raw = scope.get("raw_path") or b""
        raw_rest = raw[len(PROXY) - 1 :] if raw.startswith(PROXY.encode()) else rest.encode()
        headers = [(k, v) for k, v in scope["headers"] if k not in DROPPED]
        headers.append((b"authorization", b"Bearer " + token.encode()))
        inner = {**scope, "path": "/v1" + rest, "raw_path": b"/v1" + raw_rest, "headers": headers}
        # The whole application again (scope["app"], set by Starlette), with its middleware:
        # the same edge, limits and error bodies as any other client of /v1.
        await scope["app"](inner, receive, _with_headers(send, [(b"cache-control", b"no-store")]))


def _with_headers(send: Send, extra: list[tuple[bytes, bytes]]) -> Send:
    async def sender(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *extra]
        await send(message)

    return sender


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    body = orjson.dumps(error_body(code, message))
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
