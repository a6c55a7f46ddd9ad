"""The NATS JetStream client: connection, the stream catalogue declared in code, publishing.

Streams and subjects carry a configurable prefix so test sessions and parallel
deployments never share streams.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import nats
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.errors import SlowConsumerError
from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, RetentionPolicy, StreamConfig
from nats.js.errors import NotFoundError

from services.contracts.v1 import events_pb2

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StreamSpec:
    name: str  # suffix after the prefix
    subjects: tuple[str, ...]  # relative to the subject root
    work_queue: bool
    max_msgs: int
    max_age_seconds: float


# The catalogue (docs/architecture.md lists the subjects and who publishes/consumes them).
EVENTS = StreamSpec("EVENTS", ("events.>",), work_queue=False, max_msgs=1_000_000, max_age_seconds=7 * 86400)
INDEX_JOBS = StreamSpec("INDEX_JOBS", ("jobs.index",), work_queue=True, max_msgs=100_000, max_age_seconds=86400)
PR_JOBS = StreamSpec("PR_JOBS", ("jobs.analyze_pr",), work_queue=True, max_msgs=100_000, max_age_seconds=86400)
STREAMS = (EVENTS, INDEX_JOBS, PR_JOBS)

SUBJECT_REPOSITORY_INDEXED = "events.repository.indexed"
SUBJECT_INDEX_FAILED = "events.repository.index_failed"
SUBJECT_REPOSITORY_DELETED = "events.repository.deleted"
SUBJECT_REPOSITORY_CHANGED = "events.repository.changed"
SUBJECT_INSTALLATION_REPOS = "events.installation.repositories_changed"
SUBJECT_ANALYSIS_COMPLETED = "events.analysis.completed"
SUBJECT_SUBSCRIPTION_CHANGED = "events.subscription.changed"
SUBJECT_PRINCIPALS_CHANGED = "events.identity.principals_changed"
SUBJECT_INDEX_JOB = "jobs.index"
SUBJECT_PR_JOB = "jobs.analyze_pr"


class Bus:
    def __init__(self, url: str, prefix: str, replicas: int = 1) -> None:
        self.url = url
        self.prefix = prefix
        self.replicas = replicas
        self.root = prefix.lower()
        self.nc: NatsClient | None = None
        self._js: JetStreamContext | None = None
        self._closing = False
        # Told "disconnected", "reconnected" or "slow_consumer" (core NATS dropped messages):
        # the moments a watcher may have missed an event.
        self.listeners: list[Callable[[str], None]] = []

    def subject(self, name: str) -> str:
        return f"{self.root}.{name}"

    def stream_name(self, spec: StreamSpec) -> str:
        return f"{self.prefix}_{spec.name}"

    @property
    def js(self) -> JetStreamContext:
        if self._js is None:
            raise RuntimeError("bus not connected")
        return self._js

    @property
    def connected(self) -> bool:
        return self.nc is not None and self.nc.is_connected

    async def connect(self, *, connect_timeout: float = 5.0) -> None:
        # Reconnect forever: the default budget gives up after about two minutes of outage.
        self.nc = await nats.connect(
            self.url,
            connect_timeout=connect_timeout,
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.5,
            allow_reconnect=True,
            error_cb=self._on_error,
            disconnected_cb=self._on_disconnect,
            reconnected_cb=self._on_reconnect,
        )
        self._js = self.nc.jetstream(timeout=5.0)

    async def ensure_streams(self) -> None:
        """Declare the catalogue idempotently (add, or update to the declared config)."""
        for spec in STREAMS:
            config = StreamConfig(
                name=self.stream_name(spec),
                subjects=[self.subject(s) for s in spec.subjects],
                retention=RetentionPolicy.WORK_QUEUE if spec.work_queue else RetentionPolicy.LIMITS,
                # A full work queue must refuse new jobs, not silently drop unconsumed ones.
                discard=DiscardPolicy.NEW if spec.work_queue else DiscardPolicy.OLD,
                max_msgs=spec.max_msgs,
                max_age=spec.max_age_seconds,
                duplicate_window=120.0,
                num_replicas=self.replicas,
            )
            try:
                await self.js.stream_info(self.stream_name(spec))
                await self.js.update_stream(config)
            except NotFoundError:
                await self.js.add_stream(config)

    async def publish(self, subject: str, data: bytes, msg_id: str) -> None:
        await self.js.publish(self.subject(subject), data, headers={"Nats-Msg-Id": msg_id}, timeout=5.0)

    async def watch(self, subject: str, callback: Callable[[events_pb2.EventEnvelope], Awaitable[None]]) -> None:
        """Every process gets every event on ``subject`` from now on, at most once (core NATS).

        For per-process caches that an event makes stale: a durable consumer hands each event
        to one replica only. Missed events (a disconnect, a slow consumer) are told to
        ``listeners``, or left to the caches' TTL.
        """
        if self.nc is None:
            raise RuntimeError("bus not connected")

        async def deliver(msg: Msg) -> None:
            try:
                env = events_pb2.EventEnvelope.FromString(msg.data)
            except Exception:
                log.warning("undecodable event on %s", msg.subject)
                return
            try:
                await callback(env)
            except Exception:
                log.exception("watcher of %s failed", subject)

        await self.nc.subscribe(self.subject(subject), cb=deliver)

    async def delete_streams(self) -> None:
        for spec in STREAMS:
            try:
                await self.js.delete_stream(self.stream_name(spec))
            except NotFoundError:
                pass

    async def close(self) -> None:
        self._closing = True
        if self.nc is not None and not self.nc.is_closed:
            try:
                await asyncio.wait_for(self.nc.drain(), timeout=5)
            except Exception:  # draining a dead connection: closing is all that is left
                await self.nc.close()

    def _tell(self, what: str) -> None:
        for listener in self.listeners:
            listener(what)

    async def _on_error(self, exc: Exception) -> None:
        log.warning("nats error: %s", exc)
        if isinstance(exc, SlowConsumerError):
            self._tell("slow_consumer")

    async def _on_disconnect(self) -> None:
        # A disconnect we asked for (a clean stop) is no news.
        if not self._closing:
            log.warning("nats disconnected")
        self._tell("disconnected")

    async def _on_reconnect(self) -> None:
        log.info("nats reconnected")
        self._tell("reconnected")
