"""Learning on ``repository.indexed`` events from real NATS, stored per repository and commit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial

import pytest
from sqlalchemy import select

from services.analyzer import cache_refresh, model_store, preferences, queries, repo_lookup
from services.analyzer.deps import Deps
from services.analyzer.engine import decode_model, encode_model
from services.analyzer.models import ConventionModelRow, Repository, inbox
from services.contracts.v1 import analyzer_pb2, events_pb2
from services.kit.bus import SUBJECT_REPOSITORY_DELETED, SUBJECT_REPOSITORY_INDEXED, Bus
from services.kit.errors import ServiceError
from services.kit.grpc_client import call
from services.kit.inbox import EventConsumer
from services.kit.outbox import envelope
from tests.analyzer import service_corpus
from tests.analyzer.service_corpus import PLANTED, PLANTED_PATH
from tests.analyzer.service_support import ALICE, BOB, Harness, harness_fixture  # noqa: F401


@pytest.fixture
async def consumers(harness: Harness, bus: Bus) -> AsyncIterator[None]:
    tasks = []
    stops = []
    for durable, subject, handler in (
        ("t-learn", SUBJECT_REPOSITORY_INDEXED, model_store.on_indexed),
        ("t-deleted", SUBJECT_REPOSITORY_DELETED, model_store.on_deleted),
    ):
        consumer = EventConsumer(bus, harness.deps.db, inbox, durable, subject, service="analyzer", batch=1)
        tasks.append(asyncio.create_task(consumer.consume(partial(handler, harness.deps))))
        stops.append(consumer.stop)
    yield
    for stop in stops:
        stop()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def publish_indexed(bus: Bus, head: str, event_id: str | None = None) -> str:
    msg = events_pb2.RepositoryIndexed(repository_id="r-alice", head_sha=head, run_id="run1", owner="user:u-alice")
    env = envelope("repository.indexed", msg, event_id)
    await bus.publish(SUBJECT_REPOSITORY_INDEXED, env.SerializeToString(), msg_id=env.id)
    return env.id


async def wait_for(predicate, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not await predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.05)


def learned_at(harness: Harness, head: str) -> Callable[[], Awaitable[bool]]:
    async def learned() -> bool:
        # The replica serves the new model before its transaction commits: wait for the row too.
        entry = harness.deps.cache.get("r-alice")
        return entry is not None and entry.commit == head and any(m.commit == head for m in await models(harness))

    return learned


async def models(h: Harness) -> list[ConventionModelRow]:
    async with h.deps.db.session() as session:
        return list((await session.execute(select(ConventionModelRow))).scalars())


async def test_indexed_event_learns_and_stores_the_model_per_commit(harness: Harness, bus: Bus, consumers) -> None:
    head = harness.indexer.repos["r-alice"].head
    streamed_files = len(harness.indexer.repos["r-alice"].files)

    async def learned() -> bool:
        return await learned_at(harness, head)()

    await publish_indexed(bus, head)
    await wait_for(learned)
    [row] = await models(harness)
    assert row.repository_id == "r-alice"
    assert row.commit == head
    model = decode_model(row.model)
    assert any(c.rule == "naming.case.function" and c.level == "strict" for c in model.conventions)
    assert row.summary["files"] == len(harness.files)
    assert row.summary["config"]["present"] is True  # the corpus raises a held rule (service_corpus.CONFIG)
    streamed = harness.indexer.calls["StreamFacts"]
    request = analyzer_pb2.AnalyzeFileRequest(
        repo="r-alice", path=PLANTED_PATH, content=PLANTED.encode(), has_content=True
    )
    result = await call(harness.stub.AnalyzeFile, request, principal=ALICE)
    assert len(result.findings) == 3
    assert harness.indexer.calls["StreamFacts"] == streamed  # served from the learned model

    # A new commit with a .codereview.yml that turns a family off: relearned, the old model kept.
    repo = harness.indexer.repos["r-alice"]
    repo.head = "c0ffee0000000000000000000000000000000002"
    repo.files[".codereview.yml"] = service_corpus.CONFIG.encode() + b"disable:\n  - idioms\n"
    head = repo.head
    await publish_indexed(bus, head)
    await wait_for(learned)
    assert {r.commit for r in await models(harness)} == {"c0ffee0000000000000000000000000000000001", head}
    # The first run decoded every file's facts; this one only the new file's (snapshot_facts.py).
    first_run, second_run = sorted((r.created_at, r.summary["facts_delta"]) for r in await models(harness))
    assert first_run[1] == {"decoded": streamed_files, "kept": 0, "removed": 0}
    assert second_run[1] == {"decoded": 1, "kept": streamed_files - 1, "removed": 0}  # .codereview.yml changed
    # The new model's lookup tables were built by the learning run, before any request used it.
    served = harness.deps.cache.get("r-alice")
    assert served is not None
    assert served.model is not None
    assert "_index" in served.model.__dict__
    assert served.model.__dict__["_index"].extra
    result = await call(harness.stub.AnalyzeFile, request, principal=ALICE)
    assert {f.rule for f in result.findings} == {"naming.case.function", "documentation.docstring.function"}
    assert result.commit == head


async def test_a_relearn_by_delta_stores_the_model_a_replica_without_state_learns(
    harness: Harness, bus: Bus, consumers
) -> None:
    """The learning run observes only the files that changed (learn_memo.py) and stores the same
    model, byte for byte, as a replica that decodes and observes every file."""
    repo = harness.indexer.repos["r-alice"]
    await publish_indexed(bus, repo.head)
    await wait_for(learned_at(harness, repo.head))
    [first] = await models(harness)
    learned = first.summary["learn_delta"]
    assert learned["observed"] > 0
    assert (learned["reused"], learned["dropped"]) == (0, 0)

    repo.head = "c0ffee0000000000000000000000000000000002"
    changed = next(p for p in sorted(repo.files) if p.endswith(".py"))
    repo.files[changed] += b"\n\ndef loadItems(value):\n    return value\n"
    await publish_indexed(bus, repo.head)
    await wait_for(learned_at(harness, repo.head))
    [row] = [r for r in await models(harness) if r.commit == repo.head]
    assert row.summary["learn_delta"] == {"observed": 1, "reused": learned["observed"] - 1, "dropped": 0}

    replica_b = Deps.build(harness.deps.db, harness.deps.settings)  # no facts, no memo
    try:
        async with replica_b.db.session() as session:
            entry = await model_store.learn_and_store(
                replica_b, session, "r-alice", repo.head, owner="user:u-alice", full_name=""
            )
        assert entry.model is not None
        assert entry.summary["learn_delta"]["observed"] == learned["observed"]
        assert encode_model(entry.model) == row.model
    finally:
        await replica_b.indexer.close()


async def test_tool_configuration_is_fetched_and_shown_as_declared(harness: Harness, bus: Bus, consumers) -> None:
    repo = harness.indexer.repos["r-alice"]
    repo.files["pyproject.toml"] = b'[project]\nname = "app"\n\n[tool.black]\nline-length = 100\n'
    repo.files["web/eslint.config.js"] = b"export default [];\n"
    await publish_indexed(bus, repo.head)
    await wait_for(learned_at(harness, repo.head))
    [row] = await models(harness)
    declared = row.summary["config"]["declared"]
    assert declared["files"] == ["pyproject.toml"]
    assert declared["notes"] == [
        "web/eslint.config.js: not read (a JavaScript module; only a neostandard call is recognized)"
    ]
    context = await call(
        harness.stub.GetReviewContext,
        analyzer_pb2.ReviewContextRequest(repo="r-alice", path="app/billing/new.py"),
        principal=ALICE,
    )
    by_rule = {c.rule: c for c in context.conventions}
    length = by_rule["formatting.line_length"]
    assert (length.choice, length.level, length.source) == ("100", "strict", "declared")
    assert length.declared.file == "pyproject.toml"
    assert length.declared.setting == "[tool.black] line-length = 100"
    assert length.declared.learned == "79"
    assert length.declared.agreement == "overrides"  # the corpus keeps 79
    assert by_rule["formatting.quotes"].declared.agreement == "agrees"
    assert by_rule["naming.case.function"].source == "learned"
    assert not by_rule["naming.case.function"].HasField("declared")
    line = "X = " + "1 + " * 22 + "1"  # 93 characters: over what the code keeps, within what black allows
    text = PLANTED + line + "\n" + "Y = " + "1 + " * 25 + "1\n"
    request = analyzer_pb2.AnalyzeFileRequest(
        repo="r-alice", path=PLANTED_PATH, content=text.encode(), has_content=True
    )
    result = await call(harness.stub.AnalyzeFile, request, principal=ALICE)
    long_lines = [f for f in result.findings if f.rule == "formatting.line_length"]
    assert [f.start_line for f in long_lines] == [text.count("\n")]
    assert "declared in pyproject.toml: [tool.black] line-length = 100" in long_lines[0].message


async def test_redelivered_event_is_applied_once(harness: Harness, bus: Bus, consumers) -> None:
    head = harness.indexer.repos["r-alice"].head
    event_id = await publish_indexed(bus, head)

    async def one_model() -> bool:
        return len(await models(harness)) == 1

    await wait_for(one_model)
    await bus.js.publish(  # same envelope id past the server's de-duplication: the inbox catches it
        bus.subject(SUBJECT_REPOSITORY_INDEXED),
        envelope(
            "repository.indexed",
            events_pb2.RepositoryIndexed(repository_id="r-alice", head_sha=head),
            event_id,
        ).SerializeToString(),
    )
    await asyncio.sleep(0.5)
    assert harness.indexer.calls["StreamFacts"] == 1


async def test_deleted_repository_is_forgotten(harness: Harness, bus: Bus, consumers) -> None:
    head = harness.indexer.repos["r-alice"].head
    await publish_indexed(bus, head)

    async def learned() -> bool:
        return harness.deps.cache.get("r-alice") is not None

    await wait_for(learned)
    env = envelope("repository.deleted", events_pb2.RepositoryDeleted(repository_id="r-alice"))
    await bus.publish(SUBJECT_REPOSITORY_DELETED, env.SerializeToString(), msg_id=env.id)

    async def gone() -> bool:
        async with harness.deps.db.session() as session:
            row = await session.get(Repository, "r-alice")
        return row is None and harness.deps.cache.get("r-alice") is None

    await wait_for(gone)
    assert await models(harness) == []
    del harness.indexer.repos["r-alice"]
    request = analyzer_pb2.AnalyzeFileRequest(repo="r-alice", path="a.py", content=b"x = 1\n", has_content=True)
    with pytest.raises(ServiceError) as err:
        await call(harness.stub.AnalyzeFile, request, principal=ALICE)
    assert err.value.code == "repo_not_found"


async def test_internal_pull_request_by_full_name_waits_for_the_learning_run(
    harness: Harness, bus: Bus, consumers
) -> None:
    repo = harness.indexer.repos["r-alice"]
    repo.full_name = "acme/shop"
    request = analyzer_pb2.AnalyzePullRequestRequest(
        repo="acme/shop",
        files=[analyzer_pb2.FilePatch(path=PLANTED_PATH, status="added", content=PLANTED.encode())],
    )
    with pytest.raises(ServiceError) as err:  # the host-app worker, before any index reached us
        await call(harness.stub.AnalyzePullRequest, request)
    assert err.value.code == "repo_not_indexed"
    msg = events_pb2.RepositoryIndexed(
        repository_id="r-alice", head_sha=repo.head, owner="user:u-alice", full_name="acme/shop"
    )
    env = envelope("repository.indexed", msg)
    await bus.publish(SUBJECT_REPOSITORY_INDEXED, env.SerializeToString(), msg_id=env.id)

    async def known() -> bool:
        async with harness.deps.db.session() as session:
            return await session.get(Repository, "r-alice") is not None

    await wait_for(known)
    result = await call(harness.stub.AnalyzePullRequest, request)  # during or after the run
    assert {f.rule for f in result.findings} >= {"naming.case.function", "idioms.print"}
    assert harness.indexer.calls["StreamFacts"] == 1  # learned once, by the consumer or for the request


async def test_models_of_an_older_engine_are_relearned_while_the_old_one_serves(harness: Harness) -> None:
    from sqlalchemy import update

    from services.analyzer import upgrade
    from services.analyzer.engine.conventions import MODEL_SCHEMA_VERSION

    request = analyzer_pb2.AnalyzeFileRequest(
        repo="r-alice", path=PLANTED_PATH, content=PLANTED.encode(), has_content=True
    )
    await call(harness.stub.AnalyzeFile, request, principal=ALICE)  # learned on demand
    async with harness.deps.db.session() as session:
        await session.execute(update(ConventionModelRow).values(schema=MODEL_SCHEMA_VERSION - 1))
    streamed = harness.indexer.calls["StreamFacts"]
    result = await call(harness.stub.AnalyzeFile, request, principal=ALICE)
    assert len(result.findings) == 3  # the old model still serves

    assert await upgrade.relearn_outdated(harness.deps) == (1, 0)

    [row] = await models(harness)
    assert row.schema == MODEL_SCHEMA_VERSION
    assert harness.indexer.calls["StreamFacts"] == streamed + 1
    assert await upgrade.relearn_outdated(harness.deps) == (0, 0)  # nothing left


async def test_a_repository_that_fails_to_relearn_is_left_for_its_next_index(harness: Harness) -> None:
    from sqlalchemy import update

    from services.analyzer import upgrade
    from services.analyzer.engine.conventions import MODEL_SCHEMA_VERSION

    request = analyzer_pb2.AnalyzeFileRequest(repo="r-alice", path="a.py", content=b"x = 1\n", has_content=True)
    await call(harness.stub.AnalyzeFile, request, principal=ALICE)
    async with harness.deps.db.session() as session:
        await session.execute(update(ConventionModelRow).values(schema=MODEL_SCHEMA_VERSION - 1))
    harness.indexer.repos["r-alice"].indexed = False  # the indexer cannot stream its facts now

    assert await upgrade.relearn_outdated(harness.deps) == (0, 1)
    [row] = await models(harness)
    assert row.schema == MODEL_SCHEMA_VERSION - 1
    result = await call(harness.stub.AnalyzeFile, request, principal=ALICE)
    assert result.commit  # still served by the old model


async def test_model_status_names_the_served_commit_and_never_learns(harness: Harness, bus: Bus, consumers) -> None:
    head = harness.indexer.repos["r-alice"].head
    status = await call(harness.stub.GetModelStatus, analyzer_pb2.RepoRequest(repo="r-alice"), principal=ALICE)
    assert (status.repository_id, status.commit, status.learned_at) == ("r-alice", "", 0)
    assert harness.indexer.calls["StreamFacts"] == 0  # asking did not learn

    await publish_indexed(bus, head)
    await wait_for(learned_at(harness, head))
    status = await call(harness.stub.GetModelStatus, analyzer_pb2.RepoRequest(repo="r-alice"), principal=ALICE)
    assert (status.commit, status.head_sha) == (head, head)
    assert status.learned_at > 0

    with pytest.raises(ServiceError) as denied:
        await call(harness.stub.GetModelStatus, analyzer_pb2.RepoRequest(repo="r-alice"), principal=BOB)
    assert denied.value.code == "repo_not_found"


async def test_another_replica_loads_and_warms_a_relearned_model_before_a_request(
    harness: Harness, bus: Bus, consumers
) -> None:
    """Replica A learns each index; replica B (same database and indexer) picks the new model up
    in its background pass (cache_refresh), tables built, so no request of B reloads it."""
    replica_b = Deps.build(harness.deps.db, harness.deps.settings)
    repo = harness.indexer.repos["r-alice"]
    await publish_indexed(bus, repo.head)
    await wait_for(learned_at(harness, repo.head))
    served = await repo_lookup.resolve(replica_b, "r-alice")  # B loads commit 1 on its first request
    assert served.commit == repo.head
    assert await cache_refresh.refresh(replica_b) == 0  # nothing moved: entries marked checked

    repo.head = "c0ffee0000000000000000000000000000000002"
    repo.files["app/billing/extra.py"] = b"def addTotals(a, b):\n    return a + b\n"
    await publish_indexed(bus, repo.head)
    await wait_for(learned_at(harness, repo.head))
    assert await cache_refresh.refresh(replica_b) == 1
    entry = replica_b.cache.get("r-alice")
    assert entry is not None
    assert entry.commit == repo.head
    assert entry.model is not None
    index = entry.model.__dict__.get("_index")  # built by the pass, with the families' tables
    assert index is not None
    assert index.extra
    assert entry.summary["warm_paths"]

    # The owner's preferences held by B are re-read by the same pass (one query for all owners).
    owner = "user:u-alice"
    assert (await preferences.for_owner(replica_b, None, owner)).min_severity == "info"
    async with harness.deps.db.session() as session:  # changed through replica A
        await queries.save_preferences(session, owner, {"min_severity": "warning"}, "u-alice")
    await cache_refresh.refresh(replica_b)
    assert replica_b.preferences[owner][1].min_severity == "warning"
    await replica_b.indexer.close()
