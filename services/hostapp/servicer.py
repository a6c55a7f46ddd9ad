"""gRPC transport of the hostapp service: read the request, call one rule, convert."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import grpc
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncSession

from services.contracts.v1 import hostapp_pb2, hostapp_pb2_grpc
from services.hostapp import credentials, webhooks
from services.hostapp.github import GitHubApp
from services.kit.db import Database
from services.kit.errors import ServiceError


class HostAppServicer(hostapp_pb2_grpc.HostAppServiceServicer):
    def __init__(self, db: Database, github: GitHubApp, wake: Callable[[], None] = lambda: None) -> None:
        self.db = db
        self.github = github
        self.wake = wake

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[AsyncSession]:
        # A database outage must answer 5xx, so the code host shows the delivery as failed
        # (and the reconciler can have it redelivered) rather than as a client error.
        try:
            async with self.db.session() as session:
                yield session
        except (DBAPIError, PoolTimeout):
            raise ServiceError("service_unavailable", "the hostapp database is unavailable") from None

    async def HandleWebhook(
        self, request: hostapp_pb2.HostWebhookRequest, context: grpc.aio.ServicerContext
    ) -> hostapp_pb2.HostWebhookResponse:
        async with self._session() as session:
            outcome = await webhooks.handle(session, request.delivery_id, request.event, request.payload)
        if outcome.handled:
            self.wake()  # the job or event is committed: relay it now rather than at the next poll
        return hostapp_pb2.HostWebhookResponse(
            duplicate=outcome.duplicate, handled=outcome.handled, job_id=outcome.job_id
        )

    async def GetCloneCredentials(
        self, request: hostapp_pb2.CloneCredentialsRequest, context: grpc.aio.ServicerContext
    ) -> hostapp_pb2.CloneCredentials:
        async with self._session() as session:
            record, _ = await credentials.active_record(session, request.full_name)
        return await credentials.clone_credentials(self.github, record)

    async def GetInstallationRecord(
        self, request: hostapp_pb2.InstallationRecordRequest, context: grpc.aio.ServicerContext
    ) -> hostapp_pb2.InstallationRecord:
        async with self._session() as session:
            return await credentials.installation_record(session, request.full_name)
