"""The indexer service process."""

from __future__ import annotations

from pathlib import Path

from services.contracts.v1 import indexer_pb2_grpc
from services.indexer.models import outbox
from services.indexer.servicer import IndexerServicer
from services.indexer.settings import load
from services.kit.runtime import ServiceRuntime, run_service


async def setup(runtime: ServiceRuntime) -> None:
    runtime.server.add(
        indexer_pb2_grpc.add_IndexerServiceServicer_to_server,
        IndexerServicer(runtime),
        "services.contracts.v1.IndexerService",
    )


if __name__ == "__main__":
    run_service(load(), Path(__file__).parent, outbox, setup)
