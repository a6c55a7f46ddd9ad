"""Every documented example, executed against the running system: the README's quick start,
docs/cli.md's commands, docs/client.md's Python, and docs/mcp.md's editor configurations (each
started the way the editor would, through the MCP SDK's client). The pages are read as they are;
only their placeholders (a token, the address, a path, an id) are replaced with real ones."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.analyzer.service_corpus import PLANTED, PLANTED_PATH, git, make_git_repo
from tests.e2e.harness import RunningSystem
from tests.e2e.test_cli import BIN, ROOT

pytestmark = pytest.mark.e2e

DEFAULT_URL = "http://127.0.0.1:8080"


def blocks(page: str, language: str) -> list[str]:
    text = (ROOT / page).read_text()
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def replaced(text: str, substitutions: dict[str, str]) -> str:
    for placeholder, value in substitutions.items():
        text = text.replace(placeholder, value)
    return text


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def create_user(system: RunningSystem, line: str) -> str:
    env = {**os.environ, "CR_BILLING_ADDR": system.env["CR_BILLING_ADDR"]}  # type: ignore[attr-defined]
    done = bash(line, ROOT, env)
    assert done.returncode == 0, done.stderr
    return re.search(r"token=(crp_\w+)", done.stdout).group(1)  # type: ignore[union-attr]


def unique(name: str) -> str:
    return f"{name}-{os.getpid()}-{time.monotonic_ns() % 10**9}"


def test_the_readme_quick_start(system: RunningSystem) -> None:
    first, second = blocks("README.md", "sh")[1:3]
    create, validate = first.strip().splitlines()
    login, org = unique("alice"), unique("acme")
    token = create_user(system, create.replace("alice", login).replace("acme", org))
    subs = {"crp_...": token, DEFAULT_URL: system.url}
    assert json.loads(bash(replaced(validate, subs), ROOT, dict(os.environ)).stdout)["login"] == login

    project = system.work / "repos" / unique("readme")  # type: ignore[attr-defined]
    make_git_repo(project)
    header, register, trigger, status, analyze = second.strip().splitlines()
    subs |= {"/home/me/src/project": str(project), "pkg/module.py": "app/billing/invoice.py"}
    env = dict(os.environ)
    registered = json.loads(bash(f"{replaced(header, subs)}\n{replaced(register, subs)}", ROOT, env).stdout)
    subs["ID"] = registered["id"]
    assert json.loads(bash(f"{replaced(header, subs)}\n{replaced(trigger, subs)}", ROOT, env).stdout)["state"]
    deadline = time.monotonic() + 180
    while (state := json.loads(bash(f"{replaced(header, subs)}\n{replaced(status, subs)}", ROOT, env).stdout))[
        "state"
    ] != "ready":  # the page says: until "state": "ready"
        assert time.monotonic() < deadline, state
        assert state["state"] != "failed", state
        time.sleep(0.5)
    result = json.loads(bash(f"{replaced(header, subs)}\n{replaced(analyze, subs)}", ROOT, env).stdout)
    assert result["files_analyzed"] == 1
    assert "findings" in result


def test_the_cli_commands(system: RunningSystem, tmp_path: Path) -> None:
    token = create_user(system, f"{BIN}/codereview admin create-user {unique('cli-doc')}")
    work = system.work / "repos" / unique("cli-doc")  # type: ignore[attr-defined]
    make_git_repo(work)
    home = tmp_path / "home"
    env = {
        **os.environ,
        "PATH": f"{BIN}:{os.environ['PATH']}",
        "HOME": str(home),
        "CODEREVIEW_CONFIG": str(home / "config.toml"),
        "CR_BILLING_ADDR": system.env["CR_BILLING_ADDR"],  # type: ignore[attr-defined]
    }
    configuration, commands = blocks("docs/cli.md", "sh")[:2]
    for line in configuration.strip().splitlines():  # login, and login under a profile
        subs = {"crp_...": token, "https://staging.example/v1": system.url + "/v1", DEFAULT_URL: system.url}
        done = bash(replaced(line, subs), work, env)
        assert done.returncode == 0, (line, done.stderr)
    saved = tomllib.loads((home / "config.toml").read_text())
    assert saved["url"] == saved["profiles"]["staging"]["url"] == system.url + "/v1"
    shown = tomllib.loads(blocks("docs/cli.md", "toml")[0])
    assert set(shown) == set(saved)
    assert set(shown["profiles"]["staging"]) == set(saved["profiles"]["staging"])

    # A branch with a change (for --base) and a staged one (for --staged), as a developer has them.
    git(work, "checkout", "-q", "-b", "feature")
    (work / PLANTED_PATH).write_text(PLANTED)
    git(work, "add", PLANTED_PATH)
    git(work, "commit", "-q", "-m", "audit trail")
    target = work / "app" / "billing" / "invoice.py"
    target.write_text(target.read_text() + "\n\ndef voidInvoice(invoice_id: str) -> str:\n    return invoice_id\n")
    git(work, "add", "app/billing/invoice.py")
    lines = [line for line in commands.strip().splitlines() if line.strip()]
    outcomes: dict[str, subprocess.CompletedProcess[str]] = {}
    for line in lines:
        if line.startswith("codereview report"):
            found = json.loads(bash("codereview review --base main --json", work, env).stdout)["findings"]
            line = line.replace("f_3b1f0c9a2d4e5f60", found[0]["id"])
        if line.startswith("codereview admin"):
            line = line.replace("alice", unique("alice")).replace("acme", unique("acme"))
        done = bash(line, work, env)
        assert done.returncode in (0, 1), (line, done.stdout, done.stderr)  # 1: findings reached --fail-on
        outcomes[line.split("#")[0].strip()] = done
    assert "state: ready" in outcomes["codereview repo status"].stdout
    assert "naming.case.function" in outcomes["codereview review --staged"].stdout
    assert "Recorded 1 verdict(s)." in next(v.stdout for k, v in outcomes.items() if k.startswith("codereview report"))
    assert json.loads(outcomes["codereview mcp --print-config"].stdout)["mcpServers"]["codereview"]["args"] == ["mcp"]
    assert "token=crp_" in next(v.stdout for k, v in outcomes.items() if k.startswith("codereview admin"))


def test_the_pre_commit_configurations_and_the_release_they_pin() -> None:
    shipped, local = (yaml.safe_load(b) for b in blocks("docs/cli.md", "yaml")[:2])
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert shipped["repos"][0]["rev"] == f"v{version}"  # the release tag of this version
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert shipped["repos"][0]["hooks"][0]["id"] == hook["id"]
    (as_local,) = local["repos"][0]["hooks"]
    assert as_local["entry"] == f"{hook['entry']} {' '.join(hook['args'])}"  # the same default level
    assert {k: as_local[k] for k in ("pass_filenames", "require_serial", "verbose")} == {
        k: hook[k] for k in ("pass_filenames", "require_serial", "verbose")
    }


def test_the_python_client_examples(system: RunningSystem) -> None:
    token = create_user(system, f"{BIN}/codereview admin create-user {unique('client-doc')}")
    shop = system.work / "repos" / unique("shop")  # type: ignore[attr-defined]
    make_git_repo(shop)
    sync_example, async_example = blocks("docs/client.md", "python")[:2]
    subs = {
        "/home/me/src/shop": str(shop),
        "app/x.py": "app/billing/invoice.py",
        f"{DEFAULT_URL}/v1": f"{system.url}/v1",
        "crp_...": token,
    }
    env = {**os.environ, "CODEREVIEW_URL": system.url, "CODEREVIEW_TOKEN": token}
    ran = subprocess.run(
        [sys.executable, "-c", replaced(sync_example, subs)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr
    assert "404 file_not_found" in ran.stdout
    listed = subprocess.run(
        [sys.executable, "-c", replaced(async_example, subs)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    assert str(shop) in listed.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def tools_over_stdio(server: dict[str, Any], cwd: Path) -> set[str]:
    params = StdioServerParameters(command=server["command"], args=server["args"], env=server["env"], cwd=cwd)
    async with Client(params, read_timeout_seconds=120) as client:
        return {t.name for t in (await client.list_tools()).tools}


async def test_the_mcp_configurations(system: RunningSystem) -> None:
    token = create_user(system, f"{BIN}/codereview admin create-user {unique('mcp-doc')}")
    work = system.work / "repos" / unique("mcp-doc")  # type: ignore[attr-defined]
    make_git_repo(work)
    (print_config,) = [b for b in blocks("docs/mcp.md", "sh") if "--print-config" in b]
    command = print_config.split("#")[0].strip().replace(".venv/bin/", f"{BIN}/")
    env = {**os.environ, "CODEREVIEW_URL": system.url}
    printed = json.loads(bash(command, ROOT, env).stdout)["mcpServers"]["codereview"]
    assert Path(printed["command"]).is_absolute()
    assert os.access(printed["command"], os.X_OK)
    assert printed["env"] == {"CODEREVIEW_URL": f"{system.url}/v1", "CODEREVIEW_TOKEN": "${CODEREVIEW_TOKEN}"}

    claude, vscode, http_config, error = (json.loads(b) for b in blocks("docs/mcp.md", "json"))
    documented = claude["mcpServers"]["codereview"]
    assert set(documented) == set(printed)
    assert documented["args"] == printed["args"]
    subs = {
        "/home/me/src/codereview/.venv/bin/codereview": printed["command"],
        f"{DEFAULT_URL}/v1": f"{system.url}/v1",
        "${CODEREVIEW_TOKEN}": token,
        "${input:codereview-token}": token,
    }
    for config, key in ((claude, "mcpServers"), (vscode, "servers")):
        server = json.loads(replaced(json.dumps(config[key]["codereview"]), subs))
        assert len(await tools_over_stdio(server, work)) == 10

    (serve,) = [b for b in blocks("docs/mcp.md", "sh") if "--http" in b]
    port = free_port()
    line = serve.split("#")[0].strip().replace("8765", str(port))
    proc = subprocess.Popen(
        ["bash", "-c", line],
        cwd=work,
        env={**env, "PATH": f"{BIN}:{os.environ['PATH']}"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        remote = json.loads(replaced(json.dumps(http_config["mcpServers"]["codereview"]), subs | {"8765": str(port)}))
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert proc.poll() is None, "the MCP HTTP server exited"
                assert time.monotonic() < deadline, "the MCP HTTP server did not listen"
                time.sleep(0.1)
        async with (
            httpx2.AsyncClient(headers=remote["headers"], timeout=120) as http,
            Client(streamable_http_client(remote["url"], http_client=http), read_timeout_seconds=120) as client,
        ):
            assert len((await client.list_tools()).tools) == 10
            nothing = await client.call_tool(
                "service_review_changeset", {"repository": "unused", "directory": str(work)}
            )
            assert nothing.is_error
            assert nothing.structured_content == error  # the page's error body, as it arrives
    finally:
        proc.terminate()
        proc.wait(15)
