"""The ``codereview`` CLI against the running system: a real local repository is registered and
indexed, its staged changes are reviewed (exit 1 on an error-level finding), the SARIF output
validates against the SARIF 2.1.0 schema, and the pre-commit hook runs through ``pre-commit``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.analyzer.service_corpus import CONFIG, PLANTED, PLANTED_PATH, git, make_git_repo
from tests.e2e.conftest import admin_token
from tests.e2e.harness import RunningSystem

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SCHEMA = json.loads((ROOT / "tests" / "clients" / "sarif" / "sarif-schema-2.1.0.json").read_text())
VOID_INVOICE = '\n\ndef voidInvoice(invoice_id: str) -> str:\n    """Void."""\n    return invoice_id\n'
PLANTED_RULES = {"naming.case.function", "documentation.docstring.function", "idioms.print"}


@dataclass
class Workspace:
    path: Path
    env: dict[str, str]
    token: str
    repo_id: str = ""

    def run(
        self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "codereview"), *args],
            cwd=cwd or self.path,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=240,
        )


@pytest.fixture(scope="module")
def work(system: RunningSystem, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    token = admin_token(system, "cli-user")
    path = system.work / "repos" / "cli-shop"  # type: ignore[attr-defined]
    make_git_repo(path)
    # The team treats naming as an error: what makes a commit fail by default (--fail-on error).
    (path / ".codereview.yml").write_text(CONFIG + "severity:\n  naming: error\n")
    git(path, "add", ".codereview.yml")
    git(path, "commit", "-q", "-m", "naming deviations are errors here")
    home = tmp_path_factory.mktemp("home")
    env = {
        "PATH": f"{BIN}:{os.environ['PATH']}",
        "HOME": str(home),
        "CODEREVIEW_URL": system.url,
        "CODEREVIEW_TOKEN": token,
        "CODEREVIEW_CONFIG": str(home / "config.toml"),
    }
    return Workspace(path, env, token)


def json_of(done: subprocess.CompletedProcess[str]) -> dict:
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


def test_repo_add_index_list_status(work: Workspace) -> None:
    added = work.run("repo", "add", "--index", "--json")
    assert added.returncode == 0, added.stderr
    body = json_of(added)
    assert body["kind"] == "local"
    assert Path(body["source"]) == work.path
    assert body["index"]["state"] == "ready"
    work.repo_id = body["id"]
    listed = json_of(work.run("repo", "list", "--json"))
    assert work.repo_id in [r["id"] for r in listed["repositories"]]
    status = work.run("repo", "status")
    assert status.returncode == 0
    assert "state: ready" in status.stdout
    again = work.run("repo", "index", "--incremental", "--json")
    assert again.returncode == 0, again.stderr
    assert json_of(again)["state"] == "ready"


def test_review_staged_exits_non_zero_on_an_error_finding_and_writes_valid_sarif(
    work: Workspace, tmp_path: Path
) -> None:
    (work.path / PLANTED_PATH).write_text(PLANTED)
    git(work.path, "add", PLANTED_PATH)
    try:
        done = work.run("review", "--staged", "--json")
        result = json_of(done)
        rules = {f["rule"] for f in result["findings"]}
        assert rules >= PLANTED_RULES
        assert any(f["severity"] == "error" for f in result["findings"]), result["findings"]
        assert done.returncode == 1, done.stderr
        assert work.run("review", "--staged", "--fail-on", "none").returncode == 0
        table = work.run("review", "--staged")
        assert table.returncode == 1
        assert "naming.case.function" in table.stdout
        assert "\x1b[" not in table.stdout  # no colour off a terminal
        if shutil.which("script"):  # util-linux: run it on a pseudo-terminal
            command = f"{BIN / 'codereview'} review --staged"
            tty_env = {**work.env, "TERM": "xterm-256color", "COLUMNS": "160"}
            on_tty = subprocess.run(
                ["script", "-qec", command, "/dev/null"], cwd=work.path, env=tty_env, capture_output=True, text=True
            )
            assert on_tty.returncode == 1
            assert "\x1b[" in on_tty.stdout  # colour on a terminal
            assert "naming.case.function" in on_tty.stdout

        sarif_path = tmp_path / "review.sarif"
        sarif = work.run("review", "--staged", "--format", "sarif", "--output", str(sarif_path))
        assert sarif.returncode == 1, sarif.stderr
        log = json.loads(sarif_path.read_text())
        jsonschema.validate(log, SCHEMA)
        assert {r["ruleId"] for r in log["runs"][0]["results"]} == rules
    finally:
        git(work.path, "reset", "-q", "--", PLANTED_PATH)
        (work.path / PLANTED_PATH).unlink()
    assert work.run("review", "--staged").returncode == 0  # nothing staged: nothing to fail on


def test_review_files_sends_unsaved_content_and_merges_sarif(work: Workspace, tmp_path: Path) -> None:
    (work.path / PLANTED_PATH).write_text(PLANTED)  # on disk only: never indexed or staged
    try:
        done = work.run("review", PLANTED_PATH, "app/billing/invoice.py", "--json", "--fail-on", "warning")
        result = json_of(done)
        assert {f["path"] for f in result["findings"]} == {PLANTED_PATH}
        assert result["files_analyzed"] == 2
        assert done.returncode == 1
        out = tmp_path / "two.sarif"
        assert work.run("review", PLANTED_PATH, "app/billing/invoice.py", "-f", "sarif", "-o", str(out)).returncode
        log = json.loads(out.read_text())
        jsonschema.validate(log, SCHEMA)
        assert len(log["runs"]) == 1
        rules = log["runs"][0]["tool"]["driver"]["rules"]
        for result_ in log["runs"][0]["results"]:
            assert rules[result_["ruleIndex"]]["id"] == result_["ruleId"]
    finally:
        (work.path / PLANTED_PATH).unlink()


def test_review_branch_against_base(work: Workspace, tmp_path: Path) -> None:
    git(work.path, "checkout", "-q", "-b", "cli-feature")
    try:
        target = work.path / "app" / "billing" / "invoice.py"
        target.write_text(target.read_text() + VOID_INVOICE)
        git(work.path, "commit", "-q", "-am", "void invoices")
        done = work.run("review", "--base", "main", "--json", "--fail-on", "none")
        assert done.returncode == 0, done.stderr
        assert ("naming.case.function", "app/billing/invoice.py") in {
            (f["rule"], f["path"]) for f in json_of(done)["findings"]
        }
    finally:
        git(work.path, "checkout", "-q", "main")
        git(work.path, "branch", "-q", "-D", "cli-feature")


def test_review_branch_says_what_was_already_there(work: Workspace) -> None:
    """An annotation-only edit of an old undocumented function: the CLI sends each file's base
    (its content at the fork point), the server answers the finding as already there."""
    git(work.path, "checkout", "-q", "-b", "cli-legacy")
    try:
        (work.path / PLANTED_PATH).write_text(PLANTED)
        git(work.path, "add", PLANTED_PATH)
        git(work.path, "commit", "-q", "-m", "legacy audit module")
        fork = git(work.path, "rev-parse", "HEAD")
        old_def = "def count_audit_items(store: AuditStore) -> int:"
        (work.path / PLANTED_PATH).write_text(PLANTED.replace(old_def, old_def.replace(") ->", ", /) ->")))
        git(work.path, "commit", "-q", "-am", "positional store")
        done = work.run("review", "--base", fork, "--json", "--fail-on", "info")
        assert done.returncode == 0, done.stderr  # nothing introduced: nothing to fail on
        body = json_of(done)
        assert body["findings"] == []
        assert [(f["rule"], f["preexisting"]) for f in body["preexisting"]] == [
            ("documentation.docstring.function", True)
        ]
        table = work.run("review", "--base", fork)
        assert "1 already there" in table.stdout, table.stdout
    finally:
        git(work.path, "checkout", "-q", "main")
        git(work.path, "branch", "-q", "-D", "cli-legacy")


def test_context_conventions_report_and_login(work: Workspace) -> None:
    context = json_of(work.run("context", "app/billing/invoice.py", "--json"))
    assert context["path"] == "app/billing/invoice.py"
    assert context["conventions"]
    assert work.run("context", "app/billing/invoice.py").returncode == 0
    conventions = json_of(work.run("conventions", "--json"))
    assert any(c["rule"] == "naming.case.function" for c in conventions)

    (work.path / PLANTED_PATH).write_text(PLANTED)
    try:
        finding = next(
            f for f in json_of(work.run("review", PLANTED_PATH, "--json"))["findings"] if f["rule"] == "idioms.print"
        )
    finally:
        (work.path / PLANTED_PATH).unlink()
    reported = work.run("report", "dismissed", finding["id"], "--comment", "prints are fine in this module")
    assert reported.returncode == 0, reported.stderr
    assert "Recorded 1" in reported.stdout
    unknown = work.run("report", "accepted", "f_0000000000000000")
    assert unknown.returncode == 3

    missing = work.run("repo", "status", "no-such-repo", "--json")
    assert missing.returncode == 3
    assert json.loads(missing.stdout)["code"] == "repo_not_found"

    config = Path(work.env["CODEREVIEW_CONFIG"])
    env = {"CODEREVIEW_TOKEN": "", "CODEREVIEW_URL": ""}
    bad = work.run("login", "--token", "crp_not_a_real_token", "--url", work.env["CODEREVIEW_URL"], env=env)
    assert bad.returncode == 3
    assert not config.exists()
    good = work.run("login", "--token", work.token, "--url", work.env["CODEREVIEW_URL"], env=env)
    assert good.returncode == 0, good.stderr
    assert "cli-user" in good.stdout
    # The saved file now serves commands without any CODEREVIEW_* variable.
    assert work.run("repo", "list", "--json", env=env).returncode == 0


def test_pre_commit_hook_blocks_a_commit_with_an_error_finding(work: Workspace, tmp_path: Path) -> None:
    """The shipped hook definition, run by pre-commit itself as a local hook (offline)."""
    scratch = tmp_path / "scratch"
    git(tmp_path, "clone", "-q", str(work.path), str(scratch))
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    local = {**hook, "language": "system", "args": ["--repo", work.repo_id]}
    (scratch / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]}))
    git(scratch, "add", ".pre-commit-config.yaml")
    git(scratch, "commit", "-q", "-m", "pre-commit config")
    env = {**work.env, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    pre_commit = [str(BIN / "pre-commit")]
    subprocess.run([*pre_commit, "install"], cwd=scratch, env=env, check=True, capture_output=True)

    (scratch / PLANTED_PATH).write_text(PLANTED)
    git(scratch, "add", PLANTED_PATH)
    blocked = subprocess.run(
        ["git", "-c", "user.email=dev@example.com", "-c", "user.name=Dev", "commit", "-m", "audit"],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert blocked.returncode != 0, blocked.stdout
    assert "naming.case.function" in blocked.stdout + blocked.stderr
    assert "Failed" in blocked.stdout + blocked.stderr

    (scratch / PLANTED_PATH).write_text(
        PLANTED.replace("loadAuditNames", "load_audit_names").replace("    print(label)\n", "")
    )
    git(scratch, "add", PLANTED_PATH)
    run = subprocess.run([*pre_commit, "run"], cwd=scratch, env=env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    shutil.rmtree(scratch)


def test_ci_recipes_review_a_branch_and_write_sarif(work: Workspace, tmp_path: Path) -> None:
    """docs/ci: the generic script and the GitHub job's review command, on a clone with a branch."""
    clone = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(work.path), str(clone))
    git(clone, "checkout", "-q", "-b", "feature")
    target = clone / "app" / "billing" / "invoice.py"
    target.write_text(target.read_text() + VOID_INVOICE)
    git(clone, "commit", "-q", "-am", "void invoices")
    doc = (ROOT / "docs" / "ci.md").read_text()

    def check(sarif_path: Path) -> None:
        log = json.loads(sarif_path.read_text())
        jsonschema.validate(log, SCHEMA)
        results = log["runs"][0]["results"]
        assert ("naming.case.function", "error") in {(r["ruleId"], r["level"]) for r in results}
        uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in results for loc in r["locations"]}
        assert "app/billing/invoice.py" in uris

    script = ROOT / "docs" / "ci" / "review.sh"
    assert script.read_text() in doc  # the page shows the tested file, so it cannot drift
    env = {"CODEREVIEW_REPO": work.repo_id, "CODEREVIEW_BASE": "origin/main"}
    generic = subprocess.run(["sh", str(script)], cwd=clone, env={**work.env, **env}, capture_output=True, text=True)
    assert generic.returncode == 1, generic.stderr
    check(clone / "codereview.sarif")

    workflow_text = (ROOT / "docs" / "ci" / "github-actions.yml").read_text()
    assert workflow_text in doc
    workflow = yaml.safe_load(workflow_text)
    assert workflow["permissions"]["security-events"] == "write"
    steps = workflow["jobs"]["review"]["steps"]
    review = next(s for s in steps if s.get("name") == "Review the pull request")
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert f"--output {upload['with']['sarif_file']}" in review["run"]
    assert set(review["env"]) == {"CODEREVIEW_URL", "CODEREVIEW_TOKEN"}
    command = review["run"].replace("${{ github.repository }}", work.repo_id).replace("${{ github.base_ref }}", "main")
    (clone / "codereview.sarif").unlink()
    job = subprocess.run(["bash", "-c", command], cwd=clone, env=work.env, capture_output=True, text=True)
    assert job.returncode == 1, job.stderr
    check(clone / "codereview.sarif")
