"""Record, acknowledge, apply after: deliveries answered together share a statement and each
caller learns whether its own was new; a delivery recorded but never applied (the process died
after answering) is applied by the next processor, once, even with two of them at work."""

from __future__ import annotations

import asyncio
import itertools
import time

import orjson
from prometheus_client import REGISTRY
from sqlalchemy import text

from services.contracts.v1 import hostapp_pb2, hostapp_pb2_grpc
from services.gateway.deliveries import DeliveryBatches
from services.hostapp import webhooks
from services.hostapp.deliveries import DeliveryProcessor
from services.hostapp.github import GitHubApp
from services.hostapp.intake import Intake
from services.hostapp.models import WebhookDelivery
from services.hostapp.servicer import HostAppServicer
from services.hostapp.settings import HostAppSettings
from services.kit.db import Database
from services.kit.grpc_client import RemoteError, make_channel
from services.kit.grpc_server import GrpcServer
from tests.hostapp.conftest import all_jobs, deliveries, payload, raw, records


def opened(number: int) -> bytes:
    body = payload("pull_request.opened")
    body["number"] = body["pull_request"]["number"] = number
    body["pull_request"]["head"]["sha"] = f"{number:040x}"
    return orjson.dumps(body)


async def test_concurrent_deliveries_are_each_answered_for_their_own_record(db: Database) -> None:
    woken: list[int] = []
    intake = Intake(db, wake=lambda: woken.append(1), max_batch=7)
    ids = [f"d-{n % 40}" for n in range(60)]  # 40 ids, 20 of them sent twice, some in one statement
    receipts = await asyncio.gather(*(intake.receive(i, "pull_request", opened(int(i[2:]) + 1)) for i in ids))
    new = [i for i, r in zip(ids, receipts, strict=True) if not r.duplicate]
    assert sorted(new) == sorted(set(ids))  # each id answered "new" exactly once
    stored = await deliveries(db)
    assert set(stored) == set(ids)
    assert all(d.processed_at is None and d.payload for d in stored.values())  # recorded, not applied
    assert await all_jobs(db) == []  # nothing applied in the request path
    assert len(woken) == 40


async def test_the_statements_run_on_a_held_connection_and_one_the_server_dropped_is_replaced(db: Database) -> None:
    """No pool checkout (and its pre-ping round trip) per statement: one connection records
    delivery after delivery. When the server drops it (a restart), the next delivery is still
    recorded, on a new connection, not answered 503; a redelivery is still a duplicate."""
    intake = Intake(db)
    assert not (await intake.receive("held-1", "pull_request", opened(1))).duplicate
    first = (await db.held("intake")).info.backend_pid
    assert not (await intake.receive("held-2", "pull_request", opened(2))).duplicate
    assert (await db.held("intake")).info.backend_pid == first
    async with db.autocommit() as conn:  # as a server restart would, for this connection alone
        assert (await conn.execute(text("SELECT pg_terminate_backend(:pid, 5000)"), {"pid": first})).scalar()
    assert not (await intake.receive("held-3", "pull_request", opened(3))).duplicate
    assert (await intake.receive("held-1", "pull_request", opened(1))).duplicate
    assert (await db.held("intake")).info.backend_pid != first
    assert set(await deliveries(db)) == {"held-1", "held-2", "held-3"}


async def test_disposing_the_database_closes_its_held_connections(db: Database) -> None:
    own = Database(db.url)
    conn = await own.held("intake")
    await own.dispose()
    assert conn.closed


async def test_a_delivery_recorded_before_a_crash_is_applied_after_it(db: Database) -> None:
    await Intake(db).receive("before-crash", "installation", raw("installation.created"))
    # The process that answered died here. A new one's processor finds the delivery:
    outcomes = await DeliveryProcessor(db).process_pending()
    assert outcomes["before-crash"].handled
    assert await records(db) == {(957387, "Codertocat/Hello-World"): "active"}
    recorded = (await deliveries(db))["before-crash"]
    assert recorded.processed_at is not None
    assert recorded.payload is None
    assert recorded.outcome.startswith("installation created")
    assert await DeliveryProcessor(db).process_pending() == {}  # applied once
    # Its redelivery is recorded as a duplicate and applied no more.
    assert (await Intake(db).receive("before-crash", "installation", raw("installation.created"))).duplicate


async def test_two_processors_apply_each_delivery_once(db: Database) -> None:
    intake = Intake(db)
    for n in range(1, 31):
        await intake.receive(f"pr-{n}", "pull_request", opened(n))
    first, second = DeliveryProcessor(db, batch=4), DeliveryProcessor(db, batch=4)

    async def drain(processor: DeliveryProcessor) -> list[str]:
        applied: list[str] = []
        while outcomes := await processor.process_pending():
            applied += outcomes
        return applied

    a, b = await asyncio.gather(drain(first), drain(second))
    assert sorted(a + b) == sorted(f"pr-{n}" for n in range(1, 31))
    assert not set(a) & set(b)
    jobs = await all_jobs(db)
    assert sorted(j.pr_number for j in jobs) == list(range(1, 31))
    stored = await deliveries(db)
    assert {d.job_id for d in stored.values()} == {j.id for j in jobs}


async def test_processed_in_arrival_order(db: Database) -> None:
    """A suspension recorded after the installation's creation leaves it suspended (the ids
    sort the other way round)."""
    suspend = payload("installation.suspend")
    suspend["installation"] = payload("installation.created")["installation"]
    intake = Intake(db)
    await intake.receive("z-created", "installation", raw("installation.created"))
    await intake.receive("a-suspend", "installation", orjson.dumps(suspend))
    outcomes = await DeliveryProcessor(db).process_pending()
    assert list(outcomes) == ["z-created", "a-suspend"]
    assert await records(db) == {(957387, "Codertocat/Hello-World"): "suspended"}


async def test_a_backlog_drains_while_deliveries_keep_arriving(db: Database) -> None:
    """Busy intake: the processor pauses between batches, and still takes one each pause."""
    intake = Intake(db)
    for n in range(1, 251):
        await intake.receive(f"busy-{n}", "pull_request", opened(n))
    processor = DeliveryProcessor(db, batch=100, busy=lambda: True, busy_pause=0.05)
    task = asyncio.create_task(processor.run())
    try:
        deadline = asyncio.get_running_loop().time() + 30
        while len(await all_jobs(db)) < 250:
            assert asyncio.get_running_loop().time() < deadline, "the backlog did not drain"
            await asyncio.sleep(0.1)
    finally:
        processor.stop()
        await asyncio.wait_for(task, 10)
    assert all(d.processed_at for d in (await deliveries(db)).values())


async def test_while_deliveries_arrive_the_processor_takes_a_bounded_share_then_drains(db: Database) -> None:
    """Busy intake: after each batch the processor pauses three times as long as the batch took
    (busy_share 0.25), so recording keeps most of the process; once the intake is idle the
    pause ends and the backlog drains without waiting it out."""
    intake = Intake(db)
    for n in range(1, 41):
        await intake.receive(f"share-{n}", "pull_request", opened(n))
    spans: list[tuple[float, float]] = []
    busy = True

    class Timed(DeliveryProcessor):  # the real processor, its batches timed
        async def process_pending(self, batch: int | None = None) -> dict[str, webhooks.Outcome]:
            start = time.monotonic()
            try:
                return await super().process_pending(batch)
            finally:
                spans.append((start, time.monotonic()))

    processor = Timed(db, batch=10, busy=lambda: busy, busy_pause=0.01, busy_share=0.25)
    task = asyncio.create_task(processor.run())
    try:
        deadline = time.monotonic() + 60
        while len(spans) < 3:
            assert time.monotonic() < deadline, "the processor made no progress while busy"
            await asyncio.sleep(0.01)
        for (start, end), (following, _) in itertools.pairwise(spans[:3]):
            assert following - end >= 0.9 * 3 * (end - start)  # paused 3x the batch's time
        busy = False
        while len(await all_jobs(db)) < 40:
            assert time.monotonic() < deadline, "the backlog did not drain once the intake was idle"
            await asyncio.sleep(0.05)
    finally:
        processor.stop()
        await asyncio.wait_for(task, 10)


async def test_a_delivery_whose_effect_fails_is_stored_failed_and_holds_back_nothing(db: Database) -> None:
    """A recorded payload the rules cannot apply (here a repository name that is an object,
    which the database refuses; the intake's checks refuse it, so it is written as a row
    recorded before them would be) is rolled back alone and stored ``failed: …``; the
    deliveries before and after it in the same batch are applied."""
    broken = payload("installation.created")
    broken["installation"]["id"] = 4242
    broken["repositories"] = [{"id": 1, "full_name": {"not": "a name"}}]
    intake = Intake(db)
    await intake.receive("before", "pull_request", opened(1))
    async with db.session() as session:
        session.add(WebhookDelivery(delivery_id="broken", event="installation", payload=orjson.dumps(broken)))
    await intake.receive("after", "installation", raw("installation.created"))
    outcomes = await DeliveryProcessor(db).process_pending()
    assert list(outcomes) == ["before", "broken", "after"]
    stored = await deliveries(db)
    assert stored["broken"].outcome.startswith("failed: ")
    assert stored["broken"].processed_at is not None
    assert stored["before"].job_id
    assert stored["after"].handled
    assert await records(db) == {(957387, "Codertocat/Hello-World"): "active"}  # nothing of 4242


async def _serve(db: Database) -> tuple[GrpcServer, hostapp_pb2_grpc.HostAppServiceAsyncStub]:
    server = GrpcServer("hostapp-intake-test", "127.0.0.1:0")
    github = GitHubApp(HostAppSettings(app_id="", private_key=""))
    server.add(
        hostapp_pb2_grpc.add_HostAppServiceServicer_to_server,
        HostAppServicer(db, github, Intake(db)),
        "services.contracts.v1.HostAppService",
    )
    port = await server.start()
    channel = make_channel(f"127.0.0.1:{port}", hostapp_pb2.DESCRIPTOR.services_by_name["HostAppService"])
    return server, hostapp_pb2_grpc.HostAppServiceStub(channel)


def _calls(method: str) -> float:
    return (
        REGISTRY.get_sample_value(
            "cr_rpc_requests_total", {"service": "hostapp-intake-test", "method": method, "code": "OK"}
        )
        or 0.0
    )


async def test_deliveries_reaching_a_gateway_worker_together_share_calls_and_each_gets_its_answer(db: Database) -> None:
    """The gateway's DeliveryBatches against the real servicer over gRPC: 60 deliveries at once
    go in a few HandleWebhooks calls; each caller is told about its own delivery: recorded,
    duplicate (an id sent twice), or its own 400 (an impossible value, which is still recorded;
    a body that is not JSON, which is not); nothing is applied in the request path."""
    server, stub = await _serve(db)
    try:
        batches = DeliveryBatches(stub)
        bad_sha = payload("pull_request.opened")
        bad_sha["pull_request"]["head"]["sha"] = "z" * 40
        sends: list[tuple[str, bytes]] = [(f"d-{n % 50}", opened(n % 50 + 1)) for n in range(58)]
        sends += [("bad-sha", orjson.dumps(bad_sha)), ("not-json", b"{not json")]
        before = _calls("HandleWebhooks")
        answers = await asyncio.gather(
            *(
                batches.forward(hostapp_pb2.HostWebhookRequest(delivery_id=d, event="pull_request", payload=body))
                for d, body in sends
            ),
            return_exceptions=True,
        )
        calls = _calls("HandleWebhooks") - before
        assert 1 <= calls < 20, calls  # shared calls, not one per delivery
        by_id: dict[str, list[object]] = {}
        for (delivery, _), answer in zip(sends, answers, strict=True):
            by_id.setdefault(delivery, []).append(answer)
        for n in range(50):
            got = by_id[f"d-{n}"]
            assert all(isinstance(a, hostapp_pb2.HostWebhookResponse) for a in got)
            assert sorted(a.duplicate for a in got) == [False] + [True] * (len(got) - 1)  # type: ignore[attr-defined]
        (refused,) = by_id["bad-sha"]
        assert isinstance(refused, RemoteError)
        assert (refused.code, refused.http_status) == ("bad_request", 400)
        assert refused.details == {"delivery_id": "bad-sha"}
        assert "sha" in refused.message
        (not_json,) = by_id["not-json"]
        assert isinstance(not_json, RemoteError)
        assert (not_json.code, not_json.message) == ("bad_request", "payload is not JSON")
        stored = await deliveries(db)
        assert set(stored) == {f"d-{n}" for n in range(50)} | {"bad-sha"}
        assert stored["bad-sha"].processed_at is not None
        assert stored["bad-sha"].outcome.startswith("refused: ")
        assert await all_jobs(db) == []  # recorded, not applied
    finally:
        await server.server.stop(0)


async def test_a_shared_call_while_the_database_is_down_is_every_deliverys_503() -> None:
    down = Database("postgresql+psycopg://postgres@127.0.0.1:9/nowhere")
    server, stub = await _serve(down)
    try:
        batches = DeliveryBatches(stub)
        answers = await asyncio.gather(
            *(
                batches.forward(hostapp_pb2.HostWebhookRequest(delivery_id=f"x{n}", event="ping", payload=b"{}"))
                for n in range(5)
            ),
            return_exceptions=True,
        )
        assert [(a.code, a.http_status) for a in answers if isinstance(a, RemoteError)] == [
            ("service_unavailable", 503)
        ] * 5
    finally:
        await server.server.stop(0)
        await down.dispose()
