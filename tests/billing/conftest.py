"""Billing in process: its gRPC server on a fresh database (one per test module, tests keep
apart by unique names), pointed at the stand-ins for Stripe and the code host."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest

from services.billing.deps import BillingDeps
from services.billing.plans import PlanConfig
from services.billing.servicer import BillingServicer
from services.billing.settings import BillingSettings
from services.contracts.v1 import billing_pb2, billing_pb2_grpc, common_pb2
from services.kit.db import Database
from services.kit.grpc_client import call, make_channel
from services.kit.grpc_server import GrpcServer
from tests.conftest import DatabaseFactory
from tests.standins import accounts
from tests.standins.accounts import PLANS, StandIns


def unique(name: str) -> str:
    return f"{name}-{secrets.token_hex(3)}"


@pytest.fixture(scope="session")
def standins() -> StandIns:
    return accounts.start()


def settings_for(database_url: str, standins: StandIns, **overrides: Any) -> BillingSettings:
    env = standins.env()
    fields: dict[str, Any] = {
        "database_url": database_url,
        "stripe_api_key": env["CR_BILLING_STRIPE_API_KEY"],
        "stripe_api_base": env["CR_BILLING_STRIPE_API_BASE"],
        "host_oauth_base_url": env["CR_BILLING_HOST_OAUTH_BASE_URL"],
        "host_api_base_url": env["CR_BILLING_HOST_API_BASE_URL"],
        "host_client_id": env["CR_BILLING_HOST_CLIENT_ID"],
        "host_client_secret": env["CR_BILLING_HOST_CLIENT_SECRET"],
        "plans": [PlanConfig.model_validate(p) for p in PLANS],
        "price_cache_seconds": 60,
    }
    fields.update(overrides)
    return BillingSettings(**fields)


class Billing:
    """The servicer behind a real gRPC round trip, with helpers to make callers."""

    def __init__(self, deps: BillingDeps, stub: billing_pb2_grpc.BillingServiceAsyncStub, address: str) -> None:
        self.deps = deps
        self.stub = stub
        self.address = address
        self.db: Database = deps.db
        self.woken = 0

    async def call(self, method: str, request: Any, principal: common_pb2.Principal | None = None) -> Any:
        return await call(getattr(self.stub, method), request, principal=principal)

    async def user(self, login: str = "", org: str = "", role: str = "team-admin") -> tuple[str, common_pb2.Principal]:
        """A new user (optionally in an organization) and their principal, as the gateway sees it."""
        created = await self.call(
            "CreateUser", billing_pb2.CreateUserRequest(login=login or unique("user"), org_name=org, org_role=role)
        )
        return created.token, await self.principal(created.token)

    async def principal(self, token: str) -> common_pb2.Principal:
        return (await self.call("ValidateToken", billing_pb2.ValidateTokenRequest(token=token))).principal

    @staticmethod
    def org_id(principal: common_pb2.Principal, name: str) -> str:
        return next(m.org_id for m in principal.memberships if m.org_name == name)


async def start_billing(database_url: str, settings: BillingSettings) -> tuple[Billing, GrpcServer]:
    db = Database(database_url)
    deps = BillingDeps.build(db, settings)
    server = GrpcServer("billing", "127.0.0.1:0")
    server.add(billing_pb2_grpc.add_BillingServiceServicer_to_server, BillingServicer(deps), "BillingService")
    port = await server.start()
    channel = make_channel(f"127.0.0.1:{port}", billing_pb2.DESCRIPTOR.services_by_name["BillingService"])
    billing = Billing(deps, billing_pb2_grpc.BillingServiceStub(channel), f"127.0.0.1:{port}")

    def wake() -> None:
        billing.woken += 1

    deps.wake = wake
    billing._channel = channel  # type: ignore[attr-defined]
    return billing, server


@pytest.fixture(scope="module")
async def billing(databases: DatabaseFactory, standins: StandIns) -> AsyncIterator[Billing]:
    url = databases.create("billing")
    running, server = await start_billing(url, settings_for(url, standins))
    yield running
    await running._channel.close()  # type: ignore[attr-defined]
    await server.server.stop(0)
    await running.db.dispose()


@pytest.fixture(scope="module")
async def default_billing(databases: DatabaseFactory, standins: StandIns) -> AsyncIterator[Billing]:
    """Billing with the hosted mode's built-in catalogue, as a fresh hosted deployment has it
    (no provider prices)."""
    url = databases.create("billing", "defaults")
    running, server = await start_billing(url, settings_for(url, standins, plans=None, mode="hosted"))
    yield running
    await running._channel.close()  # type: ignore[attr-defined]
    await server.server.stop(0)
    await running.db.dispose()


@pytest.fixture(scope="module")
async def self_hosted_billing(databases: DatabaseFactory, standins: StandIns) -> AsyncIterator[Billing]:
    """Billing as an install without billing configuration has it: no mode, no plans set."""
    url = databases.create("billing", "self_hosted")
    settings = settings_for(url, standins, plans=None)
    assert "mode" not in settings.model_fields_set  # the default is what is under test
    running, server = await start_billing(url, settings)
    yield running
    await running._channel.close()  # type: ignore[attr-defined]
    await server.server.stop(0)
    await running.db.dispose()
