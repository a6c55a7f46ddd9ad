"""Repositories and index runs through the servicer, on a real database: registration and
its bad inputs, authorization, pagination, the 409 on a second trigger, the reaper."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import select, update

from services.contracts.v1 import common_pb2, events_pb2, indexer_pb2
from services.indexer import repositories
from services.indexer.models import IndexRun, Repository, now_ms, outbox
from services.indexer.servicer import IndexerServicer
from services.indexer.sources import HostApp
from services.indexer.worker import Reaper
from services.kit.errors import ServiceError
from tests.indexer.support import acting_as, init_repo, make_settings, principal, run_row, sample_repo

ALICE = principal("a" * 32, ("org1", "team-admin"))
BOB = principal("b" * 32, ("org1", "viewer"))
MALLORY = principal("c" * 32)


@pytest.fixture
async def env(make_db, tmp_path: Path):  # type: ignore[no-untyped-def]
    db = make_db("indexer")
    settings = make_settings(tmp_path, db)
    (tmp_path / "repos").mkdir()
    servicer = IndexerServicer(db, settings, HostApp(settings))
    return db, settings, servicer, tmp_path / "repos"


async def register(servicer: IndexerServicer, **fields: object) -> indexer_pb2.Repository:
    return await servicer.CreateRepository(indexer_pb2.CreateRepositoryRequest(**fields), None)  # type: ignore[arg-type]


async def refused(coro: object, code: str) -> ServiceError:
    with pytest.raises(ServiceError) as info:
        await coro  # type: ignore[misc]
    assert info.value.code == code, info.value
    return info.value


async def test_register_local_repository_and_find_it_again(env) -> None:  # type: ignore[no-untyped-def]
    _db, _settings, servicer, root = env
    sample_repo(root / "proj")
    with acting_as(ALICE):
        repo = await register(servicer, path=str(root / "proj"))
        again = await register(servicer, path=str(root / "proj"))
        shown = await servicer.GetRepository(indexer_pb2.GetRepositoryRequest(repo=repo.id), None)  # type: ignore[arg-type]
    assert repo.kind == "local"
    assert repo.name == "proj"
    assert repo.owner == f"user:{ALICE.user_id}"
    assert again.id == repo.id
    assert shown.index.state == ""
    assert shown.index.head_sha == ""


@pytest.mark.parametrize(
    ("make_path", "reason"),
    [
        (lambda root: str(root.parent), "path_not_allowed"),  # outside the allowed roots
        (lambda root: str(root / "proj" / ".." / "proj"), "dot_dot"),
        (lambda root: str(root / ".." / "elsewhere"), "dot_dot"),
        (lambda root: str(root / "plain"), "not_a_repository"),
        (lambda root: str(root / "proj" / "app"), "not_a_repository"),  # inside a repo, not its root
        (lambda root: "relative/path", "validation_failed"),
        (lambda root: str(root / "link-out"), "path_not_allowed"),  # a symlink to a repo outside
    ],
)
async def test_bad_local_paths_are_refused(env, tmp_path: Path, make_path, reason: str) -> None:  # type: ignore[no-untyped-def]
    _db, _settings, servicer, root = env
    sample_repo(root / "proj", commits=1)
    (root / "plain").mkdir()
    sample_repo(tmp_path / "outside" / "repo", commits=1)
    (root / "link-out").symlink_to(tmp_path / "outside" / "repo")
    with acting_as(ALICE):
        error = await refused(register(servicer, path=make_path(root)), "validation_failed")
    assert error.details["field"] == "path"
    assert error.details["reason"] == reason


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ext::sh -c touch% /tmp/pwned", "validation_failed"),  # whitespace refused before the scheme check
        ("ext::ssh", "forbidden_scheme"),
        ("file:///etc", "forbidden_scheme"),
        ("--upload-pack=touch /tmp/pwned", "validation_failed"),
        ("-oProxyCommand=x", "validation_failed"),
        ("http://example.com/repo.git", "forbidden_scheme"),  # only https by default
        ("https://user:secret@example.com/repo.git", "validation_failed"),
        ("https://127.0.0.1/repo.git", "forbidden_host"),
        ("https://nonexistent.invalid/repo.git", "unresolvable_host"),  # unreachable
        ("https:/missing-slash", "validation_failed"),  # malformed
        ("not a url", "validation_failed"),
        ("git@github.com:owner/repo.git", "validation_failed"),  # scp-like form
    ],
)
async def test_bad_urls_are_refused(env, url: str, reason: str) -> None:  # type: ignore[no-untyped-def]
    _db, _settings, servicer, _root = env
    with acting_as(ALICE):
        error = await refused(register(servicer, url=url), "validation_failed")
    assert error.details == {"field": "url", "reason": reason}


@pytest.mark.parametrize("port", [22, 80, 8443])
async def test_clone_urls_on_other_ports_need_the_operators_allow_list(env, port: int) -> None:  # type: ignore[no-untyped-def]
    # Before: 201 for any port, so a token holder could make the indexer probe any service.
    _db, settings, servicer, _root = env
    url = f"https://93.184.215.14:{port}/o/r.git"  # a public address literal: no DNS needed
    with acting_as(ALICE):
        error = await refused(register(servicer, url=url), "validation_failed")
        assert error.details == {"field": "url", "reason": "forbidden_port"}
        servicer.settings = settings.model_copy(update={"allowed_clone_origins": f"93.184.215.14:{port}"})
        assert (await register(servicer, url=url)).kind == "url"


async def test_outside_the_roots_the_error_names_the_allowed_roots(env) -> None:  # type: ignore[no-untyped-def]
    _db, _settings, servicer, root = env
    with acting_as(ALICE):
        error = await refused(register(servicer, path="/etc"), "validation_failed")
    assert error.details == {"field": "path", "reason": "path_not_allowed", "allowed_roots": [str(root)]}


async def test_an_organizations_roots_are_its_own(env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _db, settings, servicer, root = env
    org_root = tmp_path / "org1-repos"
    sample_repo(org_root / "private", commits=1)
    servicer.settings = settings.model_copy(update={"org_roots": {"org1": str(org_root)}})
    with acting_as(ALICE):
        repo = await register(servicer, path=str(org_root / "private"), org_id="org1")
        assert repo.owner == "org:org1"
        personal = await refused(register(servicer, path=str(org_root / "private")), "validation_failed")
    assert personal.details["allowed_roots"] == [str(root)]
    with acting_as(MALLORY):
        await refused(register(servicer, path=str(org_root / "private")), "validation_failed")


async def test_a_path_another_organization_registered_cannot_be_registered_again(env) -> None:  # type: ignore[no-untyped-def]
    # Before: Mallory registered org1's path under her own account and read its code through it.
    _db, _settings, servicer, root = env
    sample_repo(root / "proj", commits=1)
    sample_repo(root / "proj" / "vendor" / "lib", commits=1)
    sample_repo(root / "mine", commits=1)
    with acting_as(ALICE):
        theirs = await register(servicer, path=str(root / "proj"), org_id="org1")
    with acting_as(MALLORY):
        for path in (root / "proj", root / "proj" / "vendor" / "lib"):  # the repository, or one inside it
            error = await refused(register(servicer, path=str(path)), "validation_failed")
            assert error.details == {"field": "path", "reason": "path_not_allowed"}
        assert (await register(servicer, path=str(root / "mine"))).owner == f"user:{MALLORY.user_id}"
        with pytest.raises(ServiceError) as info:
            await servicer.GetRepository(indexer_pb2.GetRepositoryRequest(repo=theirs.id), None)  # type: ignore[arg-type]
        assert info.value.code == "repo_not_found"
    with acting_as(BOB):  # a member of org1 already sees it: registering it again reveals nothing
        assert (await register(servicer, path=str(root / "proj"))).owner == f"user:{BOB.user_id}"


async def test_exactly_one_source_is_required(env) -> None:  # type: ignore[no-untyped-def]
    _db, _settings, servicer, root = env
    with acting_as(ALICE):
        await refused(register(servicer), "validation_failed")
        await refused(register(servicer, path=str(root), url="https://example.com/x.git"), "validation_failed")
        await refused(register(servicer, full_name="not-a-full-name"), "validation_failed")


async def test_organization_roles_and_invisible_repositories(env) -> None:  # type: ignore[no-untyped-def]
    _db, _settings, servicer, root = env
    sample_repo(root / "proj", commits=1)
    with acting_as(ALICE):
        org_repo = await register(servicer, path=str(root / "proj"), org_id="org1")
        own_repo = await register(servicer, path=str(root / "proj"))
    assert org_repo.owner == "org:org1"
    assert own_repo.id != org_repo.id
    get = indexer_pb2.GetRepositoryRequest
    with acting_as(BOB):  # a viewer of org1
        assert (await servicer.GetRepository(get(repo=org_repo.id), None)).id == org_repo.id  # type: ignore[arg-type]
        await refused(servicer.GetRepository(get(repo=own_repo.id), None), "repo_not_found")  # type: ignore[arg-type]
        await refused(servicer.DeleteRepository(get(repo=org_repo.id), None), "forbidden")  # type: ignore[arg-type]
        start = indexer_pb2.StartIndexRequest(repo=org_repo.id)
        await refused(servicer.StartIndex(start, None), "forbidden")  # type: ignore[arg-type]
        await refused(register(servicer, path=str(root / "proj"), org_id="org1"), "forbidden")
    with acting_as(MALLORY):
        for ref in (org_repo.id, own_repo.id, "f" * 32, "nope", "owner/repo"):
            await refused(servicer.GetRepository(get(repo=ref), None), "repo_not_found")  # type: ignore[arg-type]
        await refused(servicer.DeleteRepository(get(repo=org_repo.id), None), "repo_not_found")  # type: ignore[arg-type]
        await refused(register(servicer, path=str(root / "proj"), org_id="org1"), "forbidden")
    with acting_as(None):
        await refused(register(servicer, path=str(root / "proj")), "not_authenticated")


async def test_listing_is_paginated_and_scoped(env) -> None:  # type: ignore[no-untyped-def]
    _db, _settings, servicer, root = env
    for i in range(5):
        sample_repo(root / f"p{i}", commits=1)
    with acting_as(ALICE):
        ids = {(await register(servicer, path=str(root / f"p{i}"))).id for i in range(3)}
        ids |= {(await register(servicer, path=str(root / f"p{i}"), org_id="org1")).id for i in range(3, 5)}
        seen: list[str] = []
        cursor = ""
        while True:
            request = indexer_pb2.ListRepositoriesRequest(page=common_pb2.PageRequest(limit=2, cursor=cursor))
            reply = await servicer.ListRepositories(request, None)  # type: ignore[arg-type]
            assert reply.page.total == 5
            seen += [r.id for r in reply.repositories]
            cursor = reply.page.next_cursor
            if not cursor:
                break
    assert sorted(seen) == sorted(ids)
    with acting_as(BOB):
        reply = await servicer.ListRepositories(indexer_pb2.ListRepositoriesRequest(), None)  # type: ignore[arg-type]
        assert {r.owner for r in reply.repositories} == {"org:org1"}
        assert reply.page.total == 2
    with acting_as(ALICE):
        bad = indexer_pb2.ListRepositoriesRequest(page=common_pb2.PageRequest(cursor="%%%"))
        await refused(servicer.ListRepositories(bad, None), "validation_failed")  # type: ignore[arg-type]


async def test_second_trigger_is_index_in_progress_and_job_goes_through_outbox(env) -> None:  # type: ignore[no-untyped-def]
    db, _settings, servicer, root = env
    sample_repo(root / "proj", commits=1)
    with acting_as(ALICE):
        repo = await register(servicer, path=str(root / "proj"))
        status = await servicer.StartIndex(indexer_pb2.StartIndexRequest(repo=repo.id), None)  # type: ignore[arg-type]
        assert status.state == "queued"
        error = await refused(
            servicer.StartIndex(indexer_pb2.StartIndexRequest(repo=repo.id, incremental=True), None),  # type: ignore[arg-type]
            "index_in_progress",
        )
        assert error.details["run_id"] == status.run_id
        shown = await servicer.GetIndexStatus(indexer_pb2.GetRepositoryRequest(repo=repo.id), None)  # type: ignore[arg-type]
    assert shown.state == "queued"
    async with db.session() as session:
        rows = (await session.execute(select(outbox.c.subject, outbox.c.payload))).all()
    jobs = [r for r in rows if r.subject == "jobs.index"]
    assert len(jobs) == 1
    env_ = events_pb2.EventEnvelope.FromString(jobs[0].payload)
    assert events_pb2.IndexJob.FromString(env_.payload).run_id == status.run_id


async def listing_changes(db) -> list[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    async with db.session() as session:
        rows = (await session.execute(select(outbox.c.subject, outbox.c.payload).order_by(outbox.c.created_at))).all()
    changes = [
        events_pb2.RepositoryChanged.FromString(events_pb2.EventEnvelope.FromString(r.payload).payload)
        for r in rows
        if r.subject == "events.repository.changed"
    ]
    return [(c.repository_id, c.owner, c.reason) for c in changes]


async def test_changes_a_listing_shows_stage_repository_changed(env) -> None:  # type: ignore[no-untyped-def]
    """The gateway's cached listings go with this event (docs/accounts.md, "Cached listings"): a registration
    and an index queued stage it in their transaction; finding an existing registration does not."""
    db, _settings, servicer, root = env
    sample_repo(root / "listed", commits=1)
    with acting_as(ALICE):
        repo = await register(servicer, path=str(root / "listed"))
        again = await register(servicer, path=str(root / "listed"))
        assert again.id == repo.id
        await servicer.StartIndex(indexer_pb2.StartIndexRequest(repo=repo.id), None)  # type: ignore[arg-type]
    owner = f"user:{ALICE.user_id}"
    assert await listing_changes(db) == [(repo.id, owner, "registered"), (repo.id, owner, "index_queued")]


async def test_reaper_requeues_then_fails_runs_whose_worker_vanished(env) -> None:  # type: ignore[no-untyped-def]
    db, settings, servicer, root = env
    sample_repo(root / "proj", commits=1)
    with acting_as(ALICE):
        repo = await register(servicer, path=str(root / "proj"))
        status = await servicer.StartIndex(indexer_pb2.StartIndexRequest(repo=repo.id), None)  # type: ignore[arg-type]
    reaper = Reaper(settings, db)
    for attempt in range(1, settings.max_attempts + 1):
        async with db.session() as session:  # a worker claimed it and died
            await session.execute(
                update(IndexRun)
                .where(IndexRun.id == status.run_id)
                .values(state="indexing", attempts=attempt, worker="dead:1", lease_expires_at=now_ms() - 1)
            )
        assert await reaper.reap_once() == 1
        run = await run_row(db, status.run_id)
        expected = "queued" if attempt < settings.max_attempts else "failed"
        assert run.state == expected, attempt
    assert "stopped responding" in run.error
    async with db.session() as session:
        subjects = [r[0] for r in (await session.execute(select(outbox.c.subject))).all()]
    assert subjects.count("jobs.index") == settings.max_attempts  # the first job + each requeue
    assert subjects.count("events.repository.index_failed") == 1
    with acting_as(ALICE):  # not stuck: a new index can start
        again = await servicer.StartIndex(indexer_pb2.StartIndexRequest(repo=repo.id), None)  # type: ignore[arg-type]
    assert again.state == "queued"


async def test_the_reaper_reports_the_age_of_the_oldest_unfinished_run(env) -> None:  # type: ignore[no-untyped-def]
    """``cr_job_oldest_age_seconds`` (the CodeReviewJobStuck alert): a run queued 10 minutes
    ago reads about 600 s; once none is queued or running it reads 0."""
    db, settings, servicer, root = env
    sample_repo(root / "aged", commits=1)
    with acting_as(ALICE):
        repo = await register(servicer, path=str(root / "aged"))
        status = await servicer.StartIndex(indexer_pb2.StartIndexRequest(repo=repo.id), None)  # type: ignore[arg-type]
    async with db.session() as session:
        await session.execute(update(IndexRun).where(IndexRun.id == status.run_id).values(queued_at=now_ms() - 600_000))
    reaper = Reaper(settings, db)

    def age() -> float | None:
        return REGISTRY.get_sample_value("cr_job_oldest_age_seconds", {"service": "indexer", "queue": "index"})

    await reaper.reap_once()
    assert 600 <= (age() or 0) < 660
    async with db.session() as session:
        await session.execute(update(IndexRun).where(IndexRun.id == status.run_id).values(state="failed"))
    await reaper.reap_once()
    assert age() == 0


async def test_installation_events_register_and_retire_hosted_repositories(env) -> None:  # type: ignore[no-untyped-def]
    db, _settings, servicer, _root = env
    change = events_pb2.InstallationRepositoriesChanged(installation_id=7, added=["acme/widgets", "bad name"])
    envelope = events_pb2.EventEnvelope(id="e1", payload=change.SerializeToString())
    async with db.session() as session:
        await repositories.on_installation_repositories(session, envelope)
    async with db.session() as session:
        rows = (await session.execute(select(Repository))).scalars().all()
    assert [(r.full_name, r.owner, r.installation_id, r.status) for r in rows] == [("acme/widgets", "", 7, "active")]
    with acting_as(ALICE):  # unclaimed: visible to nobody
        await refused(
            servicer.GetRepository(indexer_pb2.GetRepositoryRequest(repo="acme/widgets"), None),  # type: ignore[arg-type]
            "repo_not_found",
        )
        claimed = await register(servicer, full_name="acme/widgets", org_id="org1")
        assert claimed.id == rows[0].id
        by_name = await servicer.GetRepository(indexer_pb2.GetRepositoryRequest(repo="acme/widgets"), None)  # type: ignore[arg-type]
        assert by_name.id == claimed.id
    removed = events_pb2.InstallationRepositoriesChanged(installation_id=7, removed=["acme/widgets"])
    async with db.session() as session:
        await repositories.on_installation_repositories(
            session, events_pb2.EventEnvelope(id="e2", payload=removed.SerializeToString())
        )
    with acting_as(ALICE):
        await refused(
            servicer.StartIndex(indexer_pb2.StartIndexRequest(repo="acme/widgets"), None),  # type: ignore[arg-type]
            "conflict",
        )
    # Each change a listing shows told the gateways (the unowned registration is in nobody's).
    assert [reason for _, _, reason in await listing_changes(db)] == ["registered", "claimed", "retired"]


async def test_host_index_reports_missing_clone_credentials_clearly(env) -> None:  # type: ignore[no-untyped-def]
    _db, _settings, servicer, _root = env
    # No hostapp listens at the configured address: a clear upstream error, nothing created.
    with acting_as(ALICE):
        await refused(
            servicer.HostIndex(indexer_pb2.HostIndexRequest(full_name="acme/widgets"), None),  # type: ignore[arg-type]
            "upstream_error",
        )
        listing = await servicer.ListRepositories(indexer_pb2.ListRepositoriesRequest(), None)  # type: ignore[arg-type]
    assert listing.page.total == 0


async def test_empty_repository_can_be_registered(env) -> None:  # type: ignore[no-untyped-def]
    _db, _settings, servicer, root = env
    init_repo(root / "empty")
    with acting_as(ALICE):
        repo = await register(servicer, path=str(root / "empty"))
    assert repo.kind == "local"
