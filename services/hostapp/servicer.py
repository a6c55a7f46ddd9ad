"""gRPC transport of the hostapp service: read the request, call one rule, convert."""

from __future__ import annotations

from collections.abc import Callable

import grpc

from services.contracts.v1 import hostapp_pb2, hostapp_pb2_grpc
from services.hostapp import credentials, webhooks
from services.hostapp.github import GitHubApp
from services.kit.db import Database


class HostAppServicer(hostapp_pb2_grpc.HostAppServiceServicer):
    def __init__(
        self,
        db: Database,
        github: GitHubApp,
        wake: Callable[[], None] = lambda: None,
        *,
        wake_feedback: Callable[[], None] = lambda: None,
        slug: str = webhooks.DEFAULT_SLUG,
    ) -> None:
        self.db = db
        self.github = github
        self.wake = wake
        self.wake_feedback = wake_feedback
        self.slug = slug

    async def HandleWebhook(
        self, request: hostapp_pb2.HostWebhookRequest, context: grpc.aio.ServicerContext
    ) -> hostapp_pb2.HostWebhookResponse:
        outcome = await webhooks.receive(self.db, request.delivery_id, request.event, request.payload, slug=self.slug)
        if outcome.conversation:
            self.wake_feedback()  # a verdict or a reply is committed: deliver it now
        elif outcome.handled:
            self.wake()  # the job or event is committed: relay it now rather than at the next poll
        return hostapp_pb2.HostWebhookResponse(
            duplicate=outcome.duplicate, handled=outcome.handled, job_id=outcome.job_id
        )

    async def GetCloneCredentials(
        self, request: hostapp_pb2.CloneCredentialsRequest, context: grpc.aio.ServicerContext
    ) -> hostapp_pb2.CloneCredentials:
        return await credentials.issue(self.db, self.github, request.full_name)

    async def GetInstallationRecord(
        self, request: hostapp_pb2.InstallationRecordRequest, context: grpc.aio.ServicerContext
    ) -> hostapp_pb2.InstallationRecord:
        return await credentials.installation_record(self.db, request.full_name)
