"""The outbox relay survives NATS being down and drains a long backlog without being taken
for stalled; a duplicate message is applied once."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from sqlalchemy import func, select, text

from services.billing.models import inbox, outbox
from services.contracts.v1 import events_pb2
from services.devrun.infra import EmbeddedNats
from services.kit.bus import SUBJECT_ANALYSIS_COMPLETED, Bus
from services.kit.inbox import EventConsumer
from services.kit.outbox import OutboxRelay, add_event, envelope, pending_count
from services.kit.supervision import Supervisor
from tests.conftest import scratch_dir

BATCH = 100  # the relay's batch


async def _stage(db, n: int) -> None:
    async with db.session() as session:
        for i in range(n):
            await add_event(
                session,
                outbox,
                SUBJECT_ANALYSIS_COMPLETED,
                "analysis.completed",
                events_pb2.AnalysisCompleted(audit_id=f"a{i}", files=1),
            )


async def test_event_rolled_back_with_its_transaction_never_leaves(make_db) -> None:
    db = make_db("billing")

    async def failing_change() -> None:
        async with db.session() as session:
            await add_event(session, outbox, "events.x", "x", events_pb2.AnalysisCompleted())
            raise RuntimeError("the state change failed")

    with pytest.raises(RuntimeError):
        await failing_change()
    assert await pending_count(db, outbox) == 0


async def test_relay_survives_nats_outage_and_delivers_after(make_db, stream_prefix: str) -> None:
    db = make_db("billing")
    server = EmbeddedNats(scratch_dir("cr-outage-"))
    url = server.start()
    bus = Bus(url, stream_prefix)
    await bus.connect()
    await bus.ensure_streams()
    relay = OutboxRelay(db, bus, outbox, "test")
    try:
        server.stop()
        await _stage(db, 3)
        assert await relay.relay_once() == 0  # NATS is down: nothing acknowledged, nothing lost
        assert await pending_count(db, outbox) == 3
        async with db.session() as session:
            attempts = (await session.execute(select(func.max(outbox.c.attempts)))).scalar()
        assert attempts >= 1

        server.proc = None
        server.start()  # same port and data directory
        for _ in range(100):
            if bus.connected:
                break
            await asyncio.sleep(0.1)
        await bus.ensure_streams()
        delivered = 0
        for _ in range(20):
            delivered += await relay.relay_once()
            if delivered == 3:
                break
            await asyncio.sleep(0.2)
        assert delivered == 3
        assert await pending_count(db, outbox) == 0
        info = await bus.js.stream_info(f"{stream_prefix}_EVENTS")
        assert info.state.messages == 3
    finally:
        await bus.close()
        server.stop()


async def test_duplicate_message_is_applied_once(make_db, bus: Bus) -> None:
    db = make_db("billing")
    async with db.session() as session:
        await session.execute(text("create table applied (audit_id text)"))
    env = envelope("analysis.completed", events_pb2.AnalysisCompleted(audit_id="dup"))
    # Two publishes of one event under different stream ids: JetStream's own de-duplication
    # window cannot help, so only the inbox stands between us and a double effect.
    await bus.publish(SUBJECT_ANALYSIS_COMPLETED, env.SerializeToString(), msg_id="first")
    await bus.publish(SUBJECT_ANALYSIS_COMPLETED, env.SerializeToString(), msg_id="second")

    async def handler(session, event: events_pb2.EventEnvelope) -> None:
        payload = events_pb2.AnalysisCompleted.FromString(event.payload)
        await session.execute(text("insert into applied values (:a)"), {"a": payload.audit_id})

    consumer = EventConsumer(bus, db, inbox, "billing-usage", SUBJECT_ANALYSIS_COMPLETED, service="test")
    task = asyncio.create_task(consumer.consume(handler))
    try:
        for _ in range(50):
            async with db.session() as session:
                seen = (await session.execute(select(func.count()).select_from(inbox))).scalar()
            info = await bus.js.consumer_info(f"{bus.prefix}_EVENTS", "billing-usage")
            if seen and info.num_pending == 0 and info.num_ack_pending == 0:
                break
            await asyncio.sleep(0.1)
    finally:
        consumer.stop()
        await asyncio.wait_for(task, 5)
    async with db.session() as session:
        applied = (await session.execute(text("select count(*) from applied"))).scalar()
    assert applied == 1


async def test_a_backlog_above_a_batch_past_the_stall_limit_is_progress_not_a_stall(make_db, bus: Bus) -> None:
    """The relay drains a backlog that stays above one batch for longer than its stall limit:
    every acknowledged event counts as progress, so the process stays ready throughout. The
    supervisor's clock is the test's: it moves 3 s per committed batch, 24 s against a 10 s limit."""
    db = make_db("billing")
    now = [0.0]
    fatal: list[str] = []
    sup = Supervisor("t-relay-backlog", on_fatal=fatal.append, clock=lambda: now[0], check_interval=3600.0)
    relay = OutboxRelay(db, bus, outbox, "test")
    sup.add("outbox-relay", relay.run, stop=relay.stop, stall_after=10.0)
    await _stage(db, 3 * BATCH)
    task = asyncio.create_task(sup.run())
    try:
        for _ in range(8):
            now[0] += 3.0
            before = await pending_count(db, outbox)
            deadline = asyncio.get_running_loop().time() + 30.0
            while await pending_count(db, outbox) >= before:  # a batch committed since the clock moved
                assert asyncio.get_running_loop().time() < deadline, "the relay committed nothing"
                await asyncio.sleep(0.02)
            await _stage(db, BATCH)
            assert await pending_count(db, outbox) > BATCH
            sup.check()
            assert sup.healthy(), sup.problems()
        assert now[0] > 2 * 10.0
        assert sup.loops["outbox-relay"].restarts == 0
        assert not fatal
    finally:
        await sup.stop()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
