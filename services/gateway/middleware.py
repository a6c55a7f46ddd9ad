"""Request id and metrics for every request, as plain ASGI (cheaper than BaseHTTPMiddleware)."""

from __future__ import annotations

import logging
import re
import time

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.kit.context import new_request_id, request_id_var
from services.kit.errors import error_body
from services.kit.metrics import HTTP_LATENCY, HTTP_REQUESTS

log = logging.getLogger("services.gateway.access")
_PROBES = frozenset({"/readyz", "/healthz"})
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = ""
        for key, value in scope.get("headers", ()):
            if key == b"x-request-id":
                incoming = value.decode("latin-1")
                break
        rid = incoming if _SAFE_ID.match(incoming) else new_request_id()
        token = request_id_var.set(rid)
        start = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", "unmatched")
            elapsed = time.perf_counter() - start
            HTTP_REQUESTS.labels(path, scope["method"], str(status)).inc()
            HTTP_LATENCY.labels(path, scope["method"]).observe(elapsed)
            # A probe's 503 is its answer (not ready yet), not a failure to warn about.
            if status >= 500 and path not in _PROBES:
                log.warning("%s %s -> %s in %.1f ms", scope["method"], scope["path"], status, elapsed * 1000)
            request_id_var.reset(token)


class BodyLimitMiddleware:
    """Refuse request bodies over the configured bound (413 ``payload_too_large``): by
    Content-Length before any handler runs, and by counting the chunks of a streamed body as
    they are read, whoever reads them and whatever they do with the failure."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope.get("headers", ()):
            if key == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._refuse(send)
                return
        seen = 0
        over = False

        async def counted() -> Message:
            nonlocal seen, over
            if over:
                raise _TooLarge
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    over = True
                    raise _TooLarge
            return message

        started = False

        async def guarded_send(message: Message) -> None:
            # A handler that caught the overflow (FastAPI turns a failed body read into its own
            # 400) must not answer: the 413 below does, whatever the app tried to say.
            nonlocal started
            if over:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, guarded_send)
        except _TooLarge:
            pass
        if over and not started:
            await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        body = orjson.dumps(
            error_body(
                "payload_too_large",
                f"request body exceeds {self.max_bytes} bytes",
                {"max_bytes": self.max_bytes},
            )
        )
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass
