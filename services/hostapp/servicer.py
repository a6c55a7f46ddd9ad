"""gRPC transport of the hostapp service: read the request, call one rule, convert."""

from __future__ import annotations

import grpc

from services.contracts.v1 import hostapp_pb2, hostapp_pb2_grpc
from services.hostapp import credentials
from services.hostapp.github import GitHubApp
from services.hostapp.intake import Intake
from services.kit.db import Database


class HostAppServicer(hostapp_pb2_grpc.HostAppServiceServicer):
    def __init__(self, db: Database, github: GitHubApp, intake: Intake | None = None) -> None:
        self.db = db
        self.github = github
        self.intake = intake or Intake(db)

    async def HandleWebhook(
        self, request: hostapp_pb2.HostWebhookRequest, context: grpc.aio.ServicerContext
    ) -> hostapp_pb2.HostWebhookResponse:
        # Recorded, not yet applied: what the delivery does is decided after this answer
        # (deliveries.py), so the answer names no job.
        receipt = await self.intake.receive(request.delivery_id, request.event, request.payload)
        return hostapp_pb2.HostWebhookResponse(duplicate=receipt.duplicate, handled=not receipt.duplicate)

    async def GetCloneCredentials(
        self, request: hostapp_pb2.CloneCredentialsRequest, context: grpc.aio.ServicerContext
    ) -> hostapp_pb2.CloneCredentials:
        return await credentials.issue(self.db, self.github, request.full_name)

    async def GetInstallationRecord(
        self, request: hostapp_pb2.InstallationRecordRequest, context: grpc.aio.ServicerContext
    ) -> hostapp_pb2.InstallationRecord:
        return await credentials.installation_record(self.db, request.full_name)
