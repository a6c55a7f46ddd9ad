"""The gateway process: uvicorn with uvloop and httptools, no access log, one worker process per
CPU it may use (docs/configuration.md, "Gateway workers")."""

from __future__ import annotations

import math
import multiprocessing
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI

from services.gateway.settings import GatewaySettings, load
from services.kit.logs import configure_logging
from services.kit.processes import die_with_parent

CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def available_cpus(cpu_max: Path = CGROUP_CPU_MAX) -> int:
    """The CPUs this process may run on, capped by a cgroup v2 CPU quota (a container's limit)."""
    cpus = len(os.sched_getaffinity(0))
    try:
        quota, period = cpu_max.read_text().split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cpus)


def worker_count(settings: GatewaySettings) -> int:
    return settings.workers if settings.workers > 0 else available_cpus()


def server_options(settings: GatewaySettings) -> dict[str, Any]:
    """How uvicorn serves the gateway (also the bare ping app of ``bench.gateway``, so that the
    benchmark's baseline runs under the same server and the same number of workers)."""
    return {
        "host": settings.listen_host(),
        "port": settings.port,
        "workers": worker_count(settings),
        "loop": "uvloop",
        "http": "httptools",
        "access_log": False,
        "log_config": None,
        "timeout_graceful_shutdown": 5,
        # A worker starting on a busy machine (imports, the app) must not be taken for a hung one:
        # the default 5 s kills and respawns workers forever on the shared 2-core machine.
        "timeout_worker_healthcheck": 30,
        "proxy_headers": True,
        "forwarded_allow_ips": settings.forwarded_allow_ips,
    }


def worker_app() -> FastAPI:
    """The app of one worker process (uvicorn's factory: each worker builds its own)."""
    from services.gateway.app import create_app

    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid is not None:
        # A kill -9 of the gateway gives uvicorn no chance to stop its workers: they would keep
        # the port, the database connections and the event subscriptions (tests/faults).
        die_with_parent(parent.pid)

    settings = load()
    configure_logging("gateway", settings.log_level, settings.log_json)
    return create_app(settings)


def main() -> None:
    settings = load()
    configure_logging("gateway", settings.log_level, settings.log_json)
    options = server_options(settings)
    samples = ""
    if options["workers"] > 1 and "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
        # One /metrics for all workers: each writes its samples there, any of them serves the sum.
        samples = os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="cr-gateway-metrics-")
    try:
        uvicorn.run("services.gateway.main:worker_app", factory=True, **options)
    finally:
        if samples:
            shutil.rmtree(samples, ignore_errors=True)


if __name__ == "__main__":
    main()
