"""Hostapp test fixtures: a fresh hostapp database, the GitHub stand-in, payload fixtures."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from sqlalchemy import select, text

from services.hostapp import queries, webhooks
from services.hostapp.deliveries import DeliveryProcessor
from services.hostapp.intake import Intake
from services.hostapp.models import Base, InstallationRepository, PrJob, WebhookDelivery
from services.hostapp.settings import HostAppSettings
from services.kit.db import Database
from tests.conftest import DatabaseFactory
from tests.standins.github_api import FIXTURES, GitHubStandIn


def payload(name: str, **changes: Any) -> dict[str, Any]:
    """A webhook payload fixture (octokit/webhooks), optionally with top-level changes."""
    body = json.loads((FIXTURES / f"{name}.json").read_text())
    body.update(changes)
    return body


def raw(name: str) -> bytes:
    return (FIXTURES / f"{name}.json").read_bytes()


@pytest.fixture(scope="session")
def standin_server() -> Iterator[GitHubStandIn]:
    server = GitHubStandIn()
    yield server
    server.close()


@pytest.fixture
def standin(standin_server: GitHubStandIn) -> GitHubStandIn:
    standin_server.reset()
    return standin_server


@pytest.fixture(scope="session")
async def hostapp_db(databases: DatabaseFactory) -> AsyncIterator[Database]:
    # One database built by the migrations for these tests; dropping a database costs
    # over a second, so each test empties it at the start instead of getting its own.
    database = Database(databases.create("hostapp", "unit"))
    yield database
    await database.dispose()


@pytest.fixture
async def db(hostapp_db: Database) -> Database:
    tables = ", ".join(t.name for t in Base.metadata.sorted_tables)
    async with hostapp_db.session() as session:
        await session.execute(text(f"TRUNCATE {tables}"))
    return hostapp_db


def settings_for(standin: GitHubStandIn, **overrides: Any) -> HostAppSettings:
    values: dict[str, Any] = {
        "github_api_url": standin.url,
        "app_id": standin.app_id,
        "private_key": standin.private_key_pem,
        "job_ack_wait_seconds": 3.0,
        "job_retry_delay_seconds": 0.5,
        "grpc_deadline_seconds": 5.0,
    }
    values.update(overrides)
    return HostAppSettings(**values)


async def records(db: Database) -> dict[tuple[int, str], str]:
    async with db.session() as session:
        rows = (await session.execute(select(InstallationRepository))).scalars()
        return {(r.installation_id, r.full_name): r.status for r in rows}


async def all_jobs(db: Database) -> list[PrJob]:
    async with db.session() as session:
        return list((await session.execute(select(PrJob).order_by(PrJob.created_at))).scalars())


async def deliveries(db: Database) -> dict[str, WebhookDelivery]:
    async with db.session() as session:
        return {d.delivery_id: d for d in (await session.execute(select(WebhookDelivery))).scalars()}


async def deliver_and_process(
    db: Database, event: str, body: bytes, delivery_id: str = "", *, processor: DeliveryProcessor | None = None
) -> webhooks.Outcome:
    """A signed delivery as hostapp takes it: recorded and answered (``Intake``), then applied
    by the delivery processor; the outcome the processor stored for it."""
    delivery_id = delivery_id or str(uuid.uuid4())
    receipt = await Intake(db).receive(delivery_id, event, body)
    outcomes = await (processor or DeliveryProcessor(db)).process_pending()
    if receipt.duplicate:
        async with db.session() as session:
            recorded = await queries.delivery(session, delivery_id)
        return webhooks.Outcome(
            False, "duplicate delivery", (recorded.job_id or "") if recorded else "", duplicate=True
        )
    return outcomes[delivery_id]
