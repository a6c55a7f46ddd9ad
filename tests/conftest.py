"""Test infrastructure: fresh databases on the local PostgreSQL and isolated NATS streams.

PostgreSQL and NATS are the ones on 127.0.0.1 (5432, 4222) when they answer; otherwise
an embedded server from the wheels starts for the test session.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from services.devrun.infra import (
    EmbeddedNats,
    EmbeddedPostgres,
    create_databases,
    drop_databases,
    port_open,
)
from services.kit import migrations
from services.kit.bus import Bus
from services.kit.db import Database

ROOT = Path(__file__).resolve().parents[1]
SESSION = secrets.token_hex(3)
SCRATCH: list[Path] = []


def scratch_dir(prefix: str) -> Path:
    """A directory in the system temp dir for what outlives one test (an embedded server's data,
    a running system's logs). Not pytest's tmp_path: as root the embedded PostgreSQL runs as its
    own user, which must reach it. Removed when the session passes; kept for a post-mortem when
    it fails."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    SCRATCH.append(path)
    return path


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus == 0:
        for path in SCRATCH:
            shutil.rmtree(path, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int) -> None:
    if exitstatus != 0 and SCRATCH:
        terminalreporter.write_line(f"kept for the post-mortem: {' '.join(map(str, SCRATCH))}")


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    url = os.environ.get("CR_TEST_POSTGRES_URL")
    if url:
        yield url
        return
    if port_open("127.0.0.1", 5432):
        yield "postgresql://postgres@127.0.0.1:5432/postgres"
        return
    server = EmbeddedPostgres(scratch_dir("cr-test-pg-") / "data")
    yield server.start()
    server.stop()


@pytest.fixture(scope="session")
def nats_url() -> Iterator[str]:
    url = os.environ.get("CR_TEST_NATS_URL")
    if url:
        yield url
        return
    if port_open("127.0.0.1", 4222):
        yield "nats://127.0.0.1:4222"
        return
    server = EmbeddedNats(scratch_dir("cr-test-nats-"))
    yield server.start()
    server.stop()


class DatabaseFactory:
    """Fresh databases named after the test session, built by running the migrations."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url
        self.created: list[str] = []

    def url(self, name: str) -> str:
        return self.server_url.rpartition("/")[0] + "/" + name

    def create(self, service: str, label: str = "") -> str:
        name = f"t{SESSION}_{service}{'_' + label if label else ''}_{len(self.created)}"
        create_databases(self.server_url, [name], recreate=True)
        self.created.append(name)
        url = self.url(name)
        migrations.upgrade(ROOT / "services" / service, url)
        return url.replace("postgresql://", "postgresql+psycopg://", 1)

    def drop_all(self) -> None:
        drop_databases(self.server_url, self.created)


@pytest.fixture(scope="session")
def databases(pg_server_url: str) -> Iterator[DatabaseFactory]:
    factory = DatabaseFactory(pg_server_url)
    yield factory
    factory.drop_all()


@pytest.fixture
def stream_prefix() -> str:
    return f"T{SESSION}{secrets.token_hex(3)}".upper()


@pytest.fixture
async def bus(nats_url: str, stream_prefix: str) -> AsyncIterator[Bus]:
    b = Bus(nats_url, stream_prefix)
    await b.connect()
    await b.ensure_streams()
    yield b
    await b.delete_streams()
    await b.close()


@pytest.fixture
async def make_db(databases: DatabaseFactory) -> AsyncIterator:
    opened: list[Database] = []

    def make(service: str) -> Database:
        db = Database(databases.create(service))
        opened.append(db)
        return db

    yield make
    for db in opened:
        await db.dispose()
