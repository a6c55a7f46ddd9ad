"""gRPC stubs of the four services, one channel each, built once per process."""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from services.contracts.v1 import (
    analyzer_pb2,
    analyzer_pb2_grpc,
    billing_pb2,
    billing_pb2_grpc,
    hostapp_pb2,
    hostapp_pb2_grpc,
    indexer_pb2,
    indexer_pb2_grpc,
)
from services.gateway.settings import GatewaySettings
from services.kit.grpc_client import make_channel


@dataclass
class Clients:
    billing: billing_pb2_grpc.BillingServiceAsyncStub
    indexer: indexer_pb2_grpc.IndexerServiceAsyncStub
    analyzer: analyzer_pb2_grpc.AnalyzerServiceAsyncStub
    hostapp: hostapp_pb2_grpc.HostAppServiceAsyncStub
    channels: dict[str, grpc.aio.Channel]

    @classmethod
    def connect(cls, settings: GatewaySettings) -> Clients:
        # Each channel retries what its service's contract marks idempotent.
        channels = {
            "billing": make_channel(settings.billing_addr, billing_pb2.DESCRIPTOR.services_by_name["BillingService"]),
            "indexer": make_channel(settings.indexer_addr, indexer_pb2.DESCRIPTOR.services_by_name["IndexerService"]),
            "analyzer": make_channel(
                settings.analyzer_addr, analyzer_pb2.DESCRIPTOR.services_by_name["AnalyzerService"]
            ),
            "hostapp": make_channel(settings.hostapp_addr, hostapp_pb2.DESCRIPTOR.services_by_name["HostAppService"]),
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
