"""The gateway's one error edge: every failure leaves as ``{"error", "code", "details"}``."""

from __future__ import annotations

import logging
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import iter_route_contexts
from starlette.exceptions import HTTPException as StarletteHTTPException

from services.gateway.deps import current_principal, uses_principal
from services.kit.errors import ServiceError, error_body

log = logging.getLogger(__name__)


class OrjsonResponse(JSONResponse):
    """JSON bodies rendered by orjson (FastAPI's own OrjsonResponse is deprecated)."""

    def render(self, content: object) -> bytes:
        return orjson.dumps(content)


def error_response(
    status: int,
    code: str,
    message: str,
    details: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> OrjsonResponse:
    return OrjsonResponse(error_body(code, message, details), status_code=status, headers=headers)


def _field(loc: tuple[int | str, ...]) -> str:
    # Only the first element names where the input was (a body field may itself be "path").
    parts = [str(p) for p in (loc[1:] if loc and loc[0] in ("body", "query", "path", "header") else loc)]
    return ".".join(parts) or (str(loc[-1]) if loc else "")


def _headers(request: Request, status: int, code: str, details: dict[str, Any]) -> dict[str, str] | None:
    """The headers an error status promises: how to authenticate (401, RFC 6750), when to
    come back (429 and 503, ``Retry-After``)."""
    if status == 401 and code in ("not_authenticated", "invalid_token"):
        return {"WWW-Authenticate": "Bearer" if code == "not_authenticated" else 'Bearer error="invalid_token"'}
    if status in (429, 503):
        retry = details.get("retry_after")
        if retry is None and status == 503:
            retry = request.app.state.settings.unavailable_retry_after_seconds
        if retry is not None:
            return {"Retry-After": str(max(1, int(retry)))}
    return None


def allowed_methods(request: Request) -> list[str]:
    """The methods of the resource the path names: every route of the first path template that
    matches it, as the OpenAPI document lists them (the 405 FastAPI raises names one route's)."""
    path = request.scope["path"]
    routes = [r for r in iter_route_contexts(request.app.router.routes) if getattr(r, "path_regex", None)]
    template = next((r.path_format for r in routes if r.methods and r.path_regex.match(path)), None)
    methods: set[str] = set()
    for route in routes:
        if route.path_format == template and route.methods:
            methods |= route.methods
    return sorted(methods)


async def _authentication_failure(request: Request) -> ServiceError | None:
    """FastAPI parses a JSON body before it runs a route's dependencies; authentication still
    answers first, so a caller without a valid token learns nothing from a body check."""
    if not uses_principal(getattr(request.scope.get("route"), "dependant", None)):
        return None
    try:
        await current_principal(request)
    except ServiceError as exc:
        return exc
    return None


async def service_error(request: Request, exc: ServiceError) -> OrjsonResponse:
    status = exc.http_status
    headers = _headers(request, status, exc.code, exc.details)
    return error_response(status, exc.code, exc.message, exc.details, headers)


async def validation_error(request: Request, exc: RequestValidationError) -> OrjsonResponse:
    errors = exc.errors()
    # A body that is not JSON at all is a malformed request, not a schema failure.
    if any(e.get("type") == "json_invalid" for e in errors):
        refused = await _authentication_failure(request)
        if refused is not None:
            return await service_error(request, refused)
        return error_response(400, "bad_request", "request body is not valid JSON", {"field": "body"})
    first = errors[0] if errors else {}
    details = {
        "field": _field(tuple(first.get("loc", ()))),
        "errors": [{"field": _field(tuple(e.get("loc", ()))), "message": e.get("msg", "")} for e in errors],
    }
    return error_response(422, "validation_failed", f"invalid input: {details['field']}", details)


async def http_error(request: Request, exc: StarletteHTTPException) -> OrjsonResponse:
    if exc.status_code == 404:
        return error_response(404, "not_found", f"no route {request.method} {request.url.path}")
    if exc.status_code == 405:
        allowed = allowed_methods(request)
        return error_response(
            405,
            "method_not_allowed",
            f"{request.method} is not allowed here",
            {"allowed": allowed},
            {"Allow": ", ".join(allowed)},
        )
    code = {400: "bad_request", 401: "not_authenticated", 413: "payload_too_large"}.get(
        exc.status_code, "internal_error"
    )
    headers = _headers(request, exc.status_code, code, {})
    return error_response(exc.status_code, code, str(exc.detail), None, headers)


async def unexpected(request: Request, exc: Exception) -> OrjsonResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return error_response(500, "internal_error", "internal error")


def install(app: FastAPI) -> None:
    app.add_exception_handler(ServiceError, service_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, http_error)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, unexpected)
