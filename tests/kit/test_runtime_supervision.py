"""A service process whose loop cannot be kept running says so and stops: gRPC health goes
NOT_SERVING when the loop dies, and after too many failures in a row ``run_forever`` returns
with exit status 70 (``run_service`` then exits with it, for the outer supervisor)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.billing.models import outbox
from services.billing.settings import BillingSettings
from services.devrun.infra import free_port
from services.kit.runtime import ServiceRuntime
from services.kit.supervision import EXIT_LOOP_FAILED, beat
from tests.conftest import ROOT


async def test_a_loop_that_cannot_be_kept_running_stops_the_process(
    databases, nats_url: str, stream_prefix: str
) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    settings = BillingSettings(
        database_url=databases.create("billing"),
        nats_url=nats_url,
        nats_stream_prefix=stream_prefix,
        listen_addr=f"127.0.0.1:{port}",
        log_json=True,
    )
    runtime = ServiceRuntime(settings, Path(ROOT / "services" / "billing"), outbox)
    sup = runtime.supervisor
    sup.backoff_initial, sup.backoff_max, sup.check_interval, sup.max_failures = 0.2, 0.4, 0.02, 3
    runs = 0

    async def broken() -> None:
        nonlocal runs
        runs += 1
        beat()
        await asyncio.sleep(0.1)
        raise RuntimeError("lost its connection")

    runtime.supervise("broken", broken)
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level  # the runtime configures logging for a process
    try:
        await runtime.connect()
        await runtime.start()
        await watch_until_stopped(runtime, port)
    finally:
        root.handlers[:], root.level = handlers, level
    assert runtime.exit_code == EXIT_LOOP_FAILED
    assert runs == 4  # the first run and three restarts


async def watch_until_stopped(runtime: ServiceRuntime, port: int) -> None:
    forever = asyncio.create_task(runtime.run_forever())
    seen: set[int] = set()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        deadline = asyncio.get_running_loop().time() + 20
        while not forever.done() and asyncio.get_running_loop().time() < deadline:
            try:
                seen.add((await health.Check(health_pb2.HealthCheckRequest(), timeout=1)).status)
            except grpc.aio.AioRpcError:
                pass  # stopping
            await asyncio.sleep(0.02)
    await asyncio.wait_for(forever, 20)
    assert health_pb2.HealthCheckResponse.NOT_SERVING in seen
