"""The request path of a code-host delivery: check, record, acknowledge; nothing else.

The gateway verified the signature over the raw body. Here the delivery's headers and values
are checked (``payload_bounds.py``) and the delivery is recorded with its payload under its
X-GitHub-Delivery id (ON CONFLICT DO NOTHING: a redelivery is a duplicate). The effect of the
event is applied after the answer, by ``deliveries.DeliveryProcessor``, from the recorded row:
a crash between the two delays the effect, never loses it.

Deliveries that arrive together are recorded together: one INSERT (one commit) for all the
records waiting when the previous one finished. A lone delivery waits for nobody; under load a
statement carries many, so the cost per delivery falls as the rate rises. Every caller is
answered only after the statement that holds its record committed. The statements run on a
connection the intake holds (``Database.held``): a checkout of the pool pings the server first,
a round trip that took a third of a statement's time in the request path.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
import psycopg

from services.hostapp.payload_bounds import header_problem, payload_problem
from services.kit.batching import Batcher
from services.kit.db import Database, now_ms
from services.kit.errors import ServiceError

log = logging.getLogger(__name__)

MAX_BATCH = 500  # records per statement: bounded so one statement's parameters stay small
MAX_BATCH_BYTES = 32 * 1024 * 1024  # payload bytes per statement past its first record

# One statement whatever the batch size (so it is prepared once): parallel arrays, sent in
# binary (``%b``): a text array of payloads costs a hex escape of every byte, on both sides.
RECORD_SQL = """
    INSERT INTO webhook_deliveries
        (delivery_id, event, action, installation_id, handled, outcome, received_at, payload, processed_at)
    SELECT d, e, a, i, false, o, r, p, pa
    FROM unnest(%b::varchar[], %b::varchar[], %b::varchar[], %b::bigint[], %b::varchar[], %b::bigint[],
                %b::bytea[], %b::bigint[]) AS t(d, e, a, i, o, r, p, pa)
    ON CONFLICT (delivery_id) DO NOTHING
    RETURNING delivery_id
"""


@dataclass(frozen=True)
class Record:
    """One delivery's row as the request path writes it."""

    delivery_id: str
    event: str
    action: str
    installation_id: int | None
    payload: bytes | None  # None for a refused delivery: it will never be processed
    refused: str = ""  # an impossible value (payload_bounds.py): recorded as already processed


@dataclass(frozen=True)
class Receipt:
    duplicate: bool  # the delivery id was recorded before: nothing will be done again


def check(delivery_id: str, event: str, body: bytes) -> Record:
    """What to record, or ``bad_request`` for a delivery that cannot be recorded at all."""
    problem = header_problem(delivery_id, event)
    if problem:
        raise ServiceError("bad_request", problem)
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise ServiceError("bad_request", "payload is not JSON") from None
    if not isinstance(payload, dict):
        raise ServiceError("bad_request", "payload is not a JSON object")
    problem = payload_problem(event, payload)
    if problem:
        return Record(delivery_id, event, "", None, None, refused=problem)
    return Record(delivery_id, event, str(payload.get("action") or ""), installation_id(payload), body)


def _payload_bytes(record: Record) -> int:
    return len(record.payload or b"")


def installation_id(payload: dict[str, Any]) -> int | None:
    installation = payload.get("installation")
    if isinstance(installation, dict) and isinstance(installation.get("id"), int):
        return int(installation["id"])
    return None


class Intake:
    """``HandleWebhook``'s work: one recorded row per delivery, written in shared statements."""

    def __init__(self, db: Database, *, wake: Callable[[], None] = lambda: None, max_batch: int = MAX_BATCH) -> None:
        self.db = db
        self.wake = wake  # the processor: a recorded delivery is waiting
        self.last_recorded = 0.0  # monotonic time of the last statement that committed
        # One statement at a time: what arrives while it runs goes into the next.
        self._writer: Batcher[Record, bool] = Batcher(
            self._write, max_items=max_batch, max_weight=MAX_BATCH_BYTES, weight=_payload_bytes
        )

    def busy(self, within: float = 0.1) -> bool:
        """Deliveries are arriving: a statement committed within the last ``within`` seconds."""
        return time.monotonic() - self.last_recorded < within

    async def receive(self, delivery_id: str, event: str, body: bytes) -> Receipt:
        """Record the delivery; answer once it is committed. A database outage is
        ``service_unavailable`` (5xx), so the code host shows the delivery as failed and the
        reconciler can have it redelivered; an impossible value is recorded, then refused."""
        record = check(delivery_id, event, body)
        if not await self._writer.submit(record):
            log.info("webhook.code_host.duplicate %s (%s)", delivery_id, event)
            return Receipt(duplicate=True)
        if record.refused:
            log.warning("webhook.code_host.refused %s (%s): %s", delivery_id, event, record.refused)
            raise ServiceError("bad_request", record.refused, {"delivery_id": delivery_id})
        self.wake()
        return Receipt(duplicate=False)

    async def _write(self, records: list[Record]) -> list[bool | Exception]:
        """One statement for ``records``: for each, True when it recorded the delivery, False
        when its id was there already."""
        try:
            inserted = await self._insert(records)
        except (psycopg.Error, OSError) as exc:
            log.warning("webhook deliveries not recorded (%d): %s", len(records), exc)
            raise ServiceError("service_unavailable", "the hostapp database is unavailable") from exc
        self.last_recorded = time.monotonic()
        new: list[bool | Exception] = []
        for record in records:
            # The same id twice in one statement: the first is the delivery, the others duplicates.
            new.append(record.delivery_id in inserted)
            inserted.discard(record.delivery_id)
        return new

    async def _insert(self, records: list[Record]) -> set[str]:
        now = now_ms()
        params = (
            [r.delivery_id for r in records],
            [r.event for r in records],
            [r.action for r in records],
            [r.installation_id for r in records],
            [f"refused: {r.refused}"[:200] if r.refused else "" for r in records],
            [now] * len(records),
            [r.payload for r in records],
            [now if r.refused else None for r in records],
        )
        conn = await self.db.held("intake")
        try:
            return await _execute(conn, params)
        except psycopg.OperationalError:
            if not conn.broken:
                raise
        # The server dropped the held connection (a restart): once more, on a new one. Had the
        # lost statement committed, its records are answered as duplicates: stored all the same.
        return await _execute(await self.db.held("intake"), params)


async def _execute(conn: psycopg.AsyncConnection[Any], params: tuple[list[Any], ...]) -> set[str]:
    async with conn.cursor() as cursor:
        await cursor.execute(RECORD_SQL, params, prepare=True)
        return {row[0] for row in await cursor.fetchall()}
