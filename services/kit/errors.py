"""One error model: domain exceptions carry the spec's machine code; one table maps it
to a gRPC status (between services) and one to an HTTP status (at the gateway)."""

from __future__ import annotations

from typing import Any

import grpc

# code -> (gRPC status, HTTP status). The HTTP side follows the spec's status table;
# the gRPC side follows the grpc-gateway convention so the mapping is invertible.
CODE_TABLE: dict[str, tuple[grpc.StatusCode, int]] = {
    "not_authenticated": (grpc.StatusCode.UNAUTHENTICATED, 401),
    "invalid_token": (grpc.StatusCode.UNAUTHENTICATED, 401),
    "oauth_failed": (grpc.StatusCode.UNAUTHENTICATED, 401),
    "forbidden": (grpc.StatusCode.PERMISSION_DENIED, 403),
    "repo_not_found": (grpc.StatusCode.NOT_FOUND, 404),
    "not_found": (grpc.StatusCode.NOT_FOUND, 404),
    "file_not_found": (grpc.StatusCode.NOT_FOUND, 404),
    "repo_not_indexed": (grpc.StatusCode.FAILED_PRECONDITION, 409),
    "index_in_progress": (grpc.StatusCode.ABORTED, 409),
    "index_failed": (grpc.StatusCode.FAILED_PRECONDITION, 409),
    "no_files": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    "unsupported_file_type": (grpc.StatusCode.INVALID_ARGUMENT, 422),
    "plan_required": (grpc.StatusCode.PERMISSION_DENIED, 403),
    "quota_exceeded": (grpc.StatusCode.RESOURCE_EXHAUSTED, 429),
    "seat_limit_reached": (grpc.StatusCode.FAILED_PRECONDITION, 409),
    "payment_failed": (grpc.StatusCode.FAILED_PRECONDITION, 402),
    "trial_already_used": (grpc.StatusCode.FAILED_PRECONDITION, 409),
    "conflict": (grpc.StatusCode.ALREADY_EXISTS, 409),
    "invalid_signature": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    "unknown_event": (grpc.StatusCode.OK, 200),
    "bad_request": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    "payload_too_large": (grpc.StatusCode.INVALID_ARGUMENT, 413),
    "validation_failed": (grpc.StatusCode.INVALID_ARGUMENT, 422),
    "method_not_allowed": (grpc.StatusCode.UNIMPLEMENTED, 405),
    "rate_limited": (grpc.StatusCode.RESOURCE_EXHAUSTED, 429),
    "not_configured": (grpc.StatusCode.UNIMPLEMENTED, 501),
    "not_implemented": (grpc.StatusCode.UNIMPLEMENTED, 501),
    "service_unavailable": (grpc.StatusCode.UNAVAILABLE, 503),
    "upstream_error": (grpc.StatusCode.UNAVAILABLE, 502),
    "timeout": (grpc.StatusCode.DEADLINE_EXCEEDED, 504),
    "internal_error": (grpc.StatusCode.INTERNAL, 500),
}

# For statuses that arrive without our error detail (a crashed peer, a deadline).
GRPC_TO_HTTP: dict[grpc.StatusCode, tuple[int, str]] = {
    grpc.StatusCode.INVALID_ARGUMENT: (400, "bad_request"),
    grpc.StatusCode.FAILED_PRECONDITION: (409, "conflict"),
    grpc.StatusCode.OUT_OF_RANGE: (400, "bad_request"),
    grpc.StatusCode.UNAUTHENTICATED: (401, "not_authenticated"),
    grpc.StatusCode.PERMISSION_DENIED: (403, "forbidden"),
    grpc.StatusCode.NOT_FOUND: (404, "not_found"),
    grpc.StatusCode.ALREADY_EXISTS: (409, "conflict"),
    grpc.StatusCode.ABORTED: (409, "conflict"),
    grpc.StatusCode.RESOURCE_EXHAUSTED: (429, "rate_limited"),
    grpc.StatusCode.CANCELLED: (499, "cancelled"),
    grpc.StatusCode.UNIMPLEMENTED: (501, "not_implemented"),
    grpc.StatusCode.UNAVAILABLE: (503, "service_unavailable"),
    grpc.StatusCode.DEADLINE_EXCEEDED: (504, "timeout"),
    grpc.StatusCode.INTERNAL: (500, "internal_error"),
    grpc.StatusCode.UNKNOWN: (500, "internal_error"),
    grpc.StatusCode.DATA_LOSS: (500, "internal_error"),
}


class ServiceError(Exception):
    """A failure the caller can act on, named by the spec's machine code."""

    def __init__(
        self, code: str, message: str, details: dict[str, Any] | None = None, *, http_status: int | None = None
    ) -> None:
        super().__init__(message)
        if code not in CODE_TABLE:
            raise ValueError(f"unknown error code {code!r}: add it to CODE_TABLE")
        self.code = code
        self.message = message
        self.details = details or {}
        # Where the spec fixes a status for one use of a code (the code-host webhook's
        # invalid_signature is 401, the payment webhook's 400), the edge may override the table.
        self._http_status = http_status

    @property
    def grpc_status(self) -> grpc.StatusCode:
        return CODE_TABLE[self.code][0]

    @property
    def http_status(self) -> int:
        return self._http_status or CODE_TABLE[self.code][1]

    def __repr__(self) -> str:
        return f"ServiceError({self.code!r}, {self.message!r})"


def http_status_for(code: str, grpc_status: grpc.StatusCode | None = None) -> int:
    if code in CODE_TABLE:
        return CODE_TABLE[code][1]
    if grpc_status is not None and grpc_status in GRPC_TO_HTTP:
        return GRPC_TO_HTTP[grpc_status][0]
    return 500


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The spec's error shape."""
    return {"error": message, "code": code, "details": details or {}}


def index_failed(repo: str, error_code: str | None, error: str | None) -> ServiceError:
    """No successful index yet and the last attempt errored out: the spec's ``index_failed``
    (clients poll the index status, fix the cause and trigger again)."""
    details = {"repo": repo, "state": "failed", "error_code": error_code or "", "error": error or ""}
    return ServiceError(
        "index_failed", f"the last index of this repository failed: {error or 'unknown error'}", details
    )
