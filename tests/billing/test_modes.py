"""The two deployment modes against the real billing service: a self-hosted install (no mode or
plans configured, as `make run` starts it) has no caps and rate limits that only protect the
server; the hosted mode keeps the plans it sells; an operator's catalogue replaces either."""

from __future__ import annotations

import json

import pytest

from services.billing.plans import METRICS, UNLIMITED
from services.billing.settings import BillingSettings
from services.contracts.v1 import billing_pb2
from services.kit.errors import ServiceError
from tests.billing.conftest import Billing


async def check(billing: Billing, owner: str, metric: str, amount: int) -> billing_pb2.CheckQuotaResponse:
    return await billing.call("CheckQuota", billing_pb2.CheckQuotaRequest(owner=owner, metric=metric, amount=amount))  # type: ignore[no-any-return]


async def test_self_hosted_has_no_caps_and_a_protective_rate_limit(self_hosted_billing: Billing) -> None:
    _, me = await self_hosted_billing.user()
    owner = f"user:{me.user_id}"
    status = await self_hosted_billing.call("GetAccountStatus", billing_pb2.AccountRequest(), principal=me)
    assert (status.plan, status.plan_name) == ("free", "Self-hosted")
    for metric in METRICS:
        assert getattr(status.usage, metric).cap == UNLIMITED
    # Far past every hosted cap (200 analyses, 3 repositories, no AI): all allowed.
    for metric, amount in (("analyses", 100_000), ("repositories", 1_000), ("ai_tokens", 10_000_000)):
        reply = await check(self_hosted_billing, owner, metric, amount)
        assert reply.allowed, metric
        assert reply.cap == UNLIMITED
    assert reply.rate_limit_per_minute == 1200  # a limit, sized for the server, not for a price
    plans = await self_hosted_billing.call("ListPlans", billing_pb2.ListPlansRequest(), principal=me)
    assert [p.id for p in plans.plans] == ["free"]


async def test_hosted_keeps_the_plans_it_sells(default_billing: Billing) -> None:
    _, me = await default_billing.user()
    owner = f"user:{me.user_id}"
    status = await default_billing.call("GetAccountStatus", billing_pb2.AccountRequest(), principal=me)
    assert (status.plan, status.plan_name) == ("free", "Free")
    assert (status.usage.analyses.cap, status.usage.repositories.cap) == (200, 3)
    with pytest.raises(ServiceError) as refused:
        await check(default_billing, owner, "analyses", 201)
    assert refused.value.code == "quota_exceeded"
    assert refused.value.details["cap"] == 200
    assert (await check(default_billing, owner, "analyses", 1)).rate_limit_per_minute == 120
    plans = await default_billing.call("ListPlans", billing_pb2.ListPlansRequest(), principal=me)
    assert [p.id for p in plans.plans] == ["free", "pro", "team"]


@pytest.mark.parametrize("mode", ["self_hosted", "hosted"])
def test_the_operators_catalogue_replaces_the_modes_defaults(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    own = [{"id": "free", "name": "Staff", "caps": {"analyses": 50}, "rate_limit_per_minute": 300}]
    monkeypatch.setenv("CR_BILLING_MODE", mode)
    monkeypatch.setenv("CR_BILLING_PLANS", json.dumps(own))
    (plan,) = BillingSettings().catalogue_plans
    assert (plan.name, plan.cap("analyses"), plan.cap("repositories"), plan.rate_limit_per_minute) == (
        "Staff",
        50,
        UNLIMITED,
        300,
    )


def test_the_mode_is_self_hosted_unless_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CR_BILLING_MODE", raising=False)
    monkeypatch.delenv("CR_BILLING_PLANS", raising=False)
    settings = BillingSettings()
    assert settings.mode == "self_hosted"
    assert [p.name for p in settings.catalogue_plans] == ["Self-hosted"]
    monkeypatch.setenv("CR_BILLING_MODE", "hosted")
    assert [p.id for p in BillingSettings().catalogue_plans] == ["free", "pro", "team"]
