"""Each code-host webhook fixture handled as the spec's tables say, on a real PostgreSQL:
records and statuses, jobs, outbox events, and de-duplication by delivery and by PR head."""

from __future__ import annotations

import uuid
from typing import Any

import orjson
import pytest
from sqlalchemy import select

from services.contracts.v1 import events_pb2
from services.hostapp import queries, webhooks
from services.hostapp.intake import Intake
from services.hostapp.models import Installation, outbox
from services.kit.bus import SUBJECT_INSTALLATION_REPOS, SUBJECT_PR_JOB
from services.kit.db import Database
from services.kit.errors import ServiceError
from tests.hostapp.conftest import all_jobs, deliver_and_process, deliveries, payload, raw, records

PR_HEAD = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"


async def deliver(db: Database, event: str, body: bytes | dict[str, Any], delivery_id: str = "") -> webhooks.Outcome:
    return await deliver_and_process(db, event, body if isinstance(body, bytes) else orjson.dumps(body), delivery_id)


async def seed(db: Database, installation_id: int, names: dict[str, str]) -> None:
    async with db.session() as session:
        await queries.upsert_installation(session, installation_id, "someone", "User", "active")
        for name, status in names.items():
            await queries.upsert_record(session, installation_id, {"full_name": name, "id": hash(name) % 10**6}, status)


async def outbox_messages(db: Database, subject: str, kind: type) -> list[Any]:
    async with db.session() as session:
        rows = (await session.execute(select(outbox.c.payload).where(outbox.c.subject == subject))).scalars()
        return [kind.FromString(events_pb2.EventEnvelope.FromString(p).payload) for p in rows]


async def installation_status(db: Database, installation_id: int) -> str | None:
    async with db.session() as session:
        row = await session.get(Installation, installation_id)
        return row.status if row else None


async def test_installation_created_makes_one_active_record_per_repository(db: Database) -> None:
    out = await deliver(db, "installation", raw("installation.created"), "d-created")
    assert out.handled
    assert await records(db) == {(957387, "Codertocat/Hello-World"): "active"}
    assert await installation_status(db, 957387) == "active"
    (event,) = await outbox_messages(db, SUBJECT_INSTALLATION_REPOS, events_pb2.InstallationRepositoriesChanged)
    assert (event.installation_id, event.account_login, list(event.added), list(event.removed)) == (
        957387,
        "Codertocat",
        ["Codertocat/Hello-World"],
        [],
    )
    recorded = (await deliveries(db))["d-created"]
    assert (recorded.event, recorded.action, recorded.installation_id, recorded.handled) == (
        "installation",
        "created",
        957387,
        True,
    )


async def test_installation_deleted_marks_every_record_removed(db: Database) -> None:
    await seed(db, 2, {"octocat/Hello-World": "active", "octocat/Spoon-Knife": "suspended"})
    assert (await deliver(db, "installation", raw("installation.deleted"))).handled
    assert await records(db) == {(2, "octocat/Hello-World"): "removed", (2, "octocat/Spoon-Knife"): "removed"}
    assert await installation_status(db, 2) == "removed"
    (event,) = await outbox_messages(db, SUBJECT_INSTALLATION_REPOS, events_pb2.InstallationRepositoriesChanged)
    assert sorted(event.removed) == ["octocat/Hello-World", "octocat/Spoon-Knife"]


async def test_suspend_then_unsuspend_moves_all_live_records(db: Database) -> None:
    await seed(db, 16598467, {"Codertocat/Hello-World": "active", "Codertocat/Gone": "removed"})
    assert (await deliver(db, "installation", raw("installation.suspend"))).handled
    assert await records(db) == {
        (16598467, "Codertocat/Hello-World"): "suspended",
        (16598467, "Codertocat/Gone"): "removed",  # a removed repository is not brought back
    }
    assert await installation_status(db, 16598467) == "suspended"
    assert (await deliver(db, "installation", raw("installation.unsuspend"))).handled
    assert await records(db) == {
        (16598467, "Codertocat/Hello-World"): "active",
        (16598467, "Codertocat/Gone"): "removed",
    }
    assert await installation_status(db, 16598467) == "active"


async def test_repositories_added_creates_active_records(db: Database) -> None:
    await deliver(db, "installation", raw("installation.created"))
    assert (await deliver(db, "installation_repositories", raw("installation_repositories.added"))).handled
    assert await records(db) == {
        (957387, "Codertocat/Hello-World"): "active",
        (957387, "Codertocat/Space"): "active",
    }
    events = await outbox_messages(db, SUBJECT_INSTALLATION_REPOS, events_pb2.InstallationRepositoriesChanged)
    assert [list(e.added) for e in events] == [["Codertocat/Hello-World"], ["Codertocat/Space"]]


async def test_repositories_removed_marks_existing_records_only(db: Database) -> None:
    await seed(db, 2, {"octocat/Hello-World": "active", "octocat/Other": "active"})
    assert (await deliver(db, "installation_repositories", raw("installation_repositories.removed"))).handled
    assert await records(db) == {(2, "octocat/Hello-World"): "removed", (2, "octocat/Other"): "active"}
    (event,) = await outbox_messages(db, SUBJECT_INSTALLATION_REPOS, events_pb2.InstallationRepositoriesChanged)
    assert list(event.removed) == ["octocat/Hello-World"]


async def test_repositories_removed_without_a_record_creates_none(db: Database) -> None:
    await deliver(db, "installation_repositories", raw("installation_repositories.removed"))
    assert await records(db) == {}
    assert await outbox_messages(db, SUBJECT_INSTALLATION_REPOS, events_pb2.InstallationRepositoriesChanged) == []


async def test_created_arriving_after_deleted_is_stale(db: Database) -> None:
    deleted = payload("installation.deleted")
    created = payload("installation.created")
    created["installation"]["id"] = deleted["installation"]["id"]
    await deliver(db, "installation", deleted)
    out = await deliver(db, "installation", created)
    assert not out.handled
    assert "stale" in out.outcome
    assert await records(db) == {}


@pytest.mark.parametrize("fixture", ["pull_request.opened", "pull_request.synchronize", "pull_request.reopened"])
async def test_pull_request_actions_enqueue_an_analyze_job(db: Database, fixture: str) -> None:
    out = await deliver(db, "pull_request", raw(fixture), f"d-{fixture}")
    assert out.handled
    assert out.job_id
    (job,) = await all_jobs(db)
    assert (job.id, job.installation_id, job.repo_full_name, job.pr_number, job.head_sha, job.state) == (
        out.job_id,
        1,
        "Codertocat/Hello-World",
        2,
        PR_HEAD,
        "queued",
    )
    (message,) = await outbox_messages(db, SUBJECT_PR_JOB, events_pb2.AnalyzePrJob)
    assert (message.job_id, message.installation_id, message.repo_full_name, message.pr_number, message.head_sha) == (
        job.id,
        1,
        "Codertocat/Hello-World",
        2,
        PR_HEAD,
    )
    assert (await deliveries(db))[f"d-{fixture}"].job_id == job.id


def _edited() -> dict[str, Any]:
    # Derived: the fixture set has no "edited" example (see the fixtures README).
    body = payload("pull_request.opened", action="edited")
    body["changes"] = {"title": {"from": "Old title"}}
    return body


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(lambda: payload("pull_request.closed"), id="closed"),
        pytest.param(_edited, id="edited"),
        pytest.param(lambda: payload("pull_request.ready_for_review"), id="ready_for_review"),
    ],
)
async def test_other_pull_request_actions_are_ignored(db: Database, body: Any) -> None:
    out = await deliver(db, "pull_request", body(), "d-ignored")
    assert not out.handled
    assert await all_jobs(db) == []
    assert await outbox_messages(db, SUBJECT_PR_JOB, events_pb2.AnalyzePrJob) == []
    recorded = (await deliveries(db))["d-ignored"]
    assert (recorded.handled, recorded.job_id) == (False, None)


@pytest.mark.parametrize(
    ("event", "fixture"),
    [
        ("ping", "ping"),
        ("ping", "ping.with-app_id"),
        ("check_suite", "check_suite.requested"),
        ("check_run", "check_run.rerequested"),
        ("github_app_authorization", "github_app_authorization.revoked"),
        ("installation", "installation.new_permissions_accepted"),
    ],
)
async def test_unhandled_events_are_recorded_and_acknowledged(db: Database, event: str, fixture: str) -> None:
    out = await deliver(db, event, raw(fixture), "d-other")
    assert not out.handled
    assert not out.duplicate
    assert (await deliveries(db))["d-other"].event == event
    assert await records(db) == {}
    assert await all_jobs(db) == []


async def test_the_same_delivery_twice_has_one_effect(db: Database) -> None:
    first = await deliver(db, "installation", raw("installation.created"), "same-id")
    second = await deliver(db, "installation", raw("installation.created"), "same-id")
    assert (first.duplicate, second.duplicate) == (False, True)
    assert not second.handled
    assert await records(db) == {(957387, "Codertocat/Hello-World"): "active"}
    assert len(await outbox_messages(db, SUBJECT_INSTALLATION_REPOS, events_pb2.InstallationRepositoriesChanged)) == 1

    pr_first = await deliver(db, "pull_request", raw("pull_request.opened"), "pr-id")
    pr_second = await deliver(db, "pull_request", raw("pull_request.opened"), "pr-id")
    assert pr_second.duplicate
    assert pr_second.job_id == pr_first.job_id
    assert len(await all_jobs(db)) == 1


async def test_a_second_delivery_of_the_same_head_makes_no_second_job(db: Database) -> None:
    first = await deliver(db, "pull_request", raw("pull_request.opened"), "d-1")
    second = await deliver(db, "pull_request", raw("pull_request.synchronize"), "d-2")
    assert not second.duplicate  # a different delivery...
    assert second.job_id == first.job_id  # ...of the same PR head
    assert len(await all_jobs(db)) == 1
    assert len(await outbox_messages(db, SUBJECT_PR_JOB, events_pb2.AnalyzePrJob)) == 1
    assert set(await deliveries(db)) == {"d-1", "d-2"}


async def test_a_new_head_makes_a_new_job(db: Database) -> None:
    await deliver(db, "pull_request", raw("pull_request.opened"))
    pushed = payload("pull_request.synchronize")
    pushed["pull_request"]["head"]["sha"] = "f" * 40
    await deliver(db, "pull_request", pushed)
    assert sorted(j.head_sha for j in await all_jobs(db)) == sorted([PR_HEAD, "f" * 40])


@pytest.mark.parametrize("finished", ["completed", "skipped", "failed"])
async def test_a_reviewed_head_is_not_reviewed_again_on_a_redelivery_or_reopen(db: Database, finished: str) -> None:
    """Issue #22: (pr, head) again under a new delivery id after its job ended makes no job."""
    first = await deliver(db, "pull_request", raw("pull_request.opened"))
    async with db.session() as session:
        await queries.update_job(session, first.job_id, state=finished, finished_at=1)
    for name in ("pull_request.opened", "pull_request.reopened", "pull_request.synchronize"):
        again = await deliver(db, "pull_request", raw(name))
        assert (again.handled, again.job_id) == (False, first.job_id), again
        assert again.outcome == f"head already reviewed ({finished})"
    assert len(await all_jobs(db)) == 1


async def test_a_head_dropped_while_closed_is_reviewed_when_reopened(db: Database) -> None:
    first = await deliver(db, "pull_request", raw("pull_request.opened"))
    async with db.session() as session:
        await queries.update_job(session, first.job_id, state="dropped")
    again = await deliver(db, "pull_request", raw("pull_request.reopened"))
    assert again.handled
    assert again.job_id != first.job_id
    assert len(await all_jobs(db)) == 2


async def test_a_check_run_re_request_reviews_the_head_again(db: Database) -> None:
    first = await deliver(db, "pull_request", raw("pull_request.opened"))
    async with db.session() as session:
        await queries.update_job(session, first.job_id, state="completed")
    rerun = payload("check_run.rerequested")
    rerun["check_run"]["external_id"] = first.job_id
    rerun["installation"] = {"id": 1}
    out = await deliver(db, "check_run", rerun)
    assert out.handled
    assert out.job_id != first.job_id
    jobs = await all_jobs(db)
    assert [(j.head_sha, j.rerun, j.state) for j in jobs] == [(PR_HEAD, False, "completed"), (PR_HEAD, True, "queued")]
    # Not ours (no such job): ignored.
    stranger = payload("check_run.rerequested")
    assert (await deliver(db, "check_run", stranger)).handled is False


async def test_pull_request_for_a_suspended_installation_or_removed_repository_is_ignored(db: Database) -> None:
    await seed(db, 1, {"Codertocat/Hello-World": "removed"})
    out = await deliver(db, "pull_request", raw("pull_request.opened"))
    assert (out.handled, out.outcome) == (False, "ignored: repository removed")
    async with db.session() as session:
        await queries.upsert_installation(session, 1, "Codertocat", "User", "suspended")
    out = await deliver(db, "pull_request", raw("pull_request.opened"))
    assert (out.handled, out.outcome) == (False, "ignored: installation suspended")
    assert await all_jobs(db) == []


async def test_malformed_bodies_are_bad_requests_and_record_nothing(db: Database) -> None:
    for body in (b"{not json", b"[1, 2]"):
        with pytest.raises(ServiceError) as err:
            await deliver(db, "pull_request", body)
        assert err.value.code == "bad_request"
    assert await deliveries(db) == {}


def _pr_with(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    body = payload("pull_request.opened")
    target = body
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return body


@pytest.mark.parametrize(
    ("event", "body", "named"),
    [
        ("pull_request", _pr_with(("pull_request", "head", "sha"), "a" * 5000), "pull_request.head.sha"),
        ("pull_request", _pr_with(("pull_request", "number"), 2**40), "pull_request.number"),
        ("pull_request", _pr_with(("pull_request",), "opened"), "pull_request must be an object"),
        ("pull_request", _pr_with(("pull_request", "number"), True), "pull_request.number"),
        ("pull_request", _pr_with(("installation", "id"), 2**64 - 1), "installation.id"),
        ("pull_request", _pr_with(("repository", "full_name"), "x" * 400), "repository.full_name"),
        ("pull_request", _pr_with(("action",), ["opened"]), "action"),
        ("installation", {**payload("installation.created"), "repositories": "all"}, "repositories must be a list"),
    ],
)
async def test_impossible_values_are_recorded_and_refused_with_400(
    db: Database, event: str, body: dict[str, Any], named: str
) -> None:
    delivery = str(uuid.uuid4())
    with pytest.raises(ServiceError) as err:
        await Intake(db).receive(delivery, event, orjson.dumps(body))
    assert err.value.code == "bad_request"
    assert named in err.value.message
    recorded = (await deliveries(db))[delivery]
    assert not recorded.handled
    assert recorded.outcome.startswith("refused: ")
    assert named in recorded.outcome
    assert await all_jobs(db) == []
    # A redelivery of the same id is the recorded no-op, not a second refusal.
    assert (await Intake(db).receive(delivery, event, orjson.dumps(body))).duplicate


@pytest.mark.parametrize(("delivery", "event"), [("d" * 5000, "pull_request"), ("ok", "e" * 500), ("a b", "x")])
async def test_headers_that_cannot_be_recorded_are_refused(db: Database, delivery: str, event: str) -> None:
    with pytest.raises(ServiceError) as err:
        await Intake(db).receive(delivery, event, raw("pull_request.opened"))
    assert err.value.code == "bad_request"
    assert await deliveries(db) == {}
