"""docs/api.md shows an example body for every route, generated from the models: the section is
never stale, and each example is valid by the schema it illustrates."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

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
