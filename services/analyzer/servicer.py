"""gRPC transport of the analyzer service."""

from __future__ import annotations

from services.contracts.v1 import analyzer_pb2_grpc
from services.kit.runtime import ServiceRuntime


class AnalyzerServicer(analyzer_pb2_grpc.AnalyzerServiceServicer):
    def __init__(self, runtime: ServiceRuntime) -> None:
        self.runtime = runtime
        self.db = runtime.db
