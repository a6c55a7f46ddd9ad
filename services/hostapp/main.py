"""The hostapp service process."""

from __future__ import annotations

from pathlib import Path

from services.contracts.v1 import hostapp_pb2_grpc
from services.hostapp.models import outbox
from services.hostapp.servicer import HostAppServicer
from services.hostapp.settings import load
from services.kit.runtime import ServiceRuntime, run_service


async def setup(runtime: ServiceRuntime) -> None:
    runtime.server.add(
        hostapp_pb2_grpc.add_HostAppServiceServicer_to_server,
        HostAppServicer(runtime),
        "services.contracts.v1.HostAppService",
    )


if __name__ == "__main__":
    run_service(load(), Path(__file__).parent, outbox, setup)
