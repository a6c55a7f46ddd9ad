"""The local path as a new user walks it, against the running system: the shipped pre-commit hook
across several local commits the server never indexed (each staged file travels with its content),
blocking a naming deviation at its default level; the CLI's answers to a missing file, a directory
and ``--format sarif -o``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.analyzer.service_corpus import git, make_git_repo
from tests.e2e.conftest import admin_token
from tests.e2e.harness import RunningSystem
from tests.e2e.test_cli import BIN, ROOT, Workspace

pytestmark = pytest.mark.e2e

TARGET = "app/billing/invoice.py"
CLEAN = '\n\ndef {name}(invoice_id: str) -> str:\n    """Return the id of the invoice."""\n    return invoice_id\n'


@pytest.fixture(scope="module")
def flow(system: RunningSystem, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    token = admin_token(system, "local-flow")
    path = system.work / "repos" / "local-flow"  # type: ignore[attr-defined]
    make_git_repo(path)  # no .codereview.yml: naming deviations are warnings, as by default
    home = tmp_path_factory.mktemp("flow-home")
    env = {
        "PATH": f"{BIN}:{os.environ['PATH']}",
        "HOME": str(home),
        "CODEREVIEW_URL": system.url,
        "CODEREVIEW_TOKEN": token,
        "CODEREVIEW_CONFIG": str(home / "config.toml"),
        "PRE_COMMIT_HOME": str(home / "pre-commit"),
    }
    work = Workspace(path, env, token)
    added = work.run("repo", "add", "--index", "--json")
    assert added.returncode == 0, added.stderr
    work.repo_id = json.loads(added.stdout)["id"]
    return work


def commit(work: Workspace, message: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "user.email=dev@example.com", "-c", "user.name=Dev", "commit", "-m", message],
        cwd=work.path,
        env=work.env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_the_hook_blocks_a_naming_deviation_after_local_commits_the_server_never_saw(flow: Workspace) -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    local = {**hook, "language": "system"}  # the shipped entry and default args, offline
    (flow.path / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]}))
    git(flow.path, "add", ".pre-commit-config.yaml")
    git(flow.path, "commit", "-q", "-m", "pre-commit config")
    subprocess.run([str(BIN / "pre-commit"), "install"], cwd=flow.path, env=flow.env, check=True, capture_output=True)

    target = flow.path / TARGET
    # Commit by commit, as people work: none of these is indexed, so the server's snapshot is
    # older than the local HEAD from the second commit on.
    for name in ("void_invoice", "reopen_invoice"):
        target.write_text(target.read_text() + CLEAN.format(name=name))
        git(flow.path, "add", TARGET)
        done = commit(flow, f"add {name}")
        assert done.returncode == 0, done.stdout + done.stderr
        # verbose: its output shows when it passes
        assert "No findings (1 file(s) analyzed)." in done.stdout + done.stderr

    target.write_text(target.read_text() + CLEAN.format(name="archiveInvoice"))
    git(flow.path, "add", TARGET)
    blocked = commit(flow, "add archiveInvoice")
    output = blocked.stdout + blocked.stderr
    assert blocked.returncode != 0, output
    assert f"{TARGET}:" in output
    assert "warning naming.case.function" in output
    assert "content_unavailable" not in output

    # The level is the user's: at --fail-on error the same warning passes (and is still shown).
    lenient = flow.run("review", "--staged", "--fail-on", "error")
    assert lenient.returncode == 0, lenient.stderr
    assert "naming.case.function" in lenient.stdout
    as_json = json.loads(flow.run("review", "--staged", "--json").stdout)
    assert as_json["skipped"] == []
    assert [(f["rule"], f["path"]) for f in as_json["findings"] if f["severity"] != "info"] == [
        ("naming.case.function", TARGET)
    ]
    git(flow.path, "reset", "-q", "--hard", "HEAD")


def test_a_missing_file_or_a_directory_is_bad_usage_not_a_finding(flow: Workspace) -> None:
    for target, said in (("no/such.py", "does not exist"), ("app", "is a directory")):
        done = flow.run("review", target)
        assert done.returncode == 2, done.stdout + done.stderr
        assert said in done.stderr
        assert "Traceback" not in done.stderr


def test_sarif_to_a_file_prints_the_findings(flow: Workspace, tmp_path: Path) -> None:
    target = flow.path / TARGET
    target.write_text(target.read_text() + CLEAN.format(name="voidInvoice"))
    try:
        out = tmp_path / "review.sarif"
        done = flow.run("review", TARGET, "--format", "sarif", "-o", str(out), "--fail-on", "none")
        assert done.returncode == 0, done.stderr
        log = json.loads(out.read_text())
        ids = [r["properties"]["findingId"] for r in log["runs"][0]["results"]]
        assert ids
        lines = [line for line in done.stdout.splitlines() if line.startswith(f"{TARGET}:")]
        assert len(lines) == len(ids)
        assert any("warning naming.case.function" in line for line in lines)
        assert all(f"[{i}]" in done.stdout for i in ids)
    finally:
        git(flow.path, "checkout", "-q", "--", TARGET)
