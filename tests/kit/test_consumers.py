"""A durable consumer keeps taking work whatever one message's handling raises: its ack
failing because NATS went away, its database gone. This is what used to stop the indexer
for good (issue 10, finding 1): the exception ended the consumer loop and nobody noticed."""

from __future__ import annotations

import asyncio
import contextlib
from functools import partial

from nats.aio.msg import Msg

from services.devrun.infra import EmbeddedNats
from services.kit.bus import INDEX_JOBS, SUBJECT_INDEX_JOB, Bus
from services.kit.inbox import DurableConsumer
from services.kit.supervision import Supervisor
from tests.conftest import scratch_dir


async def wait_for(condition, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        await asyncio.sleep(0.05)


async def test_consumer_survives_an_ack_lost_to_a_nats_outage(stream_prefix: str) -> None:
    server = EmbeddedNats(scratch_dir("cr-consumer-"))
    bus = Bus(server.start(), stream_prefix)
    await bus.connect()
    await bus.ensure_streams()
    consumer = DurableConsumer(bus, INDEX_JOBS, "jobs", SUBJECT_INDEX_JOB, service="test", ack_wait=3, batch=1)
    handled: list[bytes] = []

    async def handle(msg: Msg) -> None:
        if msg.data == b"first" and not handled:
            server.stop()  # the work finishes while NATS is down: its ack cannot be sent
        handled.append(msg.data)
        await msg.ack_sync()

    task = asyncio.create_task(consumer.run(handle))
    try:
        await bus.publish(SUBJECT_INDEX_JOB, b"first", msg_id="1")
        await wait_for(lambda: handled == [b"first"], 10, "the first job is handled")
        server.proc = None
        server.start()  # same port and data directory: the stream and the durable survive
        await wait_for(lambda: bus.connected, 10, "the bus reconnects")
        await bus.publish(SUBJECT_INDEX_JOB, b"second", msg_id="2")
        # The unacked first job comes back after ack_wait; the loop is still there to take both.
        await wait_for(lambda: b"second" in handled and handled.count(b"first") == 2, 20, "both jobs are handled")
        assert not task.done()
    finally:
        consumer.stop()
        await asyncio.wait_for(task, 5)
        await bus.close()
        server.stop()


async def test_consumer_survives_a_handler_that_raises(bus: Bus) -> None:
    consumer = DurableConsumer(bus, INDEX_JOBS, "jobs", SUBJECT_INDEX_JOB, service="test", retry_delay=0.1, batch=1)
    seen: list[bytes] = []

    async def handle(msg: Msg) -> None:
        seen.append(msg.data)
        if msg.data == b"bad" and seen.count(b"bad") == 1:
            raise ConnectionError("the database went away")
        await msg.ack_sync()

    task = asyncio.create_task(consumer.run(handle))
    try:
        await bus.publish(SUBJECT_INDEX_JOB, b"bad", msg_id="1")
        await bus.publish(SUBJECT_INDEX_JOB, b"good", msg_id="2")
        # The failed one is nak'd and comes back; the next one is not held up behind it.
        await wait_for(lambda: seen.count(b"bad") == 2 and b"good" in seen, 10, "both handled")
    finally:
        consumer.stop()
        await asyncio.wait_for(task, 5)


async def test_an_existing_durable_takes_the_declared_ack_wait(bus: Bus) -> None:
    # Deployments made before the heartbeats have durables with ack waits of minutes: the next
    # start must bring them down, or a crashed worker's job still waits that long.
    old = DurableConsumer(bus, INDEX_JOBS, "jobs", SUBJECT_INDEX_JOB, service="test", ack_wait=660)
    await old._subscribe()
    new = DurableConsumer(bus, INDEX_JOBS, "jobs", SUBJECT_INDEX_JOB, service="test", ack_wait=30)
    await new._subscribe()
    info = await bus.js.consumer_info(bus.stream_name(INDEX_JOBS), "jobs")
    assert info.config.ack_wait == 30


async def test_a_batch_of_slow_messages_is_progress_not_a_stall(bus: Bus) -> None:
    """Liveness counts handled messages, not fetches: ten messages of one fetch that take 4 s
    each (on the supervisor's clock, moved by the handler) are 40 s against a 10 s stall limit,
    and the consumer stays healthy."""
    now = [0.0]
    fatal: list[str] = []
    sup = Supervisor("t-consumer-batch", on_fatal=fatal.append, clock=lambda: now[0], check_interval=3600.0)
    consumer = DurableConsumer(bus, INDEX_JOBS, "jobs", SUBJECT_INDEX_JOB, service="test", batch=10)
    handled: list[bytes] = []
    health: list[bool] = []

    async def handle(msg: Msg) -> None:
        now[0] += 4.0
        sup.check()
        health.append(sup.healthy())
        handled.append(msg.data)
        await msg.ack_sync()

    for i in range(10):
        await bus.publish(SUBJECT_INDEX_JOB, str(i).encode(), msg_id=str(i))
    sup.add("consumer", partial(consumer.run, handle), stop=consumer.stop, stall_after=10.0)
    task = asyncio.create_task(sup.run())
    try:
        await wait_for(lambda: len(handled) == 10, 20, "ten messages handled")
        assert all(health), health
        assert sup.loops["consumer"].restarts == 0
    finally:
        await sup.stop()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_concurrent_consumer_holds_only_what_it_works_on(bus: Bus) -> None:
    """``concurrency=3``: three messages in flight at once, never a fourth fetched meanwhile
    (it stays in the stream for another replica); a slot freed takes the next one."""
    consumer = DurableConsumer(
        bus, INDEX_JOBS, "jobs", SUBJECT_INDEX_JOB, service="test", ack_wait=5, batch=3, concurrency=3
    )
    release = asyncio.Event()
    started: list[bytes] = []
    done: list[bytes] = []

    async def handle(msg: Msg) -> None:
        started.append(msg.data)
        if msg.data != b"5":
            await release.wait()
        await msg.ack_sync()
        done.append(msg.data)

    task = asyncio.create_task(consumer.run(handle))
    try:
        for n in range(1, 6):
            await bus.publish(SUBJECT_INDEX_JOB, str(n).encode(), msg_id=str(n))
        await wait_for(lambda: len(started) == 3, 10, "three handled at once")
        info = await consumer._sub.consumer_info()  # type: ignore[union-attr]
        assert (info.num_ack_pending, info.num_pending) == (3, 2)  # the other two wait in the stream
        release.set()
        await wait_for(lambda: sorted(done) == [b"1", b"2", b"3", b"4", b"5"], 10, "all five handled")
        assert started[:3] == [b"1", b"2", b"3"]
    finally:
        consumer.stop()
        await asyncio.wait_for(task, 5)
