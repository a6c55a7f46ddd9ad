"""The transactional outbox: events are rows written in the same transaction as the
state change, and a relay publishes them to JetStream (``Nats-Msg-Id`` = row id) until
acknowledged. A crash can delay an event, never lose or split it from its change."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid

from google.protobuf.message import Message
from sqlalchemy import (
    BigInteger,
    Column,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    func,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from services.contracts.v1 import events_pb2
from services.kit.bus import Bus
from services.kit.context import current_request_id
from services.kit.db import Database, now_ms
from services.kit.metrics import OUTBOX_LAG, OUTBOX_PENDING
from services.kit.supervision import Wakeable, beat

log = logging.getLogger(__name__)


def define_outbox(metadata: MetaData) -> Table:
    return Table(
        "outbox",
        metadata,
        Column("id", String(36), primary_key=True),
        Column("subject", String(200), nullable=False),
        Column("type", String(100), nullable=False),
        Column("payload", LargeBinary, nullable=False),
        Column("created_at", BigInteger, nullable=False, index=True),  # unix ms
        Column("published_at", BigInteger, nullable=True),
        Column("attempts", Integer, nullable=False, server_default="0"),
        Column("last_error", Text, nullable=True),
    )


def envelope(event_type: str, message: Message, event_id: str | None = None) -> events_pb2.EventEnvelope:
    return events_pb2.EventEnvelope(
        id=event_id or str(uuid.uuid4()),
        type=event_type,
        occurred_at=now_ms(),
        request_id=current_request_id(),
        payload=message.SerializeToString(),
    )


def event_row(subject: str, event_type: str, message: Message) -> dict[str, object]:
    """The outbox row of one event, for a statement that writes it with the state it belongs to."""
    env = envelope(event_type, message)
    return {
        "id": env.id,
        "subject": subject,
        "type": event_type,
        "payload": env.SerializeToString(),
        "created_at": env.occurred_at,
    }


async def add_event(session: AsyncSession, table: Table, subject: str, event_type: str, message: Message) -> str:
    """Stage an event in the caller's transaction; it leaves only if that commits."""
    row = event_row(subject, event_type, message)
    await session.execute(table.insert().values(**row))
    return str(row["id"])


class OutboxRelay(Wakeable):
    """Publishes committed outbox rows in order; several replicas may run (SKIP LOCKED).

    Its liveness is its progress: it beats once per event NATS acknowledged, so a backlog that
    stays above a batch for minutes is a busy relay, not a stalled one, and a slow NATS only
    has to acknowledge one event per stall limit."""

    def __init__(
        self, db: Database, bus: Bus, table: Table, service: str, poll_seconds: float = 0.5, batch: int = 100
    ) -> None:
        self.db = db
        self.bus = bus
        self.table = table
        self.service = service
        self.poll_seconds = poll_seconds
        self.batch = batch
        super().__init__()

    async def relay_once(self, batch: int | None = None) -> int:
        """Publish up to ``batch`` pending events; return how many were acknowledged."""
        t = self.table
        batch = batch or self.batch
        published = 0
        async with self.db.session() as session:
            rows = (
                await session.execute(
                    select(t.c.id, t.c.subject, t.c.payload, t.c.created_at)
                    .where(t.c.published_at.is_(None))
                    .order_by(t.c.created_at)
                    .limit(batch)
                    .with_for_update(skip_locked=True)
                )
            ).all()
            for row in rows:
                try:
                    await self.bus.publish(row.subject, row.payload, msg_id=row.id)
                except Exception as exc:
                    await session.execute(
                        update(t).where(t.c.id == row.id).values(attempts=t.c.attempts + 1, last_error=str(exc)[:500])
                    )
                    log.warning("outbox publish failed, will retry: %s", exc)
                    break
                await session.execute(update(t).where(t.c.id == row.id).values(published_at=now_ms()))
                published += 1
                beat()
        return published

    async def update_lag(self) -> None:
        t = self.table
        async with self.db.session() as session:
            oldest = (
                await session.execute(
                    select(t.c.created_at).where(t.c.published_at.is_(None)).order_by(t.c.created_at).limit(1)
                )
            ).scalar()
            pending = (await session.execute(select(func.count()).where(t.c.published_at.is_(None)))).scalar()
        OUTBOX_LAG.labels(self.service).set(0 if oldest is None else time.time() - oldest / 1000)
        OUTBOX_PENDING.labels(self.service).set(pending or 0)

    async def run(self) -> None:
        backoff = self.poll_seconds
        while not self._stopping:
            try:
                n = await self.relay_once()
                await self.update_lag()
                backoff = self.poll_seconds if n or self.bus.connected else min(backoff * 2, 5.0)
                if n == self.batch:
                    continue  # more are waiting; relay_once beat for each one it published
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("outbox relay error: %s", exc)
                backoff = min(backoff * 2, 5.0)
            beat()
            self._wake.clear()
            await self.doze(backoff)


async def pending_count(db: Database, table: Table) -> int:
    async with db.session() as session:
        n = (await session.execute(select(func.count()).where(table.c.published_at.is_(None)))).scalar()
    return int(n or 0)
