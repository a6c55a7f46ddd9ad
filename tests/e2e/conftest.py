from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from services.devrun.system import SystemLayout
from tests.conftest import SESSION, DatabaseFactory
from tests.e2e.harness import RunningSystem
from tests.standins import accounts as account_standins
from tests.standins.github_api import e2e_standin as github_standin


@pytest.fixture(scope="session")
def system(databases: DatabaseFactory, nats_url: str) -> Iterator[RunningSystem]:
    urls = {name: databases.create(name, "e2e") for name in ("billing", "indexer", "analyzer", "hostapp")}
    work = Path(tempfile.mkdtemp(prefix="cr-e2e-"))
    layout = SystemLayout(
        nats_url=nats_url,
        database_urls=urls,
        stream_prefix=f"E{SESSION}".upper(),
        data_dir=work / "data",
        extra_env={
            "CR_GATEWAY_CODE_HOST_WEBHOOK_SECRET": "e2e-code-host-secret",
            "CR_GATEWAY_PAYMENT_WEBHOOK_SECRET": "whsec_e2e",
            "CR_INDEXER_ALLOWED_ROOTS": str(work / "repos"),
            "CR_LOG_JSON": "true",
            # Stripe, the code host's OAuth/user API and an AI upstream, as local stand-ins (tests/standins).
            **account_standins.start().env(),
            # The GitHub REST API of the hostapp (app JWT, installation tokens, PRs, checks, reviews).
            **github_standin().env(),
            # Short job leases so a killed hostapp's job is redelivered within seconds.
            "CR_HOSTAPP_JOB_ACK_WAIT_SECONDS": "4",
            "CR_HOSTAPP_JOB_RETRY_DELAY_SECONDS": "1",
        },
    )
    (work / "repos").mkdir()
    running = RunningSystem(layout, work / "logs")
    running.work = work  # type: ignore[attr-defined]
    try:
        running.start()
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
