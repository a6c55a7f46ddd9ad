"""The OpenAPI document's edge rules, derived in one place for every operation:

- the error statuses each operation really answers, each with the error body (``ErrorBody``) and the
  headers that status promises (401 ``WWW-Authenticate``, 429 and 503 ``Retry-After``);
- FastAPI's own 422 (``HTTPValidationError``) replaced by the body the gateway really sends;
- the few shapes a route cannot declare through its signature (a second content type, a body
  the route reads raw).

Statuses come from what an operation is (it needs a token, takes a body, names a resource in its
path) plus a table of the service error codes each operation can meet (``services.kit.errors``).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode
from starlette.routing import BaseRoute

from services.api.responses import ErrorBody
from services.api.schemas import AuditPreferencesPatch, ChatCompletion, CodeHostEvent, PaymentEvent
from services.gateway.deps import BEARER, uses_principal

ERROR_SCHEMA = {"$ref": "#/components/schemas/ErrorBody"}
DESCRIPTIONS: dict[int, str] = {
    400: "Malformed body (not JSON) or invalid input (`bad_request`, `invalid_signature`, `no_files`)",
    401: "Missing or invalid token (`not_authenticated`, `invalid_token`)",
    402: "The payment method was declined (`payment_failed`)",
    403: "Not authorized: wrong organization or role, or the plan lacks the feature (`forbidden`, `plan_required`)",
    404: "Not found or not visible to the caller (`repo_not_found`, `not_found`, `file_not_found`)",
    409: "State conflict (`repo_not_indexed`, `index_in_progress`, `index_failed`, `seat_limit_reached`, `conflict`)",
    413: "Request body too large (`payload_too_large`)",
    422: "Validation failed (`validation_failed`, `unsupported_file_type`); `details.field` names the input",
    429: "Rate limited or over a plan's cap (`rate_limited`, `quota_exceeded`); see Retry-After",
    500: "Server error (`internal_error`)",
    501: "Not configured in this deployment (`not_configured`)",
    502: "An upstream provider (payment provider, code host, AI upstream) failed (`upstream_error`)",
    503: "A database or backing service is unavailable (`service_unavailable`); see Retry-After",
    504: "A backing service did not answer in time (`timeout`)",
}
RETRY_AFTER = {"description": "Seconds to wait before retrying", "schema": {"type": "integer", "minimum": 1}}
HEADERS: dict[int, dict[str, Any]] = {
    401: {"WWW-Authenticate": {"description": "`Bearer` (RFC 6750)", "schema": {"type": "string"}}},
    429: {"Retry-After": RETRY_AFTER},
    503: {"Retry-After": RETRY_AFTER},
}

# Every operation that calls a service can meet its outage or its deadline.
ALWAYS = frozenset({500, 503, 504})
REPO_STATE = frozenset({409})  # repo_not_indexed, index_in_progress, index_failed
PROVIDER = frozenset({501, 502})  # not_configured, upstream_error
# Commits newer than a hosted repository's mirror are fetched with the hostapp's clone credentials:
# the code-host app not configured (501) or unreachable (502).
HOSTED_FETCH = REPO_STATE | PROVIDER
# Statuses beyond what the operation's shape implies, from the error codes its services raise.
EXTRA: dict[tuple[str, str], frozenset[int]] = {
    ("POST", "/v1/repositories"): frozenset({404, 409, 501, 502}),
    ("POST", "/v1/repositories/host_index"): frozenset({404, 409, 501, 502}),
    ("POST", "/v1/repositories/{repo_id}/index_repo"): REPO_STATE,
    ("GET", "/v1/repositories/{repo_id}/domains"): REPO_STATE,
    ("GET", "/v1/repositories/{repo_id}/segments"): REPO_STATE,
    ("GET", "/v1/repositories/{repo_id}/network"): REPO_STATE,
    ("GET", "/v1/repositories/{repo_id}/history"): REPO_STATE,
    ("GET", "/v1/repositories/{repo_id}/file"): REPO_STATE,
    ("POST", "/v1/repositories/{repo_id}/analyze"): REPO_STATE,
    ("POST", "/v1/repositories/{repo_id}/analyze_pr"): HOSTED_FETCH,
    ("POST", "/v1/repositories/{repo_id}/review_changeset"): REPO_STATE,
    ("POST", "/v1/repositories/{repo_id}/review_context"): REPO_STATE,
    ("POST", "/v1/repositories/{repo_id}/report_findings"): REPO_STATE,
    ("GET", "/v1/repositories/{repo_id}/dashboard"): REPO_STATE,
    ("GET", "/v1/repositories/{repo_id}/global_context"): REPO_STATE,
    ("POST", "/v1/account/checkout"): PROVIDER | {402, 409},
    ("POST", "/v1/account/billing-portal"): PROVIDER | {404},
    ("POST", "/v1/account/switch-plan"): PROVIDER | {402, 404, 409},
    ("POST", "/v1/account/cancel"): PROVIDER | {404, 409},
    ("POST", "/v1/account/reactivate"): PROVIDER | {404, 409},
    ("POST", "/v1/account/tokens"): frozenset({409}),
    ("POST", "/v1/teams/{org_id}/invite"): frozenset({409}),
    ("DELETE", "/v1/teams/{org_id}/members/{member_id}"): frozenset({409}),
    ("PATCH", "/v1/teams/{org_id}/members/{member_id}/role"): frozenset({409}),
    ("POST", "/v1/teams/{org_id}/seats"): PROVIDER | {402, 409},
    ("POST", "/v1/invitations/{org_id}/accept"): frozenset({409}),
    ("GET", "/v1/auth/host/authorize"): frozenset({501}),
    ("POST", "/v1/auth/host"): PROVIDER | {401},
    ("POST", "/v1/ai/chat"): PROVIDER,
    ("POST", "/webhooks/code_host"): frozenset({400, 401}),
    ("POST", "/webhooks/payment"): frozenset({400, 502}),
}
# Request bodies a route reads raw (to verify a signature first, or to keep JSON merge-patch
# nulls): the model states what the route, or the service behind it, accepts.
RAW_BODIES: dict[tuple[str, str], type[BaseModel]] = {
    ("PATCH", "/v1/account/audit-preferences"): AuditPreferencesPatch,
    ("POST", "/webhooks/code_host"): CodeHostEvent,
    ("POST", "/webhooks/payment"): PaymentEvent,
}
# JSON answers a route relays rather than builds (its signature says ``Any``).
RELAYED_BODIES: dict[tuple[str, str], type[BaseModel]] = {
    ("POST", "/v1/ai/chat"): ChatCompletion,
}
# Content types a route answers beside its JSON one.
EXTRA_CONTENT: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/v1/ai/chat"): {
        "text/event-stream": {
            # Before OpenAPI 3.2 (itemSchema) the schema of an event stream describes each event.
            "schema": {
                "type": "object",
                "description": "With `stream: true`: the upstream's server-sent events, relayed",
                "properties": {"data": {"type": "string"}, "event": {"type": "string"}, "id": {"type": "string"}},
            }
        }
    },
}


# A schema that says nothing: any JSON (``-> Any``) or any object (``-> dict[str, Any]``).
VACUOUS_KEYS = frozenset({"title", "description", "additionalProperties", "type"})


def says_something(schema: dict[str, Any]) -> bool:
    return bool(set(schema) - VACUOUS_KEYS) or schema.get("type", "object") != "object"


def error_statuses(method: str, path: str, operation: dict[str, Any]) -> set[int]:
    statuses = set(ALWAYS)
    if operation.get("security"):
        statuses |= {401, 403, 429}  # 403: a valid token without the role, organization or plan
    if path.startswith("/v1/auth/host"):
        statuses |= {429}  # sign-in is limited per client address
    parameters = operation.get("parameters", [])
    if parameters:
        statuses |= {422}
    if "requestBody" in operation or (method, path) in RAW_BODIES:
        statuses |= {400, 413, 422}
    if any(p.get("in") == "path" for p in parameters):
        statuses |= {404}  # the resource the path names is not there, or not visible to the caller
    return statuses | EXTRA.get((method, path), frozenset())


def _error_response(status: int) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": DESCRIPTIONS[status],
        "content": {"application/json": {"schema": ERROR_SCHEMA}},
    }
    if status in HEADERS:
        response["headers"] = HEADERS[status]
    return response


def _add_schema(
    document: dict[str, Any], model: type[BaseModel], mode: JsonSchemaMode = "validation"
) -> dict[str, Any]:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}", mode=mode)
    components = document.setdefault("components", {}).setdefault("schemas", {})
    for name, definition in schema.pop("$defs", {}).items():
        components.setdefault(name, definition)
    components[model.__name__] = schema
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def refine(document: dict[str, Any]) -> dict[str, Any]:
    """The generated document with the edge rules applied (in place; returned for chaining)."""
    _add_schema(document, ErrorBody, "serialization")
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            key = (method.upper(), path)
            if key in RAW_BODIES:
                schema = _add_schema(document, RAW_BODIES[key])
                operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}}}
            responses = operation.setdefault("responses", {})
            for status in list(responses):
                if status[0] in "45" and int(status) not in DESCRIPTIONS:
                    del responses[status]
            for status in sorted(error_statuses(*key, operation)):
                responses[str(status)] = _error_response(status)
            for status, response in responses.items():
                if not status.startswith("2"):
                    continue
                json_body = response.get("content", {}).get("application/json")
                if json_body is not None and key in RELAYED_BODIES and not says_something(json_body.get("schema", {})):
                    json_body["schema"] = _add_schema(document, RELAYED_BODIES[key])
                if key in EXTRA_CONTENT:
                    response.setdefault("content", {}).update(EXTRA_CONTENT[key])
    schemas = document.get("components", {}).get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return document


def declare_bearer(document: dict[str, Any], routes: list[BaseRoute]) -> dict[str, Any]:
    """The bearer scheme on every operation whose route depends on the principal (the scheme is
    not a dependency of its own: services/gateway/deps.py)."""
    scheme = BEARER.model.model_dump(mode="json", by_alias=True, exclude_none=True)
    document.setdefault("components", {}).setdefault("securitySchemes", {})[BEARER.scheme_name] = scheme
    for route in routes:
        if isinstance(route, APIRoute) and route.include_in_schema and uses_principal(route.dependant):
            item = document["paths"][route.path_format]
            for method in route.methods or ():
                item[method.lower()]["security"] = [{BEARER.scheme_name: []}]
    return document


def install(app: FastAPI) -> None:
    """``app.openapi()`` (and /v1/openapi.json) serves the refined document, built once."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                openapi_version=app.openapi_version,
                description=app.description,
                routes=app.routes,
                servers=app.servers,
            )
            app.openapi_schema = refine(declare_bearer(document, app.routes))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
