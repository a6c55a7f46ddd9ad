"""What the end-to-end benchmarks start (PostgreSQL, NATS, one database per service) and undo.

The local servers are reused when they answer (or the ``CR_*_URL`` variables name them); else
embedded ones start from their wheels under the run's work folder.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

from services.devrun.infra import (
    SERVICES_WITH_DB,
    EmbeddedNats,
    EmbeddedPostgres,
    create_databases,
    database_url,
    drop_databases,
    port_open,
)
from services.devrun.system import ROOT
from services.kit import migrations
from services.kit.bus import Bus


class Stack:
    """What was started, undone in reverse order whatever happens."""

    def __init__(self) -> None:
        self.undo: list[tuple[str, Callable[[], object]]] = []

    def push(self, label: str, fn: Callable[[], object]) -> None:
        self.undo.append((label, fn))

    def close(self) -> None:
        while self.undo:
            label, fn = self.undo.pop()
            try:
                fn()
            except Exception as exc:  # cleanup goes on; the failure is reported
                print(f"cleanup: {label} failed: {exc}", file=sys.stderr)


def postgres(stack: Stack, work: Path) -> str:
    url = os.environ.get("CR_POSTGRES_URL") or os.environ.get("CR_TEST_POSTGRES_URL")
    if url:
        return url
    if port_open("127.0.0.1", 5432):
        return "postgresql://postgres@127.0.0.1:5432/postgres"
    server = EmbeddedPostgres(work / "pg")
    url = server.start()
    stack.push("embedded postgres", server.stop)
    return url


def nats(stack: Stack, work: Path) -> str:
    url = os.environ.get("CR_NATS_URL") or os.environ.get("CR_TEST_NATS_URL")
    if url:
        return url
    if port_open("127.0.0.1", 4222):
        return "nats://127.0.0.1:4222"
    server = EmbeddedNats(work / "nats")
    url = server.start()
    stack.push("embedded nats", server.stop)
    return url


def service_databases(stack: Stack, server: str, tag: str) -> dict[str, str]:
    """A fresh, migrated database per service (``<tag>_<service>``), dropped when the stack closes."""
    names = {name: f"{tag}_{name}" for name in SERVICES_WITH_DB}
    stack.push("drop databases", lambda: drop_databases(server, list(names.values())))
    create_databases(server, list(names.values()), recreate=True)
    urls = {name: database_url(server, db) for name, db in names.items()}
    for name, url in urls.items():
        migrations.upgrade(ROOT / "services" / name, url)
    return urls


async def delete_streams(nats_url: str, prefix: str) -> None:
    logging.getLogger("services.kit.bus").setLevel(logging.ERROR)  # no "disconnected" on close
    bus = Bus(nats_url, prefix)
    await bus.connect()
    try:
        await bus.delete_streams()
    finally:
        await bus.close()
