"""A finding's life on a pull request, through the worker on real PostgreSQL and NATS against
the GitHub stand-in (review threads, GraphQL, reactions): commented once, kept when it moves,
resolved when fixed, dismissed by people, turned off by a command; annotations in batches."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import select

from services.contracts.v1 import analyzer_pb2
from services.hostapp.models import PrFinding
from services.kit.bus import Bus
from services.kit.db import Database
from tests.hostapp.conftest import payload
from tests.hostapp.harness import Hostapp, wait_until
from tests.standins.github_api import GitHubStandIn

REPO = "Codertocat/Hello-World"
HEAD = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
PATCH = "@@ -1,2 +1,6 @@\n import os\n+\n+\n+def loadNames():\n+    return os.sep\n x = 1"
MOVED = "@@ -1,2 +1,8 @@\n import os\n+\n+\n+\n+\n+def loadNames():\n+    return os.sep\n x = 1"


@pytest.fixture
async def app(db: Database, bus: Bus, standin: GitHubStandIn) -> AsyncIterator[Hostapp]:
    hostapp = await Hostapp(db, bus, standin).start()
    yield hostapp
    await hostapp.stop()


def finding(
    line: int, fingerprint: str = "fp-load", rule: str = "naming.case.function", **kw: Any
) -> analyzer_pb2.Finding:
    return analyzer_pb2.Finding(
        id=f"id-{fingerprint}-{line}",
        fingerprint=fingerprint,
        path="app.py",
        start_line=line,
        end_line=line,
        severity=kw.pop("severity", "warning"),
        rule=rule,
        message=f"{rule} at {line}",
        evidence=analyzer_pb2.Evidence(level=kw.pop("level", "strict")),
        **kw,
    )


async def push(
    app: Hostapp, standin: GitHubStandIn, head: str, patch: str, findings: list[analyzer_pb2.Finding]
) -> Any:
    standin.set_pull(REPO, 2, head_sha=head, base_sha="b" * 40)
    standin.set_files(REPO, 2, [{"filename": "app.py", "status": "modified", "patch": patch}])
    app.analyzer.findings = findings
    body = payload("pull_request.synchronize")
    body["pull_request"]["head"]["sha"] = head
    out = await app.deliver("pull_request", body)
    return await app.wait_for_state(out.job_id, "completed", "skipped")


async def rows(app: Hostapp) -> list[PrFinding]:
    async with app.db.session() as session:
        return list((await session.execute(select(PrFinding).order_by(PrFinding.created_at))).scalars())


async def reported(app: Hostapp, *verdicts: tuple[str, str]) -> None:
    await wait_until(lambda: _has(app, verdicts), 10, lambda: f"reports: {app.analyzer.verdicts()}")


async def _has(app: Hostapp, verdicts: tuple[tuple[str, str], ...]) -> bool:
    return all(v in app.analyzer.verdicts() for v in verdicts)


async def test_a_finding_is_commented_once_kept_when_moved_and_resolved_when_fixed(
    app: Hostapp, standin: GitHubStandIn
) -> None:
    first = await push(app, standin, "1" * 40, PATCH, [finding(4)])
    (comment,) = standin.review_comments(REPO, 2)
    assert (comment["path"], comment["line"]) == ("app.py", 4)
    (row,) = await rows(app)
    assert (row.fingerprint, row.comment_id, row.state, row.first_head) == ("fp-load", comment["id"], "open", "1" * 40)
    assert standin.check_runs[first.check_run_id]["conclusion"] == "failure"  # a new strict finding

    # The same finding two lines lower: no review, no comment; the row follows it.
    moved = await push(app, standin, "2" * 40, MOVED, [finding(6)])
    assert len(standin.reviews) == 1
    assert len(standin.review_comments(REPO, 2)) == 1
    (row,) = await rows(app)
    assert (row.state, row.line, row.last_head) == ("open", 6, "2" * 40)
    assert "1 already commented on an earlier push" in standin.check_runs[moved.check_run_id]["output"]["summary"]
    assert standin.calls_to("POST", "/api/graphql") == []  # nothing to resolve: threads not even read

    # Fixed: a reply names the commit, the thread is resolved, the analyzer hears "fixed".
    fixed = await push(app, standin, "3" * 40, "@@ -1,2 +1,3 @@\n import os\n+y = 2\n x = 1", [])
    thread = standin.thread_of(comment["id"])
    assert thread["resolved"] is True
    replies = [c for c in standin.comments.values() if c.get("in_reply_to_id") == comment["id"]]
    assert [r["body"] for r in replies] == [f"Fixed in {'3' * 40}: this finding is gone from that commit's analysis."]
    (row,) = await rows(app)
    assert (row.state, row.fixed_by, row.thread_resolved) == ("fixed", "3" * 40, True)
    await reported(app, ("fp-load", "fixed"))
    run = standin.check_runs[fixed.check_run_id]
    assert run["conclusion"] == "success"
    assert "| fixed on this pull request | 1 |" in run["output"]["summary"]
    assert len(standin.reviews) == 1  # a clean head gets no review

    # Our own resolution comes back as a webhook (sent by the app's bot): no verdict from it.
    event = payload("pull_request_review_thread.resolved")
    event["thread"]["comments"][0]["id"] = comment["id"]
    event["sender"]["type"] = "Bot"
    assert (await app.deliver("pull_request_review_thread", event)).handled is False


async def test_a_finding_left_out_by_the_per_change_cap_is_not_fixed(app: Hostapp, standin: GitHubStandIn) -> None:
    # The analyzer lists a few findings of one rule per change and counts the rest on the last
    # (Finding.more): a push that adds findings of the rule earlier in the change can leave an
    # already commented one unlisted; it is still there, so its thread stays open.
    await push(app, standin, "1" * 40, PATCH, [finding(4)])
    (comment,) = standin.review_comments(REPO, 2)
    listed = [finding(2, "fp-a"), finding(3, "fp-b", more=1)]
    later = await push(app, standin, "2" * 40, MOVED, listed)
    row = next(r for r in await rows(app) if r.fingerprint == "fp-load")
    assert (row.state, row.thread_resolved) == ("open", False)
    assert not standin.thread_of(comment["id"])["resolved"]
    assert ("fp-load", "fixed") not in app.analyzer.verdicts()
    summary = standin.check_runs[later.check_run_id]["output"]["summary"]
    assert "| `naming.case.function` | 3 | 0 |" in summary  # the unlisted one counted


async def test_a_thumbs_down_dismisses_before_the_next_analysis(app: Hostapp, standin: GitHubStandIn) -> None:
    await push(app, standin, "1" * 40, PATCH, [finding(4)])
    (comment,) = standin.review_comments(REPO, 2)
    standin.react(comment["id"], "-1", login="reviewer")
    standin.react(comment["id"], "+1", login="some-bot[bot]", bot=True)  # bots are not people
    app.analyzer.requests.clear()
    # The analyzer honours the dismissal, so the next analysis no longer has the finding.
    await push(app, standin, "2" * 40, MOVED, [])
    assert ("fp-load", "dismissed") in app.analyzer.verdicts()
    (row,) = await rows(app)
    assert (row.state, row.reaction) == ("dismissed", "-1")
    assert not standin.thread_of(comment["id"])["resolved"]  # gone because dismissed, not fixed: no reply
    assert [c for c in standin.comments.values() if c.get("in_reply_to_id")] == []
    assert ("fp-load", "fixed") not in app.analyzer.verdicts()


async def test_the_reconciler_reads_reactions_of_quiet_pull_requests(app: Hostapp, standin: GitHubStandIn) -> None:
    from services.hostapp.reconciler import Reconciler

    await push(app, standin, "1" * 40, PATCH, [finding(4)])
    (comment,) = standin.review_comments(REPO, 2)
    standin.react(comment["id"], "+1", login="reviewer")
    reconciler = Reconciler(app.db, app.github, app.settings, tracker=app.tracker)
    assert await reconciler.read_reactions() == 1
    await reported(app, ("fp-load", "accepted"))
    assert await reconciler.read_reactions() == 0  # read once


async def test_a_thread_resolved_by_a_person_without_a_code_change_is_dismissed(
    app: Hostapp, standin: GitHubStandIn
) -> None:
    await push(app, standin, HEAD, PATCH, [finding(4)])
    (comment,) = standin.review_comments(REPO, 2)
    event = payload("pull_request_review_thread.resolved")  # the fixture's head is HEAD
    event["thread"]["comments"][0]["id"] = comment["id"]
    out = await app.deliver("pull_request_review_thread", event)
    assert (out.handled, out.outcome) == (True, "finding dismissed: thread resolved without a code change")
    await reported(app, ("fp-load", "dismissed"))
    (row,) = await rows(app)
    assert row.state == "dismissed"
    # Unresolved again: the finding is revived.
    event = payload("pull_request_review_thread.unresolved")
    event["thread"]["comments"][0]["id"] = comment["id"]
    assert (await app.deliver("pull_request_review_thread", event)).handled
    await reported(app, ("fp-load", "accepted"))
    assert (await rows(app))[0].state == "open"


async def test_a_thread_resolved_after_a_push_is_decided_by_the_next_analysis(
    app: Hostapp, standin: GitHubStandIn
) -> None:
    await push(app, standin, "1" * 40, PATCH, [finding(4)])
    (comment,) = standin.review_comments(REPO, 2)
    event = payload("pull_request_review_thread.resolved")  # head ec26… is not the analysed one
    event["thread"]["comments"][0]["id"] = comment["id"]
    assert (await app.deliver("pull_request_review_thread", event)).outcome.startswith("thread resolved after a push")
    await push(app, standin, "2" * 40, MOVED, [finding(6)])  # still there: the person dismissed it
    await reported(app, ("fp-load", "dismissed"))
    assert (await rows(app))[0].state == "dismissed"


async def test_a_dismissing_reply_and_an_ignore_command(app: Hostapp, standin: GitHubStandIn) -> None:
    await push(app, standin, "1" * 40, PATCH, [finding(4), finding(5, "fp-other", rule="idioms.print")])
    by_line = {c["line"]: c for c in standin.review_comments(REPO, 2)}
    reply = payload("pull_request_review_comment.created")
    reply["comment"].update(in_reply_to_id=by_line[4]["id"], body="This is intended, the name mirrors the JS API.")
    assert (await app.deliver("pull_request_review_comment", reply)).outcome == "finding dismissed by a reply"
    await reported(app, ("fp-load", "dismissed"))

    command = payload("pull_request_review_comment.created")
    command["comment"].update(in_reply_to_id=by_line[5]["id"], body="@code-review ignore")  # the rule of that thread
    out = await app.deliver("pull_request_review_comment", command)
    assert (out.handled, out.outcome) == (True, "command ignore idioms.print")
    await wait_until(lambda: _replied(standin, by_line[5]["id"]), 10)
    (answer,) = [c for c in standin.comments.values() if c.get("in_reply_to_id") == by_line[5]["id"]]
    assert "`idioms.print` is now ignored in Codertocat/Hello-World" in answer["body"]
    assert "`unignore idioms.print` after mentioning @code-review" in answer["body"]

    # The next push: the ignored rule is neither commented nor counted as new, nor "fixed".
    job = await push(app, standin, "2" * 40, MOVED, [finding(6), finding(7, "fp-other", rule="idioms.print"),
                                                      finding(8, "fp-new", rule="idioms.print")])  # fmt: skip
    assert len(standin.review_comments(REPO, 2)) == 2
    run = standin.check_runs[job.check_run_id]
    assert run["conclusion"] == "success"  # one dismissed, two ignored: nothing new
    assert "| ignored rules | 2 |" in run["output"]["summary"]
    assert {r.fingerprint: r.state for r in await rows(app)} == {"fp-load": "dismissed", "fp-other": "open"}

    undo = payload("issue_comment.created.with-installation")
    undo["issue"]["number"] = 2
    undo["issue"]["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/2"}
    undo["comment"]["body"] = "@code-review unignore idioms.print"
    assert (await app.deliver("issue_comment", undo)).outcome == "command unignore idioms.print"
    await wait_until(lambda: _commented(standin), 10)
    assert standin.issue_comments[0]["body"] == "`idioms.print` is checked again in Codertocat/Hello-World."


async def _replied(standin: GitHubStandIn, comment_id: int) -> bool:
    return any(c.get("in_reply_to_id") == comment_id for c in standin.comments.values())


async def _commented(standin: GitHubStandIn) -> bool:
    return bool(standin.issue_comments)


async def test_annotations_go_in_batches_of_fifty(app: Hostapp, standin: GitHubStandIn) -> None:
    many = [finding(i, f"fp-{i}", level="loose") for i in range(1, 121)]
    job = await push(app, standin, "1" * 40, PATCH, many)
    patches = [
        c for c in standin.calls_to("PATCH", rf"/repos/{REPO}/check-runs/\d+") if c.body["output"].get("annotations")
    ]
    assert [len(c.body["output"]["annotations"]) for c in patches] == [50, 50, 20]
    assert [c.body["status"] for c in patches] == ["in_progress", "in_progress", "completed"]
    assert {a["annotation_level"] for c in patches for a in c.body["output"]["annotations"]} == {"notice"}
    # Loose findings are hints: annotated, never commented, and the check passes.
    assert standin.check_runs[job.check_run_id]["conclusion"] == "success"
    assert standin.reviews == {}


async def test_a_skip_is_never_success(app: Hostapp, standin: GitHubStandIn) -> None:
    files = [{"filename": f"f{i}.py", "status": "added", "patch": "@@ -0,0 +1 @@\n+x = 1"} for i in range(301)]
    standin.set_pull(REPO, 2, head_sha=HEAD)
    standin.set_files(REPO, 2, files)
    out = await app.deliver("pull_request", payload("pull_request.opened"))
    job = await app.wait_for_state(out.job_id, "skipped")
    run = standin.check_runs[job.check_run_id]
    assert (run["conclusion"], run["output"]["title"]) == ("neutral", "Not reviewed: over 300 changed files")
    assert app.analyzer.requests == []


async def test_review_choices_from_codereview_yml(app: Hostapp, standin: GitHubStandIn) -> None:
    standin.set_content(REPO, ".codereview.yml", "1" * 40, "review:\n  comments: false\n")
    job = await push(app, standin, "1" * 40, PATCH, [finding(4)])
    assert standin.reviews == {}  # annotations only
    run = standin.check_runs[job.check_run_id]
    assert run["conclusion"] == "failure"
    assert [a["path"] for a in run["output"]["annotations"]] == ["app.py"]
    standin.set_content(REPO, ".codereview.yml", "2" * 40, "review:\n  max_comments: 1\n")
    await push(app, standin, "2" * 40, MOVED, [finding(6), finding(7, "fp-2"), finding(8, "fp-3")])
    assert len(standin.review_comments(REPO, 2)) == 1


async def test_a_finding_already_at_the_base_is_not_commented_but_counted(app: Hostapp, standin: GitHubStandIn) -> None:
    app.analyzer.preexisting = [finding(4, "fp-old", preexisting=True)]
    job = await push(app, standin, "1" * 40, PATCH, [])
    assert standin.reviews == {}
    run = standin.check_runs[job.check_run_id]
    assert run["conclusion"] == "success"  # not this change's doing
    assert "| already there (also at the base, not commented) | 1 |" in run["output"]["summary"]
    assert "| `naming.case.function` | 0 | 1 |" in run["output"]["summary"]
    assert "annotations" not in run["output"]
    assert await rows(app) == []
    # Still there at the next push: nothing changes, nothing is "fixed".
    app.analyzer.preexisting = []
    await push(app, standin, "2" * 40, MOVED, [])
    assert app.analyzer.verdicts() == []
