"""The code-host app through the real processes: signed webhooks at the gateway, records in
hostapp's database, a PR job through the worker against the GitHub stand-in, and a hostapp
killed mid-job whose job is redelivered."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import psycopg
import pytest

from tests.e2e.harness import RunningSystem
from tests.standins.github_api import GitHubStandIn, e2e_standin
from tests.standins.github_api import fixture as load

pytestmark = pytest.mark.e2e
SECRET = "e2e-code-host-secret"
FINAL = ("completed", "skipped", "dropped", "superseded", "failed")


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def send(
    http: httpx.Client, event: str, body: dict[str, Any], delivery: str = "", signature: str | None = None
) -> httpx.Response:
    raw = json.dumps(body).encode()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-GitHub-Hook-ID": "1",
        "X-GitHub-Hook-Installation-Target-ID": "424242",
        "X-GitHub-Hook-Installation-Target-Type": "integration",
        "Content-Type": "application/json",
    }
    if signature != "":
        headers["X-Hub-Signature-256"] = signature or sign(raw)
    return http.post("/webhooks/code_host", content=raw, headers=headers)


def query(system: RunningSystem, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    url = system.layout.database_urls["hostapp"].replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchall()


def wait_for(check: Callable[[], Any], timeout: float = 30, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def applied(system: RunningSystem, delivery: str) -> tuple[bool, str, str]:
    """(handled, outcome, job id) of a delivery, once hostapp applied it: the answer only says
    it was recorded; its effect follows (services/hostapp/deliveries.py)."""
    sql = "select handled, outcome, coalesce(job_id, '') from webhook_deliveries where delivery_id = %s"
    sql += " and processed_at is not null"
    return tuple(wait_for(lambda: query(system, sql, delivery), what=f"delivery {delivery} applied")[0])  # type: ignore[return-value]


def pull_request(action: str, full_name: str, number: int, head: str) -> dict[str, Any]:
    body = load("pull_request.opened.json")
    body["action"] = action
    body["number"] = number
    body["repository"]["full_name"] = full_name
    body["pull_request"]["number"] = number
    body["pull_request"]["head"]["sha"] = head
    return body


@pytest.fixture(scope="module")
def github(system: RunningSystem) -> GitHubStandIn:
    return e2e_standin()


def test_bad_or_missing_signature_is_401_and_records_nothing(system: RunningSystem, http: httpx.Client) -> None:
    body = load("installation.created.json")
    for delivery, signature in (("bad-sig", sign(b"other body")), ("no-sig", ""), ("wrong-secret", None)):
        raw_signature = sign(json.dumps(body).encode(), "not-the-secret") if delivery == "wrong-secret" else signature
        reply = send(http, "installation", body, delivery, raw_signature)
        assert reply.status_code == 401, reply.text
        assert reply.json()["code"] == "invalid_signature"
    ids = ["bad-sig", "no-sig", "wrong-secret"]
    assert query(system, "select delivery_id from webhook_deliveries where delivery_id = any(%s)", ids) == []
    assert query(system, "select count(*) from installation_repositories where installation_id = 957387") == [(0,)]


def test_installation_fixtures_through_the_gateway(system: RunningSystem, http: httpx.Client) -> None:
    created = send(http, "installation", load("installation.created.json"), "e2e-created")
    assert created.status_code == 200, created.text
    assert created.json()["duplicate"] is False
    assert applied(system, "e2e-created")[0] is True
    again = send(http, "installation", load("installation.created.json"), "e2e-created")
    assert again.json()["duplicate"] is True
    assert send(http, "installation_repositories", load("installation_repositories.added.json"), "e2e-added")
    assert applied(system, "e2e-added")[0] is True
    rows = query(system, "select full_name, status from installation_repositories where installation_id = 957387")
    assert sorted(rows) == [("Codertocat/Hello-World", "active"), ("Codertocat/Space", "active")]
    assert query(system, "select count(*) from webhook_deliveries where delivery_id = 'e2e-created'") == [(1,)]


def test_ignored_pull_request_actions_make_no_job(system: RunningSystem, http: httpx.Client) -> None:
    for action in ("closed", "edited"):
        reply = send(http, "pull_request", pull_request(action, "e2e/ignored", 1, "1" * 40), f"e2e-{action}")
        assert reply.status_code == 200, reply.text
        assert applied(system, f"e2e-{action}")[:2] == (False, f"ignored action {action!r}")
    assert query(system, "select count(*) from pr_jobs where repo_key = 'e2e/ignored'") == [(0,)]


def _job(system: RunningSystem, job_id: str) -> tuple[Any, ...] | None:
    rows = query(system, "select state, attempts, check_run_id, summary from pr_jobs where id = %s", job_id)
    return rows[0] if rows else None


def test_a_pr_job_runs_through_the_worker(system: RunningSystem, http: httpx.Client, github: GitHubStandIn) -> None:
    head = "a1" * 20
    github.set_pull("e2e/worker", 3, head_sha=head)
    send(http, "pull_request", pull_request("opened", "e2e/worker", 3, head), "e2e-worker-1")
    send(http, "pull_request", pull_request("synchronize", "e2e/worker", 3, head), "e2e-worker-2")
    handled, _, job_id = applied(system, "e2e-worker-1")
    assert handled
    assert applied(system, "e2e-worker-2")[2] == job_id  # the same head, delivered twice: one job
    # Which outcome depends on the real indexer and analyzer (this repository is not indexed):
    # the job waits for the index, or the analyzer declines or fails and the check run says so.
    state = wait_for(
        lambda: (j := _job(system, job_id)) and j[0] in ("waiting_index", *FINAL) and j,
        what="the job to run",
    )
    (post,) = github.calls_to("POST", "/repos/e2e/worker/check-runs")
    assert post.body["head_sha"] == head
    run = github.check_runs[state[2]]
    if state[0] == "waiting_index":
        assert run["status"] == "queued"
    else:
        assert state[0] in ("completed", "skipped", "failed"), state
        assert run["status"] == "completed"
        assert run["conclusion"] in ("neutral", "success", "failure")
        assert run["output"]["summary"]
    # Any review carries comments on changed lines only (the fixture diff changes none).
    for review in github.reviews.values():
        assert review["request"]["comments"] == []


def test_hostapp_killed_mid_job_is_redelivered(
    system: RunningSystem, http: httpx.Client, github: GitHubStandIn
) -> None:
    head = "b2" * 20
    github.set_pull("e2e/killed", 4, head_sha=head)
    stall = github.stall("GET", "/repos/e2e/killed/pulls/4")
    send(http, "pull_request", pull_request("opened", "e2e/killed", 4, head), "e2e-killed")
    job_id = applied(system, "e2e-killed")[2]
    assert stall.entered.wait(30), "the worker never asked for the pull request"
    assert _job(system, job_id)[:2] == ("running", 1)

    system.kill("hostapp")  # SIGKILL: no ack, no cleanup
    stall.gate.set()
    system.restart("hostapp")
    state = wait_for(
        lambda: (j := _job(system, job_id)) and j[0] in ("waiting_index", *FINAL) and j,
        timeout=45,
        what="the redelivered job to run",
    )
    assert state[1] == 2, state  # a second attempt, by the new process
    assert len(github.calls_to("GET", "/repos/e2e/killed/pulls/4")) == 2
    assert len(github.calls_to("POST", "/repos/e2e/killed/check-runs")) == 1
