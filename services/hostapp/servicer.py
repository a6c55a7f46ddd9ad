"""gRPC transport of the hostapp service: read the request, call one rule, convert."""

from __future__ import annotations

import asyncio

import grpc

from services.contracts.v1 import hostapp_pb2, hostapp_pb2_grpc
from services.hostapp import credentials
from services.hostapp.github import GitHubApp
from services.hostapp.intake import Intake, Receipt
from services.kit.db import Database
from services.kit.errors import ServiceError
from services.kit.grpc_server import error_detail


def webhook_response(receipt: Receipt) -> hostapp_pb2.HostWebhookResponse:
    # Recorded, not yet applied: what the delivery does is decided after this answer
    # (deliveries.py), so the answer names no job.
    return hostapp_pb2.HostWebhookResponse(duplicate=receipt.duplicate, handled=not receipt.duplicate)


class HostAppServicer(hostapp_pb2_grpc.HostAppServiceServicer):
    def __init__(self, db: Database, github: GitHubApp, intake: Intake | None = None) -> None:
        self.db = db
        self.github = github
        self.intake = intake or Intake(db)

    async def HandleWebhook(
        self, request: hostapp_pb2.HostWebhookRequest, context: grpc.aio.ServicerContext
    ) -> hostapp_pb2.HostWebhookResponse:
        return webhook_response(await self.intake.receive(request.delivery_id, request.event, request.payload))

    async def HandleWebhooks(
        self, request: hostapp_pb2.HostWebhookBatch, context: grpc.aio.ServicerContext
    ) -> hostapp_pb2.HostWebhookResults:
        """Each delivery as ``HandleWebhook`` (their records share the intake's statements);
        a delivery's own refusal (4xx) is its result, anything else fails the call."""
        answers = await asyncio.gather(
            *(self.intake.receive(d.delivery_id, d.event, d.payload) for d in request.deliveries),
            return_exceptions=True,
        )
        results = []
        for answer in answers:
            if isinstance(answer, Receipt):
                results.append(hostapp_pb2.HostWebhookResult(response=webhook_response(answer)))
            elif isinstance(answer, ServiceError) and answer.http_status < 500:
                detail = error_detail(answer.code, answer.message, answer.details)
                results.append(hostapp_pb2.HostWebhookResult(error=detail))
            else:
                raise answer  # an outage (the deliveries shared its statements) or a bug
        return hostapp_pb2.HostWebhookResults(results=results)

    async def GetCloneCredentials(
        self, request: hostapp_pb2.CloneCredentialsRequest, context: grpc.aio.ServicerContext
    ) -> hostapp_pb2.CloneCredentials:
        return await credentials.issue(self.db, self.github, request.full_name)

    async def GetInstallationRecord(
        self, request: hostapp_pb2.InstallationRecordRequest, context: grpc.aio.ServicerContext
    ) -> hostapp_pb2.InstallationRecord:
        return await credentials.installation_record(self.db, request.full_name)
