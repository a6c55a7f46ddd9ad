"""The MCP server driven by the MCP SDK's own client, over stdio and over streamable HTTP, against
the running system: the tool list is exactly the spec's ten, every tool is called, and a tool
error carries the spec's ``code`` in its structured payload."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from services.mcp.server import TOOLS
from tests.analyzer.service_corpus import PLANTED, PLANTED_PATH, git, make_git_repo
from tests.e2e.conftest import admin_token
from tests.e2e.harness import RunningSystem

pytestmark = pytest.mark.e2e

SPEC_TOOLS = {
    "service_index",
    "service_review",
    "service_review_changeset",
    "service_report_findings",
    "service_get_domains",
    "service_get_segments",
    "service_get_network",
    "service_get_history",
    "service_get_dashboard",
    "service_get_global_context",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def connect(transport: str, env: dict[str, str], cwd: Path, token: str) -> AsyncIterator[Client]:
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=["-m", "services.mcp"], env=env, cwd=cwd)
        async with Client(params, read_timeout_seconds=240) as client:
            yield client
        return
    # HTTP: the server has no token of its own; each request's bearer token is used.
    port = free_port()
    server_env = {k: v for k, v in env.items() if k != "CODEREVIEW_TOKEN"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.mcp", "--http", "--port", str(port)],
        cwd=cwd,
        env=server_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert proc.poll() is None, "the MCP HTTP server exited"
                assert time.monotonic() < deadline, "the MCP HTTP server did not listen"
                time.sleep(0.1)
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=240)
        async with (
            http,
            Client(
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http), read_timeout_seconds=240
            ) as client,
        ):
            yield client
    finally:
        proc.terminate()
        proc.wait(15)


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments or {}, **kw)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_every_tool_over(transport: str, system: RunningSystem) -> None:
    token = admin_token(system, f"mcp-{transport}")
    path = system.work / "repos" / f"mcp-{transport}"  # type: ignore[attr-defined]
    make_git_repo(path)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(path.parent),
        "CODEREVIEW_URL": system.url,
        "CODEREVIEW_TOKEN": token,
        "CODEREVIEW_CONFIG": str(path.parent / f"{transport}-none.toml"),
    }
    async with connect(transport, env, path, token) as client:
        listed = (await client.list_tools()).tools
        assert {t.name for t in listed} == SPEC_TOOLS == set(TOOLS)
        assert len(listed) == 10
        for tool in listed:
            assert tool.input_schema["type"] == "object", tool.name
            assert tool.output_schema, tool.name
            assert tool.output_schema["type"] == "object", tool.name

        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total, message))

        indexed = await call(client, "service_index", progress_callback=on_progress)
        assert indexed["created"] is True
        assert indexed["status"]["state"] == "ready"
        assert Path(indexed["repository"]["source"]) == path
        assert progress
        assert progress[-1][2] == "ready"
        repo_id = indexed["repository"]["id"]
        again = await call(client, "service_index", {"incremental": True})
        assert again["created"] is False
        assert again["repository"]["id"] == repo_id

        # service_review: unsaved content; the result is review_context's shape plus findings.
        reviewed = await call(client, "service_review", {"path": PLANTED_PATH, "content": PLANTED})
        assert reviewed["path"] == PLANTED_PATH
        assert {"domain", "segment", "conventions", "history"} <= set(reviewed)
        rules = {f["rule"] for f in reviewed["findings"]}
        assert {"naming.case.function", "documentation.docstring.function", "idioms.print"} <= rules

        # service_review_changeset: nothing staged is the spec's no_files, in the structured payload.
        nothing = await client.call_tool("service_review_changeset", {})
        assert nothing.is_error
        assert nothing.structured_content is not None
        assert nothing.structured_content["code"] == "no_files"
        (path / PLANTED_PATH).write_text(PLANTED)
        git(path, "add", PLANTED_PATH)
        try:
            staged = await call(client, "service_review_changeset")
        finally:
            git(path, "reset", "-q", "--", PLANTED_PATH)
            (path / PLANTED_PATH).unlink()
        assert {f["path"] for f in staged["findings"]} >= {PLANTED_PATH}
        by_paths = await call(client, "service_review_changeset", {"file_paths": ["app/billing/invoice.py"]})
        assert by_paths["files_analyzed"] == 1
        # file_paths are reviewed as they are on disk (an editor's unsaved-to-git edits), not as
        # the server last indexed them; a path outside the tree is the server's to refuse.
        (path / PLANTED_PATH).write_text(PLANTED)
        (path / "NOTES.txt").write_text("free text\n")
        try:
            on_disk = await call(client, "service_review_changeset", {"file_paths": [PLANTED_PATH, "NOTES.txt"]})
        finally:
            (path / PLANTED_PATH).unlink()
            (path / "NOTES.txt").unlink()
        assert {f["path"] for f in on_disk["findings"]} == {PLANTED_PATH}
        assert on_disk["files_analyzed"] == 1
        assert on_disk["skipped"] == [{"path": "NOTES.txt", "reason": "unsupported_language"}]
        outside = await client.call_tool("service_review_changeset", {"file_paths": ["../outside.py"]})
        assert outside.is_error
        assert outside.structured_content is not None
        assert outside.structured_content["code"] == "validation_failed"

        finding = next(f for f in reviewed["findings"] if f["rule"] == "idioms.print")
        report = await call(
            client,
            "service_report_findings",
            {
                "feedback": [{"finding_id": finding["id"], "verdict": "accepted"}],
                "findings": [
                    {"category": "security", "path": "app/billing/invoice.py", "message": "check", "source": "mcp"}
                ],
            },
        )
        assert (report["accepted"], report["external"]) == (1, 1)

        domains = await call(client, "service_get_domains", {"repository": repo_id})
        assert {d["name"] for d in domains["domains"]} >= {"app"} or domains["domains"]
        rest = httpx.get(
            f"{system.url}/v1/repositories/{repo_id}/domains", headers={"Authorization": f"Bearer {token}"}
        ).json()
        assert domains == rest  # the same data shape as the read endpoint
        segments = await call(client, "service_get_segments", {"limit": 2})
        assert len(segments["segments"]) <= 2
        assert "next_cursor" in segments["page"]
        network = await call(client, "service_get_network")
        assert network["nodes"]
        history = await call(client, "service_get_history", {"path": "app/billing/invoice.py"})
        assert history["path"] == "app/billing/invoice.py"
        dashboard = await call(client, "service_get_dashboard")
        assert dashboard["repository_id"] == repo_id
        summary = await call(client, "service_get_global_context")
        assert summary["strongest_conventions"]

        missing = await client.call_tool("service_get_history", {"path": "no/such/file.py"})
        assert missing.is_error
        assert missing.structured_content is not None
        assert missing.structured_content["code"] == "file_not_found"
        assert set(missing.structured_content) == {"error", "code", "details"}
