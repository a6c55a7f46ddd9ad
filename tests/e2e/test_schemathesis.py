"""Schemathesis against the running gateway (all five services, real databases and NATS) with a
seeded user's token: every operation of /v1/openapi.json, all of schemathesis' checks (server
errors, status codes, content types, response schemas and headers, the auth checks, negative and
positive data, unsupported methods). The assertion is that no check fails on any operation and
every 2xx response the document names has a schema, so each one seen was validated against it.
The whole report is kept beside the services' logs (schemathesis.txt, schemathesis.xml).

Bounded: at most MAX_EXAMPLES generated cases per operation and phase, one worker (CPython 3.11 cannot
run ast.parse, which hypothesis uses to describe its filters, in two threads at once), a run
deadline (DEADLINE seconds); it takes about two minutes on a busy laptop.
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
from tests.gateway.test_openapi import responses_without_schema
from tests.indexer.support import sample_repo

pytestmark = pytest.mark.e2e

MAX_EXAMPLES = 8
DEADLINE = 220  # seconds (about 120 on a busy laptop); the subprocess is killed after it (the test fails)

# Statuses a schema-valid request may get besides 2xx and the defaults (401, 403, 404, 409, 429):
# each is a rule no schema can state (the server's disk, network, repository or configuration),
# named here per operation. What a schema can state, the document does (services/api/schemas.py,
# services/kit/paging.py): a clone URL's shape, each listing's whole cursor, a plan id's shape.
CONFIG = """
[parameters]
"path.repo_id" = "{repo_id}"
# Not an id the run's responses name: the run's own token (GET /v1/auth/validate) stays unrevoked.
"path.token_id" = "0"

[[operations]]
# Revoking the run's own token or deleting the seeded repository would end the run early.
include-name = ["DELETE /v1/auth/signout", "DELETE /v1/repositories/{{repo_id}}"]
enabled = false

[[operations]]
# 422: a local path must be a repository under the indexer's allowed roots (its disk); a URL's
# scheme, host and port allowed by the deployment, and its host resolvable (the network).
include-name = ["POST /v1/repositories"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429", "5xx"]

[[operations]]
# 422: the plan catalogue is the billing service's configuration (GET /v1/account/plans), not the
# document's: another deployment's plan id is validation_failed (details.field = plan).
include-name = ["POST /v1/account/checkout", "POST /v1/account/switch-plan"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429", "5xx"]

[[operations]]
# 422: a file is analyzable by its name and content (unsupported_file_type: no parser for it, binary,
# not UTF-8, oversized); base and head must be commits of the repository.
include-name = ["POST /v1/repositories/{{repo_id}}/analyze", "POST /v1/repositories/{{repo_id}}/analyze_pr"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429", "5xx"]

[[operations]]
# 400 no_files: nothing staged in the repository's work tree (its disk); 422: a diff that names no file.
include-name = ["POST /v1/repositories/{{repo_id}}/review_changeset"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "422", "429", "5xx"]

[[operations]]
# The spec's answer to a payment event without a valid signature is 400 (schemathesis cannot sign).
include-name = ["POST /webhooks/payment"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "400"]
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


def test_no_check_fails_on_any_operation(system: RunningSystem, http: httpx.Client, tmp_path: Path) -> None:
    # What makes response_schema_conformance cover every success the run sees.
    document = http.get("/v1/openapi.json").json()
    assert not responses_without_schema(document)
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
        "1",
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
    assert not outcomes["errors"], f"runs that broke (connection dropped, no response): {sorted(outcomes['errors'])}"
    failures = sorted(set(outcomes["failures"]))
    assert not failures, f"{dict(Counter(code for _, code in failures))} on: {failures}"
    # The token held to the end: a run that lost it would have checked little but 401s.
    assert http.get("/v1/auth/validate", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def outcomes_of(report: Path) -> dict:
    """Per operation: the failure codes of each check (``ST101`` = a 5xx, ``ST103`` = an
    undocumented status, ...; ``st explain <code>``) and any run error
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
