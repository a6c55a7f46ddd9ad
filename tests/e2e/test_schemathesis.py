"""Schemathesis against the running gateway (all five services, real databases and NATS) with a
seeded user's token: every operation of /v1/openapi.json, all of schemathesis' checks. The
assertion is that nothing answers 5xx (`not_a_server_error`, code ST101) and no request broke
the connection; the other checks' findings (response schemas, issue #12) are named in the
failure message and the whole report is kept beside the services' logs (schemathesis.txt).

Bounded: at most MAX_EXAMPLES generated cases per operation and phase, two workers, a run
deadline (DEADLINE seconds); it takes about a minute on a laptop.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

import httpx
import pytest

from tests.e2e.conftest import admin_token
from tests.e2e.harness import RunningSystem
from tests.e2e.test_indexing import register, repos_dir, wait_settled
from tests.indexer.support import sample_repo

pytestmark = pytest.mark.e2e

MAX_EXAMPLES = 8
DEADLINE = 170  # seconds; the subprocess is killed after it (the test then fails)

CONFIG = """
[parameters]
"path.repo_id" = "{repo_id}"

[[operations]]
# Revoking the run's own token or deleting the seeded repository would end the run early.
include-name = ["DELETE /v1/auth/signout", "DELETE /v1/repositories/{{repo_id}}"]
enabled = false
"""


def seeded(system: RunningSystem, http: httpx.Client) -> tuple[str, str]:
    """A team-admin's token and an indexed repository of their organization."""
    token = admin_token(system, "fuzzer", org="fuzzers")
    auth = {"Authorization": f"Bearer {token}"}
    sample_repo(repos_dir(system) / "fuzzed", commits=3)
    repo_id = register(http, auth, repos_dir(system) / "fuzzed")
    assert http.post(f"/v1/repositories/{repo_id}/index_repo", headers=auth).status_code == 202
    assert wait_settled(http, auth, repo_id)["state"] == "ready"
    return token, repo_id


def test_no_operation_answers_a_server_error(system: RunningSystem, http: httpx.Client, tmp_path: Path) -> None:
    token, repo_id = seeded(system, http)
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG.format(repo_id=repo_id))
    report = tmp_path / "junit.xml"
    command = [
        str(Path(sys.executable).with_name("st")),
        "--config-file",
        str(config),
        "run",
        f"{system.url}/v1/openapi.json",
        "--url",
        system.url,
        "--header",
        f"Authorization: Bearer {token}",
        "--checks",
        "all",
        "--phases",
        "examples,coverage,fuzzing",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--workers",
        "2",
        "--seed",
        "10",
        "--request-timeout",
        "30",
        "--generation-database",
        "none",
        "--continue-on-failure",
        "--no-color",
        "--report",
        "junit",
        "--report-junit-path",
        str(report),
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE, cwd=tmp_path)
    (system.log_dir / "schemathesis.txt").write_text(run.stdout + run.stderr)  # the whole report, kept
    if report.exists():
        (system.log_dir / "schemathesis.xml").write_bytes(report.read_bytes())
    assert report.exists(), run.stdout[-3000:] + run.stderr[-3000:]
    outcomes = outcomes_of(report)
    assert len(outcomes["operations"]) >= 40, outcomes  # every operation but the two left out ran
    codes = Counter(code for _, code in outcomes["failures"])
    server_errors = sorted({op for op, code in outcomes["failures"] if code == SERVER_ERROR} | outcomes["errors"])
    assert not server_errors, f"5xx or broken responses on: {server_errors} (all failures: {dict(codes)})"


SERVER_ERROR = "ST101"  # schemathesis' code for the not_a_server_error check


def outcomes_of(report: Path) -> dict:
    """Per operation: the failure codes of each check (``ST101`` = a 5xx) and any run error
    (a connection the server dropped, a response that never came)."""
    root = ElementTree.parse(report).getroot()
    operations, failures, errors = set(), [], set()
    for case in root.iter("testcase"):
        name = case.get("name", "")
        operations.add(name)
        for failure in case.iter("failure"):
            failures += [(name, code.strip()) for code in (failure.get("message") or "").split(",")]
        if any(True for _ in case.iter("error")):
            errors.add(name)
    return {"operations": operations, "failures": failures, "errors": errors}
