"""Plan caps on analyses: billing's ``CheckQuota`` before each analysis, its answer remembered
per owner for a short while so the hot path rarely pays the round trip.

A cap can therefore be overshot by what one owner runs within ``ttl`` seconds; a change of
plan (``subscription.changed``, watched by every replica) drops the owner's answer at once. When billing
cannot be reached, reviews go on (fail open) and the next call asks again soon: a billing
outage must not stop code review, and usage is still recorded from the analysis events.
"""

from __future__ import annotations

import logging
import time

from services.contracts.v1 import billing_pb2, billing_pb2_grpc, events_pb2
from services.kit.errors import ServiceError
from services.kit.grpc_client import call, make_channel

log = logging.getLogger(__name__)
REFUSALS = ("plan_required", "quota_exceeded")


class QuotaGate:
    def __init__(self, billing_addr: str, *, ttl: float = 30.0, deadline: float = 2.0) -> None:
        self._channel = make_channel(billing_addr, billing_pb2.DESCRIPTOR.services_by_name["BillingService"])
        self._stub = billing_pb2_grpc.BillingServiceStub(self._channel)
        self.ttl = ttl
        self.deadline = deadline
        self._answers: dict[str, tuple[float, ServiceError | None]] = {}
        self.asked = 0

    async def ensure(self, owner: str, metric: str = "analyses") -> None:
        """Raise ``plan_required`` / ``quota_exceeded`` when the owner's plan refuses one more."""
        if not owner:
            return  # an unclaimed hosted repository: nobody's plan applies yet
        now = time.monotonic()
        cached = self._answers.get(owner)
        if cached is not None and cached[0] > now:
            if cached[1] is not None:
                raise cached[1]
            return
        self.asked += 1
        try:
            await call(
                self._stub.CheckQuota,
                billing_pb2.CheckQuotaRequest(owner=owner, metric=metric, amount=1),
                timeout=self.deadline,
            )
        except ServiceError as exc:
            if exc.code in REFUSALS:
                self._answers[owner] = (now + self.ttl, exc)
                raise
            log.warning("quota check unavailable for %s, allowing: %s", owner, exc.code)
            self._answers[owner] = (now + min(self.ttl, 5.0), None)
            return
        self._answers[owner] = (now + self.ttl, None)

    def forget(self, owner: str) -> None:
        """Drop the remembered answer: the owner's plan changed (a cap may be lifted or lowered)."""
        self._answers.pop(owner, None)

    async def on_subscription_changed(self, env: events_pb2.EventEnvelope) -> None:
        self.forget(events_pb2.SubscriptionChanged.FromString(env.payload).owner)

    async def close(self) -> None:
        await self._channel.close()
