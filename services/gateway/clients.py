"""gRPC stubs of the four services, one channel each, built once per process."""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from services.contracts.v1 import analyzer_pb2_grpc, billing_pb2_grpc, hostapp_pb2_grpc, indexer_pb2_grpc
from services.gateway.settings import GatewaySettings
from services.kit.grpc_client import make_channel

# Only these may be retried by the channel: reads, and writes that are idempotent by design.
IDEMPOTENT = {
    "services.contracts.v1.BillingService": [
        "ValidateToken",
        "ListPersonalTokens",
        "CheckAccess",
        "ListMembers",
        "ListInvitations",
        "ListPlans",
        "GetAccountStatus",
        "GetUsage",
        "CheckQuota",
        "HandlePaymentEvent",
    ],
    "services.contracts.v1.IndexerService": [
        "GetRepository",
        "ListRepositories",
        "CountRepositories",
        "GetIndexStatus",
        "GetDomains",
        "GetSegments",
        "GetNetwork",
        "GetHistory",
    ],
    "services.contracts.v1.AnalyzerService": [
        "GetReviewContext",
        "GetGlobalContext",
        "GetModelStatus",
        "GetDashboard",
        "GetAuditResults",
        "GetAuditPreferences",
    ],
    "services.contracts.v1.HostAppService": ["HandleWebhook", "GetInstallationRecord"],
}


@dataclass
class Clients:
    billing: billing_pb2_grpc.BillingServiceStub
    indexer: indexer_pb2_grpc.IndexerServiceStub
    analyzer: analyzer_pb2_grpc.AnalyzerServiceStub
    hostapp: hostapp_pb2_grpc.HostAppServiceStub
    channels: dict[str, grpc.aio.Channel]

    @classmethod
    def connect(cls, settings: GatewaySettings) -> Clients:
        def channel(addr: str, service: str) -> grpc.aio.Channel:
            return make_channel(
                addr, f"services.contracts.v1.{service}", IDEMPOTENT[f"services.contracts.v1.{service}"]
            )

        channels = {
            "billing": channel(settings.billing_addr, "BillingService"),
            "indexer": channel(settings.indexer_addr, "IndexerService"),
            "analyzer": channel(settings.analyzer_addr, "AnalyzerService"),
            "hostapp": channel(settings.hostapp_addr, "HostAppService"),
        }
        return cls(
            billing=billing_pb2_grpc.BillingServiceStub(channels["billing"]),
            indexer=indexer_pb2_grpc.IndexerServiceStub(channels["indexer"]),
            analyzer=analyzer_pb2_grpc.AnalyzerServiceStub(channels["analyzer"]),
            hostapp=hostapp_pb2_grpc.HostAppServiceStub(channels["hostapp"]),
            channels=channels,
        )

    async def close(self) -> None:
        for ch in self.channels.values():
            await ch.close()
