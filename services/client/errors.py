"""The one exception the client raises: the spec's error body plus the HTTP status."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError


class ApiError(Exception):
    """An answer outside 2xx (or no answer at all: ``status`` 0, code ``service_unavailable``)."""

    def __init__(self, status: int, code: str, error: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {error}" if status == 0 else f"{status} {code}: {error}")
        self.status = status
        self.code = code
        self.error = error
        self.details: dict[str, Any] = details or {}

    def body(self) -> dict[str, Any]:
        """The spec's error shape, as a tool or ``--json`` prints it."""
        return {"error": self.error, "code": self.code, "details": self.details}

    @classmethod
    def from_response(cls, status: int, body: Any, reason: str = "") -> ApiError:
        if isinstance(body, dict) and isinstance(body.get("code"), str):
            details = body.get("details")
            return cls(status, body["code"], str(body.get("error", "")), details if isinstance(details, dict) else {})
        # Not our error shape (a proxy's page, a crashed upstream): keep what can be said.
        code = "internal_error" if status >= 500 else "rate_limited" if status == 429 else "bad_request"
        return cls(status, code, reason or f"HTTP {status}", {"body": str(body)[:500]} if body else {})

    @classmethod
    def invalid(cls, exc: ValidationError) -> ApiError:
        """A request model's refusal, before anything is sent, in the shape the gateway would answer."""
        errors = [{"field": ".".join(str(part) for part in e["loc"]), "message": e["msg"]} for e in exc.errors()]
        field = errors[0]["field"] if errors else ""
        message = errors[0]["message"] if errors else str(exc)
        return cls(422, "validation_failed", f"invalid {field}: {message}", {"field": field, "errors": errors})
