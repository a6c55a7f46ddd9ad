"""The OpenAPI document states the edge's rules: the bearer scheme on every operation that needs a
token, the error statuses each operation answers with the body it really sends, and request
schemas that accept exactly what the server accepts (checked case by case against the models)."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from services.analyzer.engine.config import FAMILIES
from services.api import schemas
from services.gateway.app import create_app
from services.gateway.openapi import says_something
from services.kit import paging
from tests.gateway.test_route_roles import ROUTE_ROLES

DOCUMENT = create_app().openapi()
OPERATIONS = [
    (method.upper(), path, operation) for path, item in DOCUMENT["paths"].items() for method, operation in item.items()
]


def test_the_bearer_scheme_is_declared_on_every_operation_that_needs_a_token() -> None:
    scheme = DOCUMENT["components"]["securitySchemes"]["bearer"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    for method, path, operation in OPERATIONS:
        public = ROUTE_ROLES[(method, path)].startswith("public")
        assert operation.get("security") == (None if public else [{"bearer": []}]), (method, path)


def test_every_error_status_has_the_error_body_and_fastapis_422_is_gone() -> None:
    assert "HTTPValidationError" not in DOCUMENT["components"]["schemas"]
    assert set(DOCUMENT["components"]["schemas"]["ErrorBody"]["required"]) == {"error", "code", "details"}
    for method, path, operation in OPERATIONS:
        responses = operation["responses"]
        errors = {int(s) for s in responses if s[0] in "45"}
        assert {500, 503, 504} <= errors, (method, path)
        for status in errors:
            schema = responses[str(status)]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (method, path, status)
        if operation.get("security"):
            assert {401, 403, 429} <= errors
            assert "WWW-Authenticate" in responses["401"]["headers"]
        if "requestBody" in operation:
            assert {400, 413, 422} <= errors
        assert "Retry-After" in responses["503"]["headers"]


@pytest.mark.parametrize(
    ("method", "path", "statuses"),
    [
        ("POST", "/v1/ai/chat", {501, 502}),
        ("POST", "/v1/account/switch-plan", {402, 409, 501, 502}),
        ("POST", "/v1/repositories/{repo_id}/analyze", {404, 409}),
        ("POST", "/v1/repositories/{repo_id}/analyze_pr", {404, 409, 501, 502}),
        ("POST", "/webhooks/code_host", {400, 401}),
        ("POST", "/webhooks/payment", {400}),
    ],
)
def test_route_specific_statuses_are_documented(method: str, path: str, statuses: set[int]) -> None:
    assert statuses <= {int(s) for s in DOCUMENT["paths"][path][method.lower()]["responses"]}


def test_the_webhooks_declare_no_bearer_but_their_signature_headers() -> None:
    code_host = DOCUMENT["paths"]["/webhooks/code_host"]["post"]
    names = {p["name"] for p in code_host["parameters"]}
    assert names == {"X-Hub-Signature-256", "X-GitHub-Event", "X-GitHub-Delivery"}
    assert [p["name"] for p in DOCUMENT["paths"]["/webhooks/payment"]["post"]["parameters"]] == ["Payment-Signature"]


def test_the_event_stream_of_the_ai_proxy_is_a_documented_content_type() -> None:
    content = DOCUMENT["paths"]["/v1/ai/chat"]["post"]["responses"]["200"]["content"]
    assert set(content) == {"application/json", "text/event-stream"}


def responses_without_schema(document: dict) -> list[str]:
    missing = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            for status, response in operation["responses"].items():
                if not status.startswith("2") or status == "204":
                    continue
                content = response.get("content", {})
                if not content or not all(says_something(media.get("schema", {})) for media in content.values()):
                    missing.append(f"{method.upper()} {path} {status}")
    return missing


def test_every_2xx_response_has_a_schema() -> None:
    assert not responses_without_schema(DOCUMENT)


# --- request schemas accept exactly what the models accept ------------------------------------

REGISTRY: Registry[Any] = Registry().with_resource("urn:doc", DRAFT202012.create_resource(DOCUMENT))


def schema_accepts(model: type[BaseModel], body: object) -> bool:
    schema = {"$ref": f"urn:doc#/components/schemas/{model.__name__}"}
    return Draft202012Validator(schema, registry=REGISTRY).is_valid(body)


def model_accepts(model: type[BaseModel], body: object) -> bool:
    try:
        model.model_validate(body)
    except ValidationError:
        return False
    return True


CASES: list[tuple[type[BaseModel], object, bool]] = [
    (schemas.CreateRepository, {}, False),
    (schemas.CreateRepository, {"org_id": "o1"}, False),
    (schemas.CreateRepository, {"path": "/srv/repo"}, True),
    (schemas.CreateRepository, {"url": "https://example.com/r.git", "path": None}, True),
    (schemas.CreateRepository, {"full_name": "acme/app"}, True),
    (schemas.CreateRepository, {"full_name": "acme"}, False),
    (schemas.CreateRepository, {"path": "/srv/repo", "url": "https://example.com/r.git"}, False),
    (schemas.CreateRepository, {"path": " "}, False),
    (schemas.CreateRepository, {"path": "srv/repo"}, False),  # the indexer reads only absolute paths
    # A clone URL's shape (schemathesis sent {"url": "0"}); whether its host answers stays 422.
    (schemas.CreateRepository, {"url": "0"}, False),
    (schemas.CreateRepository, {"url": "https://example.com/"}, False),
    (schemas.CreateRepository, {"url": "https://example.com/r.git?x=1"}, False),
    (schemas.CreateRepository, {"url": "file:///etc/passwd"}, False),
    (schemas.CreateRepository, {"url": "ssh://git@example.com:22/acme/r.git"}, True),
    (schemas.AnalyzePr, {}, False),
    (schemas.AnalyzePr, {"base": "a1", "head": ""}, False),
    (schemas.AnalyzePr, {"base": "a1", "head": "b2"}, True),
    (schemas.AnalyzePr, {"files": [{"path": "a.py"}]}, True),
    (schemas.AnalyzePr, {"files": [], "pr_number": 3.0, "base": "a", "head": "b"}, True),
    (schemas.AnalyzePr, {"base": "a", "head": "b", "pr_number": True}, False),
    (schemas.ReportFindings, {"findings": [{"path": "a.py", "message": "m"}]}, False),
    (schemas.ReportFindings, {"findings": [{"path": "a.py", "message": "m", "rule": " "}]}, False),
    (schemas.ReportFindings, {"findings": [{"path": "a.py", "message": "m", "category": "naming"}]}, True),
    (schemas.ReportFindings, {"findings": [{"path": "a.py", "message": "m", "rule": "r", "end_line": 0}]}, False),
    (schemas.ReportFindings, {"feedback": [{"verdict": "fixed"}]}, False),
    (schemas.ReportFindings, {"feedback": [{"verdict": "fixed", "fingerprint": "f"}]}, True),
    (schemas.CreateToken, {"name": "ci", "expires_in_days": False}, False),
    (schemas.CreateToken, {"name": "ci", "expires_in_days": "3"}, False),
    (schemas.CreateToken, {"name": "ci", "expires_in_days": 30.0}, True),
    (schemas.ChangeSeats, {"seats": 0}, False),
    (schemas.Chat, {"messages": [{"role": "user"}], "stream": 0}, False),
    (schemas.Checkout, {"plan": "Pro!"}, False),
    (schemas.SwitchPlan, {"plan": "0"}, True),  # the shape of a plan id; the catalogue answers 422
    (schemas.Checkout, {"plan": "pro", "trial": 1}, False),
    (schemas.AuditPreferencesPatch, {"min_severity": None, "enabled_families": ["naming"]}, True),
    (schemas.AuditPreferencesPatch, {"enabled_families": ["spelling"]}, False),
    (schemas.AuditPreferencesPatch, {"ignored_paths": ["vendor/**", ""]}, False),
    (schemas.AuditPreferencesPatch, {"min_confidence": True}, False),
    (schemas.AuditPreferencesPatch, {"min_confidence": 1}, True),
    (schemas.AuditPreferencesPatch, {"colour": "red"}, False),
    (schemas.HostIndex, {"full_name": "acme/app", "incremental": "true"}, False),
]


@pytest.mark.parametrize(("model", "body", "valid"), CASES)
def test_the_request_schema_and_the_model_agree(model: type[BaseModel], body: object, valid: bool) -> None:
    assert schema_accepts(model, body) is valid
    assert model_accepts(model, body) is valid


def test_the_preference_families_are_the_analyzers() -> None:
    assert set(get_args(schemas.Family)) == FAMILIES


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/v1/repositories", paging.REPOSITORIES),
        ("/v1/repositories/{repo_id}/segments", paging.OFFSET),
        ("/v1/repositories/{repo_id}/network", paging.OFFSET),
        ("/v1/repositories/{repo_id}/history", paging.OFFSET),
    ],
)
def test_each_paged_route_states_its_listings_whole_cursor_rule(path: str, kind: str) -> None:
    # Before: one base64 pattern for every route, so "0000" or another listing's cursor matched it
    # and was refused (schemathesis); the pattern is now the one the service decodes with.
    (cursor,) = [p for p in DOCUMENT["paths"][path]["get"]["parameters"] if p["name"] == "cursor"]
    assert cursor["schema"]["pattern"] == paging.CURSOR_PATTERNS[kind]
