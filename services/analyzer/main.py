"""The analyzer service process."""

from __future__ import annotations

from pathlib import Path

from services.analyzer.models import outbox
from services.analyzer.servicer import AnalyzerServicer
from services.analyzer.settings import load
from services.contracts.v1 import analyzer_pb2_grpc
from services.kit.runtime import ServiceRuntime, run_service


async def setup(runtime: ServiceRuntime) -> None:
    runtime.server.add(
        analyzer_pb2_grpc.add_AnalyzerServiceServicer_to_server,
        AnalyzerServicer(runtime),
        "services.contracts.v1.AnalyzerService",
    )


if __name__ == "__main__":
    run_service(load(), Path(__file__).parent, outbox, setup)
