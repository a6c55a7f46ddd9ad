"""The analyzer's quota gate against the real billing service: plan caps refuse analyses."""

from __future__ import annotations

import asyncio

import pytest

from services.analyzer.quota import QuotaGate
from services.billing.plans import PlanConfig
from services.contracts.v1 import events_pb2
from services.devrun.infra import free_port
from services.kit.bus import SUBJECT_SUBSCRIPTION_CHANGED
from services.kit.errors import ServiceError
from services.kit.outbox import event_row
from tests.billing.conftest import settings_for, start_billing
from tests.standins.accounts import PLANS


@pytest.fixture
async def capped_billing(databases, standins):
    # The free plan of this catalogue includes no analyses at all.
    plans = [PlanConfig.model_validate({**p, "caps": {**p["caps"], "analyses": 0}}) for p in PLANS]
    url = databases.create("billing", "quota")
    running, server = await start_billing(url, settings_for(url, standins, plans=plans))
    yield running
    await running._channel.close()
    await server.server.stop(0)
    await running.db.dispose()


async def test_plan_without_analyses_is_refused_and_the_answer_is_remembered(capped_billing) -> None:
    _, principal = await capped_billing.user()
    gate = QuotaGate(capped_billing.address, ttl=60)
    owner = f"user:{principal.user_id}"
    with pytest.raises(ServiceError) as first:
        await gate.ensure(owner)
    assert first.value.code == "plan_required"
    assert first.value.http_status == 403
    with pytest.raises(ServiceError):
        await gate.ensure(owner)
    assert gate.asked == 1  # the second refusal came from memory
    await gate.close()


async def test_generous_plan_allows_and_unclaimed_repositories_pass(billing) -> None:
    _, principal = await billing.user()
    gate = QuotaGate(billing.address)
    await gate.ensure(f"user:{principal.user_id}")
    await gate.ensure("")
    assert gate.asked == 1
    await gate.close()


async def test_unreachable_billing_fails_open() -> None:
    gate = QuotaGate(f"127.0.0.1:{free_port()}", deadline=0.5)
    await gate.ensure("user:someone")  # no exception: a billing outage must not stop reviews
    await gate.close()


async def test_a_change_of_plan_drops_the_remembered_refusal_on_every_replica(capped_billing, bus) -> None:
    _, principal = await capped_billing.user()
    owner = f"user:{principal.user_id}"
    replicas = [QuotaGate(capped_billing.address, ttl=600) for _ in range(2)]
    for gate in replicas:
        with pytest.raises(ServiceError):
            await gate.ensure(owner)
        await bus.watch(SUBJECT_SUBSCRIPTION_CHANGED, gate.on_subscription_changed)
    changed = events_pb2.SubscriptionChanged(owner=owner, plan="pro", status="active", seats=1)
    row = event_row(SUBJECT_SUBSCRIPTION_CHANGED, "subscription.changed", changed)
    await bus.publish(SUBJECT_SUBSCRIPTION_CHANGED, bytes(row["payload"]), str(row["id"]))
    for _ in range(50):
        if all(owner not in gate._answers for gate in replicas):
            break
        await asyncio.sleep(0.05)
    for gate in replicas:
        with pytest.raises(ServiceError):
            await gate.ensure(owner)  # billing still refuses (the plan did not really change) ...
        assert gate.asked == 2  # ... but each replica asked again instead of answering from memory
        await gate.close()
