"""gRPC transport of the hostapp service."""

from __future__ import annotations

from services.contracts.v1 import hostapp_pb2_grpc
from services.kit.runtime import ServiceRuntime


class HostAppServicer(hostapp_pb2_grpc.HostAppServiceServicer):
    def __init__(self, runtime: ServiceRuntime) -> None:
        self.runtime = runtime
        self.db = runtime.db
