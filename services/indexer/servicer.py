"""gRPC transport of the indexer service."""

from __future__ import annotations

from services.contracts.v1 import indexer_pb2_grpc
from services.kit.runtime import ServiceRuntime


class IndexerServicer(indexer_pb2_grpc.IndexerServiceServicer):
    def __init__(self, runtime: ServiceRuntime) -> None:
        self.runtime = runtime
        self.db = runtime.db
