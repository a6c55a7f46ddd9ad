"""Usage: counted once per analysis and per AI call, reported against the plan's caps."""

from __future__ import annotations

import asyncio
import time

import pytest

from services.billing import usage
from services.billing.models import Subscription, inbox
from services.contracts.v1 import billing_pb2, common_pb2, events_pb2
from services.kit.bus import SUBJECT_ANALYSIS_COMPLETED, Bus
from services.kit.errors import ServiceError
from services.kit.inbox import EventConsumer
from services.kit.outbox import envelope
from tests.billing.conftest import Billing, unique


async def on_plan(billing: Billing, owner: str, plan: str) -> None:
    now = int(time.time())
    async with billing.db.session() as session:
        session.add(
            Subscription(
                owner=owner,
                plan=plan,
                status="active",
                subscription_id=f"sub_{unique('t')}",
                current_period_start=now - 3600,
                current_period_end=now + 3600,
            )
        )


async def get_usage(billing: Billing, principal: common_pb2.Principal, org_id: str = "") -> billing_pb2.Usage:
    return await billing.call("GetUsage", billing_pb2.AccountRequest(org_id=org_id), principal)


async def test_analysis_completed_is_counted_once(billing: Billing, bus: Bus) -> None:
    org = unique("analysts")
    _, admin = await billing.user(org=org)
    org_id = billing.org_id(admin, org)
    consumer = EventConsumer(bus, billing.db, inbox, unique("usage"), SUBJECT_ANALYSIS_COMPLETED, service="test")
    task = asyncio.create_task(consumer.consume(usage.record_analysis))
    try:
        completed = events_pb2.AnalysisCompleted(
            audit_id="audit-1", repository_id="r1", owner=f"org:{org_id}", kind="file", user_id=admin.user_id
        )
        env = envelope("analysis.completed", completed)
        # Redelivered (same envelope), and republished under a new envelope: still one analysis.
        await bus.publish(SUBJECT_ANALYSIS_COMPLETED, env.SerializeToString(), msg_id="m1")
        await bus.publish(SUBJECT_ANALYSIS_COMPLETED, env.SerializeToString(), msg_id="m2")
        again = envelope("analysis.completed", completed)
        await bus.publish(SUBJECT_ANALYSIS_COMPLETED, again.SerializeToString(), msg_id="m3")
        other = envelope("analysis.completed", events_pb2.AnalysisCompleted(audit_id="audit-2", owner=f"org:{org_id}"))
        await bus.publish(SUBJECT_ANALYSIS_COMPLETED, other.SerializeToString(), msg_id="m4")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            body = await get_usage(billing, admin, org_id)
            if body.usage.analyses.used >= 2:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)  # let any stray duplicate land before counting
        body = await get_usage(billing, admin, org_id)
    finally:
        consumer.stop()  # the fetch loop ends within its 1 s poll
        await asyncio.wait_for(task, 5)
    assert body.usage.analyses.used == 2
    assert sorted(r.source_id for r in body.records) == ["audit-1", "audit-2"]


async def test_quota_errors_name_the_plan_and_cap(billing: Billing) -> None:
    _, me = await billing.user()
    owner = f"user:{me.user_id}"
    await on_plan(billing, owner, "tiny")  # caps: analyses 2, ai_tokens 0
    async with billing.db.session() as session:
        for i in range(2):
            await usage.record_analysis(
                session,
                envelope("analysis.completed", events_pb2.AnalysisCompleted(audit_id=f"q{i}", owner=owner)),
            )
    report = await billing.call("CheckQuota", billing_pb2.CheckQuotaRequest(owner=owner, metric="analyses"), me)
    assert (report.used, report.cap, report.allowed, report.plan) == (2, 2, False, "tiny")
    with pytest.raises(ServiceError) as err:
        await billing.call("CheckQuota", billing_pb2.CheckQuotaRequest(owner=owner, metric="analyses", amount=1), me)
    assert err.value.code == "quota_exceeded"
    assert err.value.http_status == 429
    assert 0 < err.value.details["retry_after"] <= 3600
    with pytest.raises(ServiceError) as err:
        await billing.call("CheckQuota", billing_pb2.CheckQuotaRequest(owner=owner, metric="ai_tokens", amount=1), me)
    assert err.value.code == "plan_required"
    ok = await billing.call(
        "CheckQuota", billing_pb2.CheckQuotaRequest(owner=owner, metric="repositories", amount=1), me
    )
    assert ok.allowed
    with pytest.raises(ServiceError) as err:
        await billing.call(
            "CheckQuota", billing_pb2.CheckQuotaRequest(owner=owner, metric="repositories", amount=2), me
        )
    # Repositories are not refilled by a new period: more of them needs another plan.
    assert err.value.code == "plan_required"
    assert err.value.http_status == 403
    assert err.value.details == {"metric": "repositories", "used": 1, "cap": 1, "plan": "tiny"}


async def test_quota_of_someone_else_is_forbidden(billing: Billing) -> None:
    _, me = await billing.user()
    _, other = await billing.user()
    with pytest.raises(ServiceError) as err:
        await billing.call(
            "CheckQuota", billing_pb2.CheckQuotaRequest(owner=f"user:{other.user_id}", metric="analyses"), me
        )
    assert err.value.code == "forbidden"
    # A worker without a user principal may ask (internal callers only; the gateway never exposes it).
    reply = await billing.call(
        "CheckQuota", billing_pb2.CheckQuotaRequest(owner=f"user:{other.user_id}", metric="analyses")
    )
    assert reply.allowed


async def test_ai_usage_is_recorded_once_per_call(billing: Billing) -> None:
    _, me = await billing.user()
    request = billing_pb2.RecordAiUsageRequest(request_id="ai-1", prompt_tokens=12, completion_tokens=30, model="m")
    await billing.call("RecordAiUsage", request, me)
    await billing.call("RecordAiUsage", request, me)  # a retried call
    body = await get_usage(billing, me)
    assert body.usage.ai_tokens.used == 42
    assert [r.detail for r in body.records] == ["m:12+30"]
    reply = await billing.call("GetAccountStatus", billing_pb2.AccountRequest(), me)
    assert reply.usage.ai_tokens.used == 42
