"""The analyzer service process."""

from __future__ import annotations

from pathlib import Path

from services.analyzer import learning, upgrade
from services.analyzer.deps import Deps
from services.analyzer.models import outbox
from services.analyzer.servicer import AnalyzerServicer
from services.analyzer.settings import load
from services.contracts.v1 import analyzer_pb2_grpc
from services.kit.runtime import ServiceRuntime, run_service


async def setup(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    deps = Deps.build(runtime.db, settings)  # type: ignore[arg-type]
    runtime.server.add(
        analyzer_pb2_grpc.add_AnalyzerServiceServicer_to_server,
        AnalyzerServicer(deps),
        "services.contracts.v1.AnalyzerService",
    )
    learning.start_consumers(runtime, deps)
    runtime.spawn(upgrade.relearn_in_background(deps), "relearn-outdated")


if __name__ == "__main__":
    run_service(load(), Path(__file__).parent, outbox, setup)
