"""Consumers that can be redelivered safely.

Events: one transaction records the message id in ``processed_messages`` and applies the
handler's effect, then the message is acked; a redelivered duplicate is acked untouched.
Jobs: long work handled by the caller, with ``in_progress()`` heartbeats and an explicit
choice between retry (``nak`` with delay) and give-up (``term``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TypeVar

from google.protobuf.message import Message
from nats.aio.msg import Msg
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from sqlalchemy import BigInteger, Column, MetaData, String, Table
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from services.contracts.v1 import events_pb2
from services.kit.bus import Bus, StreamSpec
from services.kit.context import request_id_var
from services.kit.db import Database, now_ms
from services.kit.metrics import CONSUMER_LAG, EVENTS_CONSUMED
from services.kit.supervision import beat

log = logging.getLogger(__name__)

EventHandler = Callable[[AsyncSession, events_pb2.EventEnvelope], Awaitable[None]]
JobHandler = Callable[[Msg], Awaitable[None]]


M = TypeVar("M", bound=Message)


class PermanentError(Exception):
    """The message can never succeed: terminate it instead of redelivering."""


def define_inbox(metadata: MetaData) -> Table:
    return Table(
        "processed_messages",
        metadata,
        Column("consumer", String(100), primary_key=True),
        Column("message_id", String(100), primary_key=True),
        Column("processed_at", BigInteger, nullable=False),
    )


async def mark_processed(session: AsyncSession, table: Table, consumer: str, message_id: str) -> bool:
    """Record the id; False when it was already there (a duplicate delivery)."""
    result = await session.execute(
        insert(table)
        .values(consumer=consumer, message_id=message_id, processed_at=now_ms())
        .on_conflict_do_nothing()
        .returning(table.c.message_id)
    )
    return result.first() is not None


class DurableConsumer:
    """A durable pull consumer on one subject, fetched in a loop until stopped."""

    def __init__(
        self,
        bus: Bus,
        stream: StreamSpec,
        durable: str,
        subject: str,
        *,
        service: str,
        ack_wait: float = 30.0,
        max_deliver: int = 5,
        batch: int = 10,
        retry_delay: float = 2.0,
        concurrency: int = 1,
    ) -> None:
        self.bus = bus
        self.stream = stream
        self.durable = durable
        self.subject = subject
        self.service = service
        self.ack_wait = ack_wait
        self.max_deliver = max_deliver
        self.batch = batch
        self.retry_delay = retry_delay
        # Messages handled at once. Above 1, a message is fetched only when a slot is free, so
        # a replica never holds more than it works on (the rest stay for the other replicas).
        self.concurrency = max(1, concurrency)
        self._stopping = False
        self._sub: JetStreamContext.PullSubscription | None = None

    async def _subscribe(self) -> JetStreamContext.PullSubscription:
        config = ConsumerConfig(
            name=self.durable,
            durable_name=self.durable,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=self.ack_wait,
            max_deliver=self.max_deliver,
            filter_subject=self.bus.subject(self.subject),
        )
        try:
            # Create, or update an existing durable to the declared ack wait and deliveries:
            # pull_subscribe alone keeps whatever config the durable was first created with.
            await self.bus.js.add_consumer(self.bus.stream_name(self.stream), config=config)
        except Exception as exc:
            log.warning("consumer %s: config not applied, keeping the existing one: %s", self.durable, exc)
        return await self.bus.js.pull_subscribe(
            self.bus.subject(self.subject),
            durable=self.durable,
            stream=self.bus.stream_name(self.stream),
            config=config,
        )

    async def run(self, handle: Callable[[Msg], Awaitable[object]]) -> None:
        try:
            await self._loop(handle)
        finally:
            # nats-py's drain waits its whole timeout on pull subscriptions that fetched
            # messages; unsubscribing first lets the service stop at once.
            if self._sub is not None:
                try:
                    await self._sub.unsubscribe()
                except Exception:
                    pass

    async def _loop(self, handle: Callable[[Msg], Awaitable[object]]) -> None:
        if self.concurrency > 1:
            await self._loop_concurrent(handle)
            return
        while not self._stopping:
            for msg in await self._fetch(self.batch):
                await self._handle_one(msg, handle)
                beat()  # progress is per message: a batch of slow ones is not a stall

    async def _fetch(self, n: int) -> list[Msg]:
        """Up to ``n`` messages (subscribing first when needed); none when there is nothing to do
        or NATS is away, which is retried after a second. Either way the loop is alive: it beats."""
        try:
            if self._sub is None:
                self._sub = await self._subscribe()
                log.info("consumer %s: subscribed", self.durable)  # taking work from now on
            msgs = await self._sub.fetch(n, timeout=1.0)
        except (NatsTimeoutError, TimeoutError):
            beat()  # nothing to do: alive all the same
            await self._report_lag(self._sub)
            return []
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("consumer %s fetch failed: %s", self.durable, exc)
            self._sub = None
            await asyncio.sleep(1.0)
            beat()  # NATS is down (health says so), the loop is not
            return []
        beat()
        return msgs

    async def _loop_concurrent(self, handle: Callable[[Msg], Awaitable[object]]) -> None:
        """Up to ``concurrency`` messages in flight, each in its own task; a fetch asks only for
        as many as there are free slots. Stopping or cancelling the loop ends its tasks, whose
        messages stay unacknowledged and are redelivered."""
        running: set[asyncio.Task[None]] = set()
        try:
            while not self._stopping:
                if len(running) >= self.concurrency:
                    await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                    continue
                msgs = await self._fetch(min(self.batch, self.concurrency - len(running)))
                for msg in msgs:
                    task = asyncio.create_task(self._handle_one(msg, handle))
                    running.add(task)
                    task.add_done_callback(running.discard)
                    task.add_done_callback(lambda _: beat())  # progress is per message done
            if running:  # stopping: let what runs finish, as the one-at-a-time loop does
                await asyncio.gather(*running, return_exceptions=True)
        finally:
            for task in running:
                task.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)

    async def _handle_one(self, msg: Msg, handle: Callable[[Msg], Awaitable[object]]) -> None:
        """One message, heartbeated while it runs; whatever it raises stays with it.

        A handler's failure (its database or NATS gone mid-message, a failed ack) must never
        end the loop: that is how a consumer used to stop taking work for good while the
        process looked healthy. The message stays unacknowledged, so JetStream redelivers it.
        """
        beat = asyncio.create_task(heartbeat(msg, self.ack_wait / 3))
        try:
            await handle(msg)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning(
                "consumer %s: message not handled, redelivered later: %s: %s", self.durable, type(exc).__name__, exc
            )
            await settle(msg.nak(delay=self.backoff(msg)), f"nak on {self.durable}")
        finally:
            beat.cancel()
            with suppress(asyncio.CancelledError):
                await beat

    def backoff(self, msg: Msg) -> float:
        """The redelivery delay after a failure: doubling with each delivery, up to a minute."""
        delivered = msg.metadata.num_delivered if msg.metadata and msg.metadata.num_delivered else 1
        return float(min(self.retry_delay * 2 ** (delivered - 1), 60.0))

    async def _report_lag(self, sub: JetStreamContext.PullSubscription | None) -> None:
        if sub is None:
            return
        try:
            info = await sub.consumer_info()
            CONSUMER_LAG.labels(self.service, self.durable).set((info.num_pending or 0) + (info.num_ack_pending or 0))
        except Exception:  # lag is best-effort telemetry
            pass

    def stop(self) -> None:
        self._stopping = True


class EventConsumer(DurableConsumer):
    """Applies each event once: processed id and effect commit together, then ack."""

    def __init__(self, bus: Bus, db: Database, inbox: Table, durable: str, subject: str, **kw: object) -> None:
        from services.kit.bus import EVENTS

        super().__init__(bus, EVENTS, durable, subject, **kw)  # type: ignore[arg-type]
        self.db = db
        self.inbox = inbox

    async def handle_message(self, msg: Msg, handler: EventHandler) -> str:
        try:
            env = events_pb2.EventEnvelope.FromString(msg.data)
        except Exception:
            await settle(msg.term(), f"term on {self.durable}")
            return "malformed"
        with request_context(env.request_id):
            outcome = await self._apply(msg, env, handler)
        EVENTS_CONSUMED.labels(self.service, self.durable, outcome).inc()
        return outcome

    async def _apply(self, msg: Msg, env: events_pb2.EventEnvelope, handler: EventHandler) -> str:
        try:
            async with self.db.session() as session:
                if await mark_processed(session, self.inbox, self.durable, env.id):
                    await handler(session, env)
                    outcome = "applied"
                else:
                    outcome = "duplicate"
            await msg.ack_sync()
        except PermanentError as exc:
            log.error("event %s (%s) failed permanently: %s", env.id, env.type, exc)
            await settle(msg.term(), f"term on {self.durable}")
            outcome = "terminated"
        except Exception as exc:
            log.warning("event %s (%s) failed, will retry: %s", env.id, env.type, exc)
            await settle(msg.nak(delay=self.backoff(msg)), f"nak on {self.durable}")
            outcome = "retry"
        return outcome

    async def consume(self, handler: EventHandler) -> None:
        await self.run(lambda msg: self.handle_message(msg, handler))


async def decode_job(msg: Msg, message_type: type[M]) -> tuple[events_pb2.EventEnvelope, M] | None:
    """The envelope and typed payload of a job; a malformed message can never succeed, so it is
    terminated here and ``None`` returned."""
    try:
        env = events_pb2.EventEnvelope.FromString(msg.data)
        return env, message_type.FromString(env.payload)
    except Exception:
        await msg.term()
        return None


@contextmanager
def request_context(request_id: str) -> Iterator[None]:
    """Log lines and outgoing calls of a job carry the request id of whoever queued it."""
    token = request_id_var.set(request_id)
    try:
        yield
    finally:
        request_id_var.reset(token)


async def heartbeat(msg: Msg, interval: float) -> None:
    """Tell JetStream a long job is alive so it is not redelivered while it runs: with it,
    ``ack_wait`` bounds how long a job whose worker died waits, not how long a job may take."""
    while True:
        await asyncio.sleep(interval)
        beat()  # the consumer's loop is alive while its job runs (the job has its own time limit)
        try:
            await msg.in_progress()
        except Exception as exc:  # a missed beat only risks a redelivery, which is safe
            log.debug("heartbeat failed: %s", exc)


async def settle(action: Awaitable[object], what: str) -> bool:
    """Ack/nak/term that may fail (NATS down): the message is then redelivered after its
    ack wait, which every consumer here tolerates, so the failure is logged, not raised."""
    try:
        await action
        return True
    except Exception as exc:
        log.warning("%s failed, the message will be redelivered: %s: %s", what, type(exc).__name__, exc)
        return False
