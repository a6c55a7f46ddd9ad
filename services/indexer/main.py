"""The indexer service process: the gRPC API, the index job worker with its extraction
pool, the lease reaper, and the installation-events consumer."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from services.contracts.v1 import indexer_pb2_grpc
from services.indexer import repositories
from services.indexer.extraction import ExtractorPool
from services.indexer.models import inbox, outbox
from services.indexer.servicer import IndexerServicer
from services.indexer.settings import IndexerSettings, load
from services.indexer.sources import HostApp
from services.indexer.worker import IndexWorker, Reaper
from services.kit.bus import SUBJECT_INSTALLATION_REPOS
from services.kit.inbox import EventConsumer
from services.kit.runtime import ServiceRuntime, run_service


async def setup(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    assert isinstance(settings, IndexerSettings)
    hostapp = HostApp(settings)
    runtime.server.add(
        indexer_pb2_grpc.add_IndexerServiceServicer_to_server,
        IndexerServicer(runtime.db, settings, hostapp, runtime.wake_relay),
        "services.contracts.v1.IndexerService",
    )
    pool = ExtractorPool(settings.worker_count())
    worker = IndexWorker(settings, runtime.db, runtime.bus, pool, hostapp, runtime.wake_relay)
    runtime.supervise("index-worker", worker.run, stop=worker.stop)
    reaper = Reaper(settings, runtime.db, runtime.wake_relay)
    runtime.supervise("index-reaper", reaper.run, stop=reaper.stop)
    events = EventConsumer(
        runtime.bus, runtime.db, inbox, "indexer-installations", SUBJECT_INSTALLATION_REPOS, service="indexer"
    )
    runtime.supervise(
        "installations", partial(events.consume, repositories.on_installation_repositories), stop=events.stop
    )


if __name__ == "__main__":
    run_service(load(), Path(__file__).parent, outbox, setup)
