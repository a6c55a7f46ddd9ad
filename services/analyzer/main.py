"""The analyzer service process."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from services.analyzer import cache_refresh, model_store, upgrade
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
    await model_store.start_consumers(runtime, deps)
    runtime.supervise("cache-refresh", partial(cache_refresh.run, deps))
    # A start-up pass that finishes; each relearning has the learning time limit.
    runtime.supervise("relearn-outdated", partial(upgrade.relearn_in_background, deps), once=True, stall_after=None)


if __name__ == "__main__":
    run_service(load(), Path(__file__).parent, outbox, setup)
