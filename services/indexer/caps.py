"""The plan's repository cap, enforced where a repository is created: billing's
``CheckQuota`` with the total the owner would reach. Billing knows the plans, the indexer
knows the repositories; the count is taken under a per-owner lock so two concurrent
registrations cannot both take the last place."""

from __future__ import annotations

import logging

from sqlalchemy.ext.asyncio import AsyncSession

from services.contracts.v1 import billing_pb2, billing_pb2_grpc
from services.indexer import queries
from services.kit.db import advisory_lock
from services.kit.errors import ServiceError
from services.kit.grpc_client import call, make_channel

log = logging.getLogger(__name__)
REFUSALS = ("plan_required", "quota_exceeded")


class RepositoryCap:
    def __init__(self, billing_addr: str, *, deadline: float = 2.0) -> None:
        self.billing_addr = billing_addr
        self.deadline = deadline
        self._stub: billing_pb2_grpc.BillingServiceAsyncStub | None = None

    def _billing(self) -> billing_pb2_grpc.BillingServiceAsyncStub:
        if self._stub is None:  # made on first use, inside the serving event loop
            channel = make_channel(self.billing_addr, billing_pb2.DESCRIPTOR.services_by_name["BillingService"])
            self._stub = billing_pb2_grpc.BillingServiceStub(channel)
        return self._stub

    async def ensure_room(self, session: AsyncSession, owner: str) -> None:
        """Raise ``plan_required`` (the cap in ``details``) when one more repository would
        exceed the owner's plan. Holds the owner's lock until the caller's transaction ends."""
        await advisory_lock(session, f"repository-cap:{owner}")
        total = await queries.count_repositories(session, owner) + 1
        request = billing_pb2.CheckQuotaRequest(owner=owner, metric="repositories", amount=total)
        try:
            await call(self._billing().CheckQuota, request, timeout=self.deadline)
        except ServiceError as exc:
            if exc.code in REFUSALS:
                raise
            # As for analyses: an outage of billing does not stop work; the cap holds again after.
            log.warning("repository cap of %s unchecked (billing: %s); registering", owner, exc.code)
