"""The gateway's one error edge: every failure leaves as ``{"error", "code", "details"}``."""

from __future__ import annotations

import logging

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from services.api.responses import ErrorBody
from services.kit.errors import ServiceError, error_body

log = logging.getLogger(__name__)


class OrjsonResponse(JSONResponse):
    """JSON bodies rendered by orjson (FastAPI's own OrjsonResponse is deprecated)."""

    def render(self, content: object) -> bytes:
        return orjson.dumps(content)


ERROR_RESPONSES: dict[int | str, dict] = {
    status: {"model": ErrorBody, "description": desc}
    for status, desc in {
        400: "Malformed body or invalid input",
        401: "Missing or invalid token",
        403: "Not authorized (wrong org or role)",
        404: "Not found or not visible to the caller",
        409: "State conflict",
        422: "Validation failed",
        429: "Rate limited (see Retry-After)",
        500: "Server error",
    }.items()
}
ERROR_RESPONSES[429]["headers"] = {
    "Retry-After": {"description": "Seconds to wait before retrying", "schema": {"type": "integer"}}
}


def error_response(status: int, code: str, message: str, details: dict | None = None, headers: dict | None = None):
    return OrjsonResponse(error_body(code, message, details), status_code=status, headers=headers)


def _field(loc: tuple) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or (str(loc[-1]) if loc else "")


def install(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def service_error(request: Request, exc: ServiceError) -> OrjsonResponse:
        headers = None
        if exc.code == "rate_limited" and "retry_after" in exc.details:
            headers = {"Retry-After": str(int(exc.details["retry_after"]))}
        return error_response(exc.http_status, exc.code, exc.message, exc.details, headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> OrjsonResponse:
        errors = exc.errors()
        # A body that is not JSON at all is a malformed request, not a schema failure.
        if any(e.get("type") == "json_invalid" for e in errors):
            return error_response(400, "validation_failed", "request body is not valid JSON", {"field": "body"})
        first = errors[0] if errors else {}
        details = {
            "field": _field(tuple(first.get("loc", ()))),
            "errors": [{"field": _field(tuple(e.get("loc", ()))), "message": e.get("msg", "")} for e in errors],
        }
        return error_response(422, "validation_failed", f"invalid input: {details['field']}", details)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> OrjsonResponse:
        if exc.status_code == 404:
            return error_response(404, "not_found", f"no route {request.method} {request.url.path}")
        if exc.status_code == 405:
            return error_response(405, "method_not_allowed", f"{request.method} is not allowed here")
        code = {400: "bad_request", 401: "not_authenticated", 413: "validation_failed"}.get(
            exc.status_code, "internal_error"
        )
        return error_response(exc.status_code, code, str(exc.detail))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> OrjsonResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, "internal_error", "internal error")
