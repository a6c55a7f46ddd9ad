"""One error model: domain exceptions carry the spec's machine code; one table gives each code
its gRPC status (between services), its HTTP status (at the gateway) and whether it is transient
(worth retrying unchanged: every consumer and worker asks ``ServiceError.transient``)."""

from __future__ import annotations

from typing import Any, NamedTuple

import grpc


class ErrorCode(NamedTuple):
    grpc: grpc.StatusCode
    http: int
    transient: bool = False


# code -> (gRPC status, HTTP status, transient). The HTTP side follows the spec's status table;
# the gRPC side follows the grpc-gateway convention so the mapping is invertible. ``transient``:
# the same request may succeed later with nothing changed (a peer or the code host down, slow or
# busy, an index still running), so a consumer or worker retries it (within its attempts) instead
# of failing the job for good. Every other code needs a change first: input, plan, state.
CODE_TABLE: dict[str, ErrorCode] = {
    "not_authenticated": ErrorCode(grpc.StatusCode.UNAUTHENTICATED, 401),
    "invalid_token": ErrorCode(grpc.StatusCode.UNAUTHENTICATED, 401),
    "oauth_failed": ErrorCode(grpc.StatusCode.UNAUTHENTICATED, 401),
    "forbidden": ErrorCode(grpc.StatusCode.PERMISSION_DENIED, 403),
    "repo_not_found": ErrorCode(grpc.StatusCode.NOT_FOUND, 404),
    "not_found": ErrorCode(grpc.StatusCode.NOT_FOUND, 404),
    "file_not_found": ErrorCode(grpc.StatusCode.NOT_FOUND, 404),
    "repo_not_indexed": ErrorCode(grpc.StatusCode.FAILED_PRECONDITION, 409),
    "index_in_progress": ErrorCode(grpc.StatusCode.ABORTED, 409, transient=True),
    "index_failed": ErrorCode(grpc.StatusCode.FAILED_PRECONDITION, 409),
    "no_files": ErrorCode(grpc.StatusCode.INVALID_ARGUMENT, 400),
    "unsupported_file_type": ErrorCode(grpc.StatusCode.INVALID_ARGUMENT, 422),
    "plan_required": ErrorCode(grpc.StatusCode.PERMISSION_DENIED, 403),
    "quota_exceeded": ErrorCode(grpc.StatusCode.RESOURCE_EXHAUSTED, 429),
    "seat_limit_reached": ErrorCode(grpc.StatusCode.FAILED_PRECONDITION, 409),
    "payment_failed": ErrorCode(grpc.StatusCode.FAILED_PRECONDITION, 402),
    "trial_already_used": ErrorCode(grpc.StatusCode.FAILED_PRECONDITION, 409),
    "conflict": ErrorCode(grpc.StatusCode.ALREADY_EXISTS, 409),
    "invalid_signature": ErrorCode(grpc.StatusCode.INVALID_ARGUMENT, 400),
    "unknown_event": ErrorCode(grpc.StatusCode.OK, 200),
    "bad_request": ErrorCode(grpc.StatusCode.INVALID_ARGUMENT, 400),
    "payload_too_large": ErrorCode(grpc.StatusCode.INVALID_ARGUMENT, 413),
    "validation_failed": ErrorCode(grpc.StatusCode.INVALID_ARGUMENT, 422),
    "method_not_allowed": ErrorCode(grpc.StatusCode.UNIMPLEMENTED, 405),
    "rate_limited": ErrorCode(grpc.StatusCode.RESOURCE_EXHAUSTED, 429, transient=True),
    "not_configured": ErrorCode(grpc.StatusCode.UNIMPLEMENTED, 501),
    "not_implemented": ErrorCode(grpc.StatusCode.UNIMPLEMENTED, 501),
    "service_unavailable": ErrorCode(grpc.StatusCode.UNAVAILABLE, 503, transient=True),
    "upstream_error": ErrorCode(grpc.StatusCode.UNAVAILABLE, 502, transient=True),
    "timeout": ErrorCode(grpc.StatusCode.DEADLINE_EXCEEDED, 504, transient=True),
    "internal_error": ErrorCode(grpc.StatusCode.INTERNAL, 500, transient=True),
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
        return CODE_TABLE[self.code].grpc

    @property
    def http_status(self) -> int:
        return self._http_status or CODE_TABLE[self.code].http

    @property
    def transient(self) -> bool:
        """Worth another attempt later, unchanged (the table's ``transient`` column)."""
        return CODE_TABLE[self.code].transient

    def __repr__(self) -> str:
        return f"ServiceError({self.code!r}, {self.message!r})"


def http_status_for(code: str, grpc_status: grpc.StatusCode | None = None) -> int:
    if code in CODE_TABLE:
        return CODE_TABLE[code].http
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
