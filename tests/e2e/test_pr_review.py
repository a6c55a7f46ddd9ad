"""Pull-request reviews through the real processes (gateway, hostapp, indexer, analyzer) on the
GitHub stand-in, which serves a real git repository: it is installed, indexed and learned as a
hosted repository, then pull requests are pushed and delivered as signed webhooks.

Each finding is commented once, kept when it moves, resolved with a reply naming the fixing
commit (``fixed`` reaches the analyzer); a 👎 or a thread resolved by a person is ``dismissed``
and the analyzer keeps that finding quiet; a clean change gets ``success`` and no review; a
rename's suggested change applies with ``git apply``; a finished head is not reviewed twice.
"""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.analyzer.service_corpus import git, make_git_repo
from tests.e2e.conftest import admin_token
from tests.e2e.harness import RunningSystem
from tests.e2e.test_code_host import applied, send, wait_for
from tests.standins.github_api import GitHubStandIn, e2e_standin, pull_files
from tests.standins.github_api import fixture as load

pytestmark = pytest.mark.e2e
REPO = "e2e-pr/shop"
INSTALLATION = 7001
FINAL = ("completed", "skipped", "dropped", "superseded", "failed")

NEW_MODULE = '''"""Audit records of the accounts package."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def loadAuditNames(store: dict[str, str], user_id: str) -> list[str]:
    """Names of every audit the user can see."""
    names = [value for key, value in store.items() if key.startswith(user_id)]
    log.info("loaded %d names", len(names))
    return names


def count_audit_names(store: dict[str, str], user_id: str) -> int:
    """How many audits the user can see."""
    return len(loadAuditNames(store, user_id))
'''


# Already at the base: a legacy module with one name against the repository's style.
LEGACY = '''"""Old audit names of the accounts package."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def oldAuditNames(store: dict[str, str]) -> list[str]:
    """Names of every old audit."""
    return sorted(store.values())


def count_old_audits(store: dict[str, str]) -> int:
    """How many old audits are stored."""
    return len(store)
'''
LEGACY_PATH = "app/accounts/old_audits.py"


def with_test(path: str, module: str) -> dict[str, str]:
    """The module and the test the repository's convention wants beside it."""
    package, name = path.split("/")[1], path.rsplit("/", 1)[1].removesuffix(".py")
    function = next(line.split("(")[0][4:] for line in module.splitlines() if line.startswith("def count_"))
    test = f'''"""Tests of the {name} module."""

from __future__ import annotations

from app.{package}.{name} import {function}


def test_{function}_of_an_empty_store() -> None:
    """An empty store counts nothing."""
    assert {function}({{}}, "u1") == 0
'''
    return {path: module, f"tests/{package}/test_{name}.py": test}


def db_rows(system: RunningSystem, service: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    url = system.layout.database_urls[service].replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchall()


@dataclass
class Hosted:
    work: Path  # the developer's clone
    bare: Path  # what the stand-in serves
    base: str
    github: GitHubStandIn
    heads: dict[int, list[str]] = field(default_factory=dict)


@pytest.fixture(scope="module")
def hosted(system: RunningSystem, http: httpx.Client) -> Hosted:
    github = e2e_standin()
    root = system.work / "hosted"  # type: ignore[attr-defined]
    work, bare = root / "shop", root / "shop.git"
    make_git_repo(work)
    (work / LEGACY_PATH).write_text(LEGACY)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "legacy module")
    base = git(work, "rev-parse", "HEAD")
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    github.serve_git(REPO, bare)
    installed = load("installation.created.json")
    installed["installation"]["id"] = INSTALLATION
    installed["repositories"] = [{"id": 9001, "name": "shop", "full_name": REPO, "private": False}]
    assert send(http, "installation", installed, "pr-review-installed").status_code == 200
    assert applied(system, "pr-review-installed")[0]  # the records exist before the index asks for them
    auth = {"Authorization": f"Bearer {admin_token(system, 'pr-owner')}"}
    status = http.post("/v1/repositories/host_index", json={"full_name": REPO}, headers=auth)
    assert status.status_code == 202, status.text
    repo_id = status.json()["repository_id"]
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        body = http.get(f"/v1/repositories/{repo_id}/index/status", headers=auth).json()
        if body.get("state") == "failed":
            raise AssertionError(body)
        if body.get("state") == "ready" and body.get("model_commit") == base:
            break
        time.sleep(0.5)
    else:
        raise AssertionError(f"not indexed and learned: {body}")
    return Hosted(work, bare, base, github)


def push(system: RunningSystem, http: httpx.Client, h: Hosted, number: int, files: dict[str, str]) -> tuple[str, Any]:
    """Commit ``files`` on the pull request's branch, push it, deliver the webhook, wait for the job."""
    branch = f"pr-{number}"
    if number not in h.heads:
        git(h.work, "checkout", "-q", "-b", branch, h.base)
    else:
        git(h.work, "checkout", "-q", branch)
    for path, text in files.items():
        (h.work / path).parent.mkdir(parents=True, exist_ok=True)
        (h.work / path).write_text(text)
    git(h.work, "add", "-A")
    git(h.work, "commit", "-q", "-m", f"push {len(h.heads.get(number, [])) + 1}")
    head = git(h.work, "rev-parse", "HEAD")
    git(h.work, "push", "-q", str(h.bare), f"{branch}:refs/heads/{branch}")
    h.github.serve_git(REPO, h.bare)
    h.github.set_pull(REPO, number, head_sha=head, base_sha=h.base)
    h.github.set_files(REPO, number, pull_files(h.bare, h.base, head))
    action = "synchronize" if number in h.heads else "opened"
    h.heads.setdefault(number, []).append(head)
    job_id = deliver(system, http, number, head, action)
    return head, wait_job(system, job_id)


def deliver(system: RunningSystem, http: httpx.Client, number: int, head: str, action: str) -> str:
    body = load("pull_request.opened.json")
    body.update(action=action, number=number)
    body["installation"]["id"] = INSTALLATION
    body["repository"]["full_name"] = REPO
    body["pull_request"]["number"] = number
    body["pull_request"]["head"]["sha"] = head
    delivery = str(uuid.uuid4())
    reply = send(http, "pull_request", body, delivery)
    assert reply.status_code == 200, reply.text
    return applied(system, delivery)[2]


def wait_job(system: RunningSystem, job_id: str) -> dict[str, Any]:
    sql = "select state, conclusion, check_run_id, findings, comments, summary from pr_jobs where id = %s"
    row = wait_for(
        lambda: (r := db_rows(system, "hostapp", sql, job_id)) and r[0][0] in FINAL and r[0],
        timeout=90,
        what=f"job {job_id}",
    )
    return dict(zip(("state", "conclusion", "check_run_id", "findings", "comments", "summary"), row, strict=True))


def verdicts(system: RunningSystem) -> dict[str, str]:
    return dict(db_rows(system, "analyzer", "select fingerprint, verdict from feedback"))


def comments_on(h: Hosted, number: int) -> list[dict[str, Any]]:
    return h.github.review_comments(REPO, number)


def test_a_finding_is_commented_once_kept_when_moved_and_resolved_when_fixed(
    system: RunningSystem, http: httpx.Client, hosted: Hosted
) -> None:
    h = hosted
    head1, job1 = push(system, http, h, 1, with_test("app/accounts/audit.py", NEW_MODULE))
    assert job1["state"] == "completed", job1
    assert job1["conclusion"] == "failure"  # a new strict finding fails by default
    (comment,) = comments_on(h, 1)
    # On the function's line, and spanning its call: the suggestion must change both.
    assert (comment["path"], comment["start_line"], comment["line"]) == ("app/accounts/audit.py", 10, 19)
    assert "naming.case.function" in comment["body"]
    fingerprint = db_rows(system, "hostapp", "select fingerprint from pr_findings where comment_id = %s", comment["id"])

    # The rename's suggested change covers both lines that name the function, and applies.
    suggestion = re.search(r"```suggestion\n(.*?)```", comment["body"], re.S)
    assert suggestion is not None
    request = comment["_request"]
    assert (request["start_line"], request["line"]) == (10, 19)
    old = (h.work / "app/accounts/audit.py").read_text().splitlines(keepends=True)
    new = [*old[: request["start_line"] - 1], suggestion.group(1), *old[request["line"] :]]
    check = h.work.parent / "suggestion"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(check), head1], cwd=h.work, check=True)
    patched = check / "app/accounts/audit.py"
    patched.write_text("".join(new))
    diff = subprocess.run(["git", "diff"], cwd=check, capture_output=True, text=True, check=True).stdout
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=check, check=True)
    subprocess.run(["git", "apply", "--check", "-"], cwd=check, input=diff, text=True, check=True)
    assert "def load_audit_names(" in "".join(new)
    assert "len(load_audit_names(store" in "".join(new)

    # Moved down two lines: no new comment, the thread is kept.
    moved = NEW_MODULE.replace("\n\ndef loadAuditNames", "\n\nLIMIT = 10\n\n\ndef loadAuditNames", 1)
    _, job2 = push(system, http, h, 1, with_test("app/accounts/audit.py", moved))
    assert job2["state"] == "completed", job2
    assert len(comments_on(h, 1)) == 1
    assert len([r for r in h.github.reviews.values() if r["_pull"] == (REPO, 1)]) == 1
    assert db_rows(system, "hostapp", "select state, line from pr_findings where comment_id = %s", comment["id"]) == [
        ("open", 13)
    ]

    # Fixed: the thread is resolved with a reply naming the commit; "fixed" reaches the analyzer.
    fixed = moved.replace("loadAuditNames", "load_audit_names")
    head3, job3 = push(system, http, h, 1, with_test("app/accounts/audit.py", fixed))
    summary = h.github.check_runs[job3["check_run_id"]]["output"]
    assert (job3["state"], job3["conclusion"]) == ("completed", "success"), (job3, summary)
    assert h.github.thread_of(comment["id"])["resolved"] is True
    replies = [c["body"] for c in h.github.comments.values() if c.get("in_reply_to_id") == comment["id"]]
    assert replies == [f"Fixed in {head3}: this finding is gone from that commit's analysis."]
    wait_for(lambda: verdicts(system).get(fingerprint[0][0]) == "fixed", 20, "the fixed verdict at the analyzer")

    # The same head again under a new delivery id (a redelivery, a re-open): no second review.
    runs = len(h.github.calls_to("POST", f"/repos/{REPO}/check-runs"))
    again = deliver(system, http, 1, head3, "reopened")
    assert again == db_rows(system, "hostapp", "select id from pr_jobs where head_sha = %s", head3)[0][0]
    assert len(h.github.calls_to("POST", f"/repos/{REPO}/check-runs")) == runs
    assert db_rows(system, "hostapp", "select count(*) from pr_jobs where head_sha = %s", head3) == [(1,)]


def test_a_thumbs_down_keeps_the_finding_quiet_in_the_next_analysis(
    system: RunningSystem, http: httpx.Client, hosted: Hosted
) -> None:
    h = hosted
    module = NEW_MODULE.replace("loadAuditNames", "loadLedgerNames").replace("Audit records", "Ledger records")
    _, job1 = push(system, http, h, 2, with_test("app/billing/ledger_names.py", module))
    assert job1["findings"] >= 1, job1
    (comment,) = comments_on(h, 2)
    h.github.react(comment["id"], "-1", login="maintainer")
    _, job2 = push(system, http, h, 2, with_test("app/billing/ledger_names.py", module + "\n\nLIMIT = 10\n"))
    fingerprint = db_rows(
        system, "hostapp", "select fingerprint, state from pr_findings where comment_id = %s", comment["id"]
    )
    assert fingerprint[0][1] == "dismissed"
    assert verdicts(system).get(fingerprint[0][0]) == "dismissed"  # sent before the analysis ran
    assert (job2["state"], job2["findings"], job2["conclusion"]) == ("completed", 0, "success"), job2
    assert len(comments_on(h, 2)) == 1


def test_a_thread_resolved_by_a_person_is_dismissed(system: RunningSystem, http: httpx.Client, hosted: Hosted) -> None:
    h = hosted
    module = NEW_MODULE.replace("loadAuditNames", "loadOrderNames").replace("Audit records", "Order records")
    head, _ = push(system, http, h, 3, with_test("app/reports/order_names.py", module))
    (comment,) = comments_on(h, 3)
    event = load("pull_request_review_thread.resolved.json")
    event["installation"]["id"] = INSTALLATION
    event["repository"]["full_name"] = REPO
    event["pull_request"]["number"] = 3
    event["pull_request"]["head"]["sha"] = head
    event["thread"]["comments"][0]["id"] = comment["id"]
    assert send(http, "pull_request_review_thread", event, "pr-review-resolved").status_code == 200
    assert applied(system, "pr-review-resolved")[0]
    fingerprint = db_rows(system, "hostapp", "select fingerprint from pr_findings where comment_id = %s", comment["id"])
    wait_for(lambda: verdicts(system).get(fingerprint[0][0]) == "dismissed", 20, "the dismissed verdict")


def test_a_clean_pull_request_gets_success_and_no_review(
    system: RunningSystem, http: httpx.Client, hosted: Hosted
) -> None:
    h = hosted
    clean = NEW_MODULE.replace("loadAuditNames", "load_entry_names").replace("Audit records", "Entry records")
    _, job = push(system, http, h, 4, with_test("app/reports/entry_names.py", clean))
    assert (job["state"], job["conclusion"], job["comments"]) == ("completed", "success", 0), job
    assert [r for r in h.github.reviews.values() if r["_pull"] == (REPO, 4)] == []
    run = h.github.check_runs[job["check_run_id"]]
    assert run["output"]["title"] == "No new convention findings"


def test_a_finding_already_at_the_base_is_counted_not_commented(
    system: RunningSystem, http: httpx.Client, hosted: Hosted
) -> None:
    """A moved block that was already a violation at the base is not this change's doing."""
    h = hosted
    head, below = LEGACY.split("\n\ndef oldAuditNames", 1)
    legacy_fn, count_fn = ("def oldAuditNames" + below).split("\n\n\ndef count_old_audits", 1)
    moved = head + "\n\ndef count_old_audits" + count_fn.rstrip("\n") + "\n\n\n" + legacy_fn.rstrip("\n") + "\n"
    _, job = push(system, http, h, 5, {LEGACY_PATH: moved})
    assert (job["state"], job["conclusion"], job["comments"]) == ("completed", "success", 0), job
    assert comments_on(h, 5) == []
    summary = h.github.check_runs[job["check_run_id"]]["output"]["summary"]
    assert "| already there (also at the base, not commented) | 1 |" in summary
    assert "| `naming.case.function` | 0 | 1 |" in summary
