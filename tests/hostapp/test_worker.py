"""PR jobs end to end through the worker: real PostgreSQL and NATS, the GitHub stand-in over
loopback, stub analyzer and indexer gRPC servers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import jwt
import pytest

from services.contracts.v1 import analyzer_pb2, events_pb2
from services.kit.bus import SUBJECT_REPOSITORY_INDEXED, Bus
from services.kit.db import Database
from services.kit.errors import ServiceError
from services.kit.outbox import envelope
from tests.hostapp.conftest import all_jobs, payload
from tests.hostapp.harness import Hostapp, wait_until
from tests.standins.github_api import GitHubStandIn

REPO = "Codertocat/Hello-World"
HEAD = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
PATCH = "@@ -1,4 +1,5 @@\n import os\n-import sys\n+import sys, re\n+import json\n \n def main():"
FILES = [
    {"filename": "app.py", "status": "modified", "patch": PATCH},
    {"filename": "README.md", "status": "modified", "patch": "@@ -1 +1 @@\n-old\n+new"},
]


@pytest.fixture
async def app(db: Database, bus: Bus, standin: GitHubStandIn) -> AsyncIterator[Hostapp]:
    standin.set_pull(REPO, 2, head_sha=HEAD, base_sha="b" * 40)
    standin.set_files(REPO, 2, FILES)
    hostapp = await Hostapp(db, bus, standin).start()
    yield hostapp
    await hostapp.stop()


def finding(path: str, line: int, severity: str = "warning", rule: str = "naming") -> analyzer_pb2.Finding:
    return analyzer_pb2.Finding(
        path=path, start_line=line, end_line=line, severity=severity, rule=rule, message=f"{rule} at {line}"
    )


def check_run_posts(standin: GitHubStandIn) -> list[Any]:
    return standin.calls_to("POST", rf"/repos/{REPO}/check-runs")


async def test_a_pr_job_runs_end_to_end(app: Hostapp, standin: GitHubStandIn) -> None:
    app.analyzer.findings = [
        finding("app.py", 3, "error", "imports"),  # on a changed line
        finding("app.py", 5),  # unchanged context line
        finding("lib/other.py", 1),  # a file the pull request does not touch
    ]
    out = await app.deliver("pull_request", payload("pull_request.opened"))
    job = await app.wait_for_state(out.job_id, "completed")

    (created,) = check_run_posts(standin)
    assert created.body["head_sha"] == HEAD
    assert created.body["status"] == "in_progress"
    assert created.body["external_id"] == job.id
    run = standin.check_runs[job.check_run_id]
    assert (run["status"], run["conclusion"]) == ("completed", "failure")  # an error-severity finding
    assert "3 new convention findings" in run["output"]["title"]
    assert "lib/other.py:1" in run["output"]["summary"]

    (review,) = standin.reviews.values()
    assert review["request"]["commit_id"] == HEAD
    assert review["request"]["event"] == "COMMENT"
    assert [(c["path"], c["line"], c["side"]) for c in review["request"]["comments"]] == [("app.py", 3, "RIGHT")]
    assert "imports" in review["request"]["comments"][0]["body"]
    assert (job.review_id, job.findings, job.comments, job.conclusion) == (review["id"], 3, 1, "failure")

    (request,) = app.analyzer.requests
    assert (request.repo, request.head, request.base, request.pr_number) == (REPO, HEAD, "b" * 40, 2)
    assert [(f.path, f.status, f.patch) for f in request.files] == [
        (f["filename"], f["status"], f["patch"]) for f in FILES
    ]
    # The app authenticated with a JWT signed by its key, then with the installation token.
    (token_call,) = standin.calls_to("POST", "/app/installations/1/access_tokens")
    claims = jwt.decode(token_call.headers["authorization"][7:], standin.public_key, algorithms=["RS256"])
    assert claims["iss"] == standin.app_id
    assert all(c.headers["authorization"].startswith("token ghs_") for c in standin.calls_to("GET", r"/repos/.*"))


async def test_no_findings_complete_the_check_run_as_success_without_a_review(
    app: Hostapp, standin: GitHubStandIn
) -> None:
    out = await app.deliver("pull_request", payload("pull_request.opened"))
    job = await app.wait_for_state(out.job_id, "completed")
    assert standin.check_runs[job.check_run_id]["conclusion"] == "success"
    assert standin.reviews == {}


@pytest.mark.parametrize(
    ("setup", "summary"),
    [
        pytest.param({"implemented": False}, "does not support", id="unimplemented"),
        pytest.param({"error": ServiceError("repo_not_indexed", "not indexed")}, "not been indexed", id="not_indexed"),
        pytest.param({"error": ServiceError("repo_not_found", "unknown")}, "not registered", id="not_found"),
    ],
)
async def test_analyzer_unavailable_completes_the_check_run_as_neutral(
    app: Hostapp, standin: GitHubStandIn, setup: dict[str, Any], summary: str
) -> None:
    for key, value in setup.items():
        setattr(app.analyzer, key, value)
    out = await app.deliver("pull_request", payload("pull_request.opened"))
    job = await app.wait_for_state(out.job_id, "skipped")
    run = standin.check_runs[job.check_run_id]
    assert (run["status"], run["conclusion"]) == ("completed", "neutral")
    assert summary in run["output"]["summary"]
    assert standin.reviews == {}


async def test_a_closed_pull_request_is_dropped_before_any_check_run(app: Hostapp, standin: GitHubStandIn) -> None:
    standin.set_pull(REPO, 2, head_sha=HEAD, state="closed")
    out = await app.deliver("pull_request", payload("pull_request.opened"))
    job = await app.wait_for_state(out.job_id, "dropped")
    assert job.check_run_id is None
    assert check_run_posts(standin) == []
    assert standin.calls_to("GET", rf"/repos/{REPO}/pulls/2/files") == []
    assert app.analyzer.requests == []


async def test_a_newer_head_supersedes_the_job_and_is_reviewed_instead(app: Hostapp, standin: GitHubStandIn) -> None:
    newer = "c" * 40
    standin.set_pull(REPO, 2, head_sha=newer)  # pushed again; that push's webhook never came
    out = await app.deliver("pull_request", payload("pull_request.opened"))
    old = await app.wait_for_state(out.job_id, "superseded")
    assert old.superseded_by == newer

    async def newer_done() -> bool:
        return any(j.head_sha == newer and j.state == "completed" for j in await all_jobs(app.db))

    await wait_until(newer_done, 20)
    assert [c.body["head_sha"] for c in check_run_posts(standin)] == [newer]
    assert [r.head for r in app.analyzer.requests] == [newer]
    assert len(standin.calls_to("POST", "/app/installations/1/access_tokens")) == 1  # the token is cached


async def test_a_job_waits_for_the_index_and_resumes_on_repository_indexed(
    app: Hostapp, standin: GitHubStandIn, bus: Bus
) -> None:
    app.indexer.state, app.indexer.head_sha = "indexing", ""
    out = await app.deliver("pull_request", payload("pull_request.opened"))
    job = await app.wait_for_state(out.job_id, "waiting_index")
    assert app.analyzer.requests == []  # no analysis runs before the repository is indexed
    assert standin.check_runs[job.check_run_id]["status"] == "queued"

    event = envelope(
        "repository.indexed",
        events_pb2.RepositoryIndexed(repository_id="r1", head_sha="9" * 40, full_name=REPO.lower()),
    )
    await bus.publish(SUBJECT_REPOSITORY_INDEXED, event.SerializeToString(), msg_id=event.id)
    job = await app.wait_for_state(out.job_id, "completed")
    assert len(app.analyzer.requests) == 1
    assert len(check_run_posts(standin)) == 1  # the waiting job's check run is reused
    assert standin.check_runs[job.check_run_id]["conclusion"] == "success"


async def test_a_failed_index_skips_the_review(app: Hostapp, standin: GitHubStandIn) -> None:
    app.indexer.state, app.indexer.head_sha = "failed", ""
    out = await app.deliver("pull_request", payload("pull_request.opened"))
    job = await app.wait_for_state(out.job_id, "skipped")
    assert standin.check_runs[job.check_run_id]["conclusion"] == "neutral"
    assert app.analyzer.requests == []


async def test_a_transient_code_host_failure_is_retried(app: Hostapp, standin: GitHubStandIn) -> None:
    standin.fail("GET", rf"/repos/{REPO}/pulls/2", 500, times=1)
    out = await app.deliver("pull_request", payload("pull_request.opened"))
    job = await app.wait_for_state(out.job_id, "completed")
    assert job.attempts == 2
    assert len(check_run_posts(standin)) == 1


async def test_a_worker_killed_mid_job_is_redelivered_and_resumes(app: Hostapp, standin: GitHubStandIn) -> None:
    app.analyzer.findings = [finding("app.py", 2)]
    stall = standin.stall("GET", rf"/repos/{REPO}/pulls/2/files")
    out = await app.deliver("pull_request", payload("pull_request.opened"))
    assert await asyncio.to_thread(stall.entered.wait, 20)
    running = await app.job(out.job_id)
    assert (running.state, running.attempts) == ("running", 1)
    assert running.check_run_id is not None

    await app.kill_worker()  # no ack: JetStream redelivers after ack_wait
    app.start_worker()
    stall.gate.set()  # let the dead worker's request finish; nobody reads it
    job = await app.wait_for_state(out.job_id, "completed", timeout=30)
    assert job.attempts == 2
    assert len(check_run_posts(standin)) == 1  # the check run of the first attempt is reused
    assert standin.check_runs[job.check_run_id]["status"] == "completed"
    assert len(standin.reviews) == 1
    assert len(standin.calls_to("GET", rf"/repos/{REPO}/pulls/2")) == 2  # the PR is re-read on each attempt
