"""docs/api.md shows an example body for every route, generated from the models: the section is
never stale, and each example is valid by the schema it illustrates."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from services.api import account, analysis, schemas
from services.gateway import api_examples

DOCUMENT = api_examples.document()
EXAMPLES = api_examples.Examples(DOCUMENT)
REGISTRY: Registry[Any] = Registry().with_resource("urn:doc", DRAFT202012.create_resource(DOCUMENT))


def test_docs_api_md_has_the_current_examples() -> None:
    text = api_examples.DOC.read_text()
    assert api_examples.with_examples(text, api_examples.render(DOCUMENT)) == text, (
        "docs/api.md is stale: run python -m services.gateway.api_examples"
    )


def _valid(schema: dict[str, Any], value: Any) -> list[str]:
    rooted = _root(schema)
    return [e.message for e in Draft202012Validator(rooted, registry=REGISTRY).iter_errors(value)]


def _root(schema: Any) -> Any:
    """The schema with its references pointed at the document."""
    if isinstance(schema, dict):
        return {k: ("urn:doc" + v if k == "$ref" else _root(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_root(v) for v in schema]
    return schema


@pytest.mark.parametrize(("method", "path", "operation"), api_examples.operations(DOCUMENT), ids=lambda x: str(x)[:60])
def test_every_example_is_valid_by_its_schema(method: str, path: str, operation: dict[str, Any]) -> None:
    request = api_examples.request_schema(operation)
    if request is not None:
        assert not _valid(request, EXAMPLES.value(request)), (method, path, "request")
    _, response = api_examples.success(operation)
    if response is not None:
        assert not _valid(response, EXAMPLES.value(response)), (method, path, "response")


def _strings(value: Any, key: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _strings(v, k)]
    if isinstance(value, list):
        return [pair for v in value for pair in _strings(v, key)]
    return [(key, value)] if isinstance(value, str) else []


def test_no_example_shows_a_placeholder() -> None:
    """A string that merely repeats its field's name (``"languages": ["languages"]``) teaches nothing."""
    placeholders = set()
    for _, _, operation in api_examples.operations(DOCUMENT):
        shown = [api_examples.request_schema(operation), api_examples.success(operation)[1]]
        for schema in filter(None, shown):
            placeholders |= {key for key, value in _strings(EXAMPLES.value(schema)) if key and value == key}
    assert placeholders == set()


def _model(schema: dict[str, Any]) -> type[BaseModel] | None:
    refs = [s["$ref"] for s in [schema, *schema.get("anyOf", [])] if "$ref" in s]
    name = refs[0].rsplit("/", 1)[-1].removesuffix("-Input")
    for module in (schemas, analysis, account):
        found = getattr(module, name, None)
        if isinstance(found, type) and issubclass(found, BaseModel):
            return found
    return None


@pytest.mark.parametrize(("method", "path", "operation"), api_examples.operations(DOCUMENT), ids=lambda x: str(x)[:60])
def test_every_request_example_is_a_body_the_server_accepts(method: str, path: str, operation: dict[str, Any]) -> None:
    """The route's own model takes it as it stands: one source, one way to name a changeset."""
    request = api_examples.request_schema(operation)
    if request is None or path.startswith("/webhooks/"):  # webhooks read signed raw bodies
        return
    model = _model(request)
    assert model is not None, (method, path)
    model.model_validate(EXAMPLES.value(request))


def test_the_examples_name_what_the_server_requires() -> None:
    body = {
        path: EXAMPLES.value(api_examples.request_schema(op) or {}) for _, path, op in api_examples.operations(DOCUMENT)
    }
    assert PurePosixPath(body["/v1/repositories"]["path"]).is_absolute()  # the indexer refuses a relative one
    assert set(body["/v1/repositories/{repo_id}/review_changeset"]) == {"file_paths"}
