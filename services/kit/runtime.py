"""The life of a service process: logging, migrations, database, bus, outbox relay,
gRPC server with readiness, supervised background loops, and a clean stop on SIGTERM (or
exit status 70 when a loop cannot be kept running)."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

from sqlalchemy import Table
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_exponential

from services.kit import migrations
from services.kit.bus import Bus
from services.kit.db import Database
from services.kit.grpc_server import GrpcServer
from services.kit.logs import configure_logging
from services.kit.metrics import serve_metrics
from services.kit.outbox import OutboxRelay
from services.kit.settings import ServiceSettings
from services.kit.supervision import EXIT_LOOP_FAILED, Supervisor

log = logging.getLogger(__name__)


class ServiceRuntime:
    def __init__(self, settings: ServiceSettings, service_dir: Path, outbox: Table | None) -> None:
        self.settings = settings
        self.name = settings.service_name
        self.service_dir = service_dir
        self.db = Database(settings.database_url)
        self.bus = Bus(settings.nats_url, settings.nats_stream_prefix, settings.nats_stream_replicas)
        self.server = GrpcServer(self.name, settings.bind_address())
        self.outbox_table = outbox
        self.relay: OutboxRelay | None = None
        self.supervisor = Supervisor(self.name, on_fatal=self._fatal)
        self.exit_code = 0

    async def connect(self) -> None:
        """What ``setup()`` may use: logging, the migrated database and the connected bus with
        its streams declared. NATS that is not up yet is waited for (a minute, then the process
        exits for its supervisor to start it again)."""
        s = self.settings
        configure_logging(self.name, s.log_level, s.log_json)
        if not s.database_url:
            raise SystemExit(f"CR_{self.name.upper()}_DATABASE_URL is not set")
        await asyncio.to_thread(migrations.upgrade, self.service_dir, s.database_url)
        async for attempt in AsyncRetrying(
            stop=stop_after_delay(60),
            wait=wait_exponential(multiplier=0.2, max=2),
            retry=retry_if_exception_type(Exception),
            reraise=True,
        ):
            with attempt:
                await self.bus.connect()
        await self.bus.ensure_streams()

    async def start(self) -> None:
        """After ``connect()`` and ``setup()``: metrics, the outbox relay, the gRPC server with
        readiness, then the supervised loops. Connected first, no loop begins by failing (and
        logging it) or has to wait for the bus; a later outage is theirs to ride out."""
        s = self.settings
        if self.bus.nc is None:
            raise RuntimeError("ServiceRuntime.start() before connect()")
        serve_metrics(s.metrics_port, s.metrics_bind_host())
        if self.outbox_table is not None:
            self.relay = OutboxRelay(self.db, self.bus, self.outbox_table, self.name, s.outbox_poll_seconds)
            self.supervise("outbox-relay", self.relay.run, stop=self.relay.stop)
        checks = {"database": self.db.ping, "nats": self._nats_ready, "loops": self._loops_ready}
        self.server.spawn(self.server.watch_readiness(checks, wake=self.supervisor.changed), "readiness")
        port = await self.server.start()
        log.info("%s listening on %s (port %s)", self.name, s.bind_address(), port)
        self.server.spawn(self.supervisor.run(), "supervisor")

    async def _nats_ready(self) -> bool:
        return self.bus.connected

    def wake_relay(self) -> None:
        if self.relay is not None:
            self.relay.wake()

    async def _loops_ready(self) -> bool:
        problems = self.supervisor.problems()
        if problems:
            log.debug("loops not ready: %s", problems)
        return not problems

    def supervise(
        self,
        name: str,
        factory: Callable[[], Awaitable[Any]],
        *,
        stop: Callable[[], None] | None = None,
        stall_after: float | None = 60.0,
        once: bool = False,
    ) -> None:
        """Run a long-lived loop under the process's supervisor (``services/kit/supervision.py``):
        ``factory`` starts it (again after a failure); ``stop`` asks it to end at shutdown."""
        self.supervisor.add(name, factory, stop=stop, stall_after=stall_after, once=once)

    def _fatal(self, message: str) -> None:
        self.exit_code = EXIT_LOOP_FAILED
        self.server.request_stop()

    async def run_forever(self) -> None:
        async def on_stop() -> None:
            await self.supervisor.stop()
            await self.bus.close()
            await self.db.dispose()

        await self.server.serve_until_signal(on_stop)


def main_entry(coro_factory: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run a service's async main with uvloop when available."""
    try:
        import uvloop

        uvloop.run(coro_factory())
    except ImportError:
        asyncio.run(coro_factory())


def run_service(
    settings: ServiceSettings,
    service_dir: Path,
    outbox: Table | None,
    setup: Callable[[ServiceRuntime], Awaitable[None]],
) -> None:
    """The whole ``main`` of a service: ``setup(runtime)`` registers servicers and consumers,
    with the database migrated and the bus connected."""

    async def serve() -> None:
        runtime = ServiceRuntime(settings, service_dir, outbox)
        await runtime.connect()
        await setup(runtime)
        await runtime.start()
        await runtime.run_forever()
        if runtime.exit_code:
            # Not a normal interpreter exit: that waits for every thread, and the loop that
            # failed may have left one stuck.
            logging.shutdown()
            os._exit(runtime.exit_code)

    main_entry(serve)
