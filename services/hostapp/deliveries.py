"""The delivery processor: applies recorded code-host deliveries after they were acknowledged.

``intake.py`` recorded each delivery with its payload and answered. Here the recorded,
unprocessed deliveries are read in arrival order (``FOR UPDATE SKIP LOCKED``: replicas share
the work, none applies a delivery twice) and each one's effect (``webhooks.apply``: records,
jobs, outbox events, conversation rows) commits with its outcome and ``processed_at`` in the
batch's transaction. A process that dies mid-batch commits nothing of it: the deliveries stay
unprocessed and the next pass (this process after a restart, or another replica) applies them.

A delivery whose effect fails for a reason that another attempt cannot fix (a value the
database refuses, a bug) is rolled back to its savepoint and stored ``failed: ...``, so one
delivery cannot hold back the ones after it; a database outage fails the whole batch, which
is tried again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import orjson
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncSession

from services.hostapp import webhooks
from services.hostapp.models import WebhookDelivery, now_ms
from services.kit.db import Database
from services.kit.supervision import Wakeable, beat, idle

log = logging.getLogger(__name__)


# The batch's outcomes in one statement; the payload goes (applied: the outcome is the record).
class _EffectFailed(Exception):
    """A delivery's effect failed in a batch applied without savepoints."""


SETTLE_SQL = text(
    """
    UPDATE webhook_deliveries AS d
    SET handled = u.handled, outcome = u.outcome, job_id = NULLIF(u.job_id, ''), processed_at = :now,
        payload = NULL
    FROM unnest(
        CAST(:ids AS varchar[]), CAST(:handled AS boolean[]), CAST(:outcomes AS varchar[]), CAST(:jobs AS varchar[])
    ) AS u(id, handled, outcome, job_id)
    WHERE d.delivery_id = u.id
    """
)


class DeliveryProcessor(Wakeable):
    def __init__(
        self,
        db: Database,
        *,
        slug: str = webhooks.DEFAULT_SLUG,
        wake_relay: Callable[[], None] = lambda: None,
        wake_feedback: Callable[[], None] = lambda: None,
        poll_seconds: float = 2.0,
        batch: int = 100,
        busy: Callable[[], bool] = lambda: False,
        busy_pause: float = 0.25,
        busy_share: float = 0.2,
    ) -> None:
        self.db = db
        self.slug = slug
        self.wake_relay = wake_relay
        self.wake_feedback = wake_feedback
        self.poll_seconds = poll_seconds  # a wake-up lost (another replica recorded it) costs this much
        self.batch = batch
        # Deliveries still arriving come first: their answers are what the code host times out
        # on (10 s), and this process records them. While the intake is busy the processor
        # pauses after each batch, so that its batches take at most ``busy_share`` of the time
        # (a batch of 100 takes seconds on a loaded machine: a fixed short pause left it most of
        # the process), and its batches are fuller. The pause ends as soon as the intake is
        # idle; the backlog drains then.
        self.busy = busy
        self.busy_pause = busy_pause
        self.busy_share = busy_share
        super().__init__()

    async def run(self) -> None:
        while not self._stopping:
            self._wake.clear()
            started = time.monotonic()
            try:
                outcomes = await self.process_pending()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database is away: the deliveries wait, recorded
                log.warning("webhook deliveries not processed, will retry: %s", exc)
                outcomes = {}
            beat()  # progress is per batch committed (or an outage ridden out), not per loop turn
            if self.busy():
                worked = time.monotonic() - started
                await self._yield_to_intake(max(self.busy_pause, worked * (1 - self.busy_share) / self.busy_share))
                continue
            if len(outcomes) >= self.batch:
                continue  # more are waiting
            await self.doze(self.poll_seconds)

    async def _yield_to_intake(self, seconds: float) -> None:
        """Pause up to ``seconds`` while deliveries are arriving (checked every ``busy_pause``)."""
        until = time.monotonic() + seconds
        with idle():
            while not self._stopping and (left := until - time.monotonic()) > 0:
                await asyncio.sleep(min(self.busy_pause, left))
                if not self.busy():
                    return

    async def process_pending(self, batch: int | None = None) -> dict[str, webhooks.Outcome]:
        """Apply up to ``batch`` recorded deliveries, oldest first; their outcomes by delivery id.

        The batch is applied without a savepoint per delivery (two round trips each). If one
        delivery's effect fails, the whole transaction is rolled back and the batch applied
        again with each delivery under its own savepoint, so that one is stored failed alone."""
        try:
            outcomes = await self._process(batch or self.batch, isolated=False)
        except _EffectFailed:
            outcomes = await self._process(batch or self.batch, isolated=True)
        if any(o.conversation for o in outcomes.values()):
            self.wake_feedback()  # a verdict or a reply is committed: deliver it now
        if any(o.handled and not o.conversation for o in outcomes.values()):
            self.wake_relay()  # a job or event is committed: relay it now rather than at the next poll
        return outcomes

    async def _process(self, batch: int, *, isolated: bool) -> dict[str, webhooks.Outcome]:
        outcomes: dict[str, webhooks.Outcome] = {}
        d = WebhookDelivery
        async with self.db.session() as session:
            rows = (
                await session.execute(
                    select(d.delivery_id, d.event, d.payload)
                    .where(d.processed_at.is_(None))
                    .order_by(d.seq)
                    .limit(batch)
                    .with_for_update(skip_locked=True)
                )
            ).all()
            for delivery_id, event, payload in rows:
                outcomes[delivery_id] = await self._apply(session, delivery_id, event, payload, isolated)
            if outcomes:
                await session.execute(
                    SETTLE_SQL,
                    {
                        "ids": list(outcomes),
                        "handled": [o.handled for o in outcomes.values()],
                        "outcomes": [o.outcome[:200] for o in outcomes.values()],
                        "jobs": [o.job_id for o in outcomes.values()],
                        "now": now_ms(),
                    },
                )
        return outcomes

    async def _apply(
        self, session: AsyncSession, delivery_id: str, event: str, payload: bytes | None, isolated: bool
    ) -> webhooks.Outcome:
        try:
            body = orjson.loads(payload or b"{}")
        except orjson.JSONDecodeError:  # checked before it was recorded: only a damaged row
            return webhooks.Outcome(False, "failed: payload is not JSON")
        try:
            if not isolated:
                return await webhooks.apply(session, delivery_id, event, body, slug=self.slug)
            async with session.begin_nested():
                return await webhooks.apply(session, delivery_id, event, body, slug=self.slug)
        except (OperationalError, InterfaceError):
            raise  # the connection or the server: the batch is tried again
        except Exception as exc:
            if not isolated:
                raise _EffectFailed from exc  # the session rolls the batch back; applied again, isolated
            if not isinstance(exc, DBAPIError):
                log.exception("webhook delivery %s (%s) failed", delivery_id, event)
            else:
                log.warning("webhook delivery %s (%s) refused by the database: %s", delivery_id, event, exc)
            return webhooks.Outcome(False, f"failed: {type(exc).__name__}")
