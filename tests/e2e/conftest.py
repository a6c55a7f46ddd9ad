from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import SESSION, DatabaseFactory, scratch_dir
from tests.e2e.harness import RunningSystem, build_system


@pytest.fixture(scope="session")
def system(databases: DatabaseFactory, nats_url: str) -> Iterator[RunningSystem]:
    urls = {name: databases.create(name, "e2e") for name in ("billing", "indexer", "analyzer", "hostapp")}
    running = build_system(nats_url, urls, f"E{SESSION}".upper(), scratch_dir("cr-e2e-"))
    try:
        running.start(timeout=180)  # a loaded 2-core machine starts five services slowly
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="session")
def http(system: RunningSystem) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=system.url, timeout=30) as client:
        yield client


def admin_token(system: RunningSystem, login: str, org: str = "", role: str = "team-admin") -> str:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "services.billing.admin", "create-user", login, "--org", org, "--role", role],
        env=system.env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return next(line.split("=", 1)[1] for line in out.splitlines() if line.startswith("token="))
