"""The MCP server's answer to arguments its tools' schemas refuse, through the SDK's own client
connected in-process: the spec's error body with ``code``, like every other tool failure. The
arguments are refused before any request, so no service runs here."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from services.client import AsyncClient
from services.mcp.server import build


def no_client(token: str | None) -> AsyncClient:
    raise AssertionError("refused arguments must not reach the service")


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("service_get_segments", {"limit": 0}, "limit"),
        ("service_review", {}, "path"),
        ("service_report_findings", {"feedback": [{"finding_id": "f_1", "verdict": "maybe"}]}, "feedback.0.verdict"),
        ("service_index", {"incremental": "sometimes"}, "incremental"),
    ],
)
async def test_refused_arguments_are_a_structured_validation_failed(
    tool: str, arguments: dict[str, Any], field: str
) -> None:
    async with Client(build(no_client)) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error
    body = result.structured_content
    assert body is not None
    assert set(body) == {"error", "code", "details"}
    assert body["code"] == "validation_failed"
    assert body["details"]["field"] == field
    assert body["error"].startswith(f"invalid {field}: ")
    assert "pydantic" not in result.content[0].text  # type: ignore[union-attr]
