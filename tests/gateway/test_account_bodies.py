"""Billing's typed messages as the account and team bodies render them: exact fields and JSON types
(#12: seats and counts are integers, times RFC 3339 UTC strings, "never" null)."""

from __future__ import annotations

from typing import Any

import orjson
from google.protobuf.timestamp_pb2 import Timestamp
from pydantic import BaseModel

from services.api.account import AccountStatus, Usage
from services.contracts.v1 import billing_pb2
from services.gateway.routes.account import plan_list, subscription_result, token_info
from services.gateway.routes.teams import member_info
from services.kit.messages import plain

START, END = 1_796_083_200, 1_798_761_600  # 2026-12-01, 2027-01-01


def body(model: BaseModel) -> Any:
    return orjson.loads(model.model_dump_json())


def caps() -> billing_pb2.UsageAgainstCaps:
    return billing_pb2.UsageAgainstCaps(
        analyses=billing_pb2.MetricUsage(used=2, cap=200, remaining=198),
        repositories=billing_pb2.MetricUsage(used=1, cap=3, remaining=2),
        ai_tokens=billing_pb2.MetricUsage(used=0, cap=-1),
    )


USAGE = {
    "analyses": {"used": 2, "cap": 200, "remaining": 198},
    "repositories": {"used": 1, "cap": 3, "remaining": 2},
    "ai_tokens": {"used": 0, "cap": -1, "remaining": None},
}


def test_account_status() -> None:
    message = billing_pb2.AccountStatus(
        owner="org:o1",
        plan="free",
        plan_name="Free",
        effective_plan="free",
        status="active",
        seats=5,
        cancel_at_period_end=False,
        trial_used=False,
        customer_linked=False,
        rate_limit=billing_pb2.RateLimits(per_minute=120, org_per_minute=600),
        period_start=Timestamp(seconds=START),
        period_end=Timestamp(seconds=END),
        usage=caps(),
    )
    assert body(AccountStatus.model_validate(plain(message))) == {
        "owner": "org:o1",
        "plan": "free",
        "plan_name": "Free",
        "effective_plan": "free",
        "status": "active",
        "seats": 5,  # was 5.0
        "current_period_end": None,  # was 0
        "cancel_at_period_end": False,
        "trial_end": None,
        "trial_used": False,
        "customer_linked": False,
        "rate_limit": {"per_minute": 120, "org_per_minute": 600},
        "period_start": "2026-12-01T00:00:00.000Z",  # were Unix seconds
        "period_end": "2027-01-01T00:00:00.000Z",
        "usage": USAGE,
    }


def test_usage() -> None:
    message = billing_pb2.Usage(
        owner="user:u1",
        plan="free",
        period_start=Timestamp(seconds=START),
        period_end=Timestamp(seconds=END),
        usage=caps(),
        records=[
            billing_pb2.UsageRecord(
                id="ur1",
                metric="analyses",
                amount=1,
                source_id="audit-1",
                detail="file:r1",
                user_id="u1",
                occurred_at=Timestamp(seconds=START + 60),
            )
        ],
    )
    assert body(Usage.model_validate(plain(message))) == {
        "owner": "user:u1",
        "plan": "free",
        "period_start": "2026-12-01T00:00:00.000Z",
        "period_end": "2027-01-01T00:00:00.000Z",
        "usage": USAGE,
        "records": [
            {
                "id": "ur1",
                "metric": "analyses",
                "amount": 1,
                "source_id": "audit-1",
                "detail": "file:r1",
                "user_id": "u1",
                "occurred_at": "2026-12-01T00:01:00.000Z",
            }
        ],
        "truncated": False,
    }


def test_plans_with_and_without_a_price() -> None:
    free = billing_pb2.Plan(
        id="free",
        name="Free",
        paid=False,
        price_available=True,
        caps=billing_pb2.MetricCaps(analyses=200, repositories=3, ai_tokens=0),
        max_seats=5,
        rate_limit_per_minute=120,
        org_rate_limit_per_minute=600,
    )
    pro = billing_pb2.Plan(
        id="pro",
        name="Pro",
        paid=True,
        price_id="price_1",
        price=billing_pb2.Price(
            id="price_1",
            currency="usd",
            unit_amount=2000,
            unit_amount_decimal="2000",
            billing_scheme="per_unit",
            product="prod_1",
            active=True,
            interval="month",
            interval_count=1,
        ),
        price_available=True,
        trial_days=14,
        caps=billing_pb2.MetricCaps(analyses=5000, repositories=50, ai_tokens=2_000_000),
        max_seats=-1,
        rate_limit_per_minute=600,
        org_rate_limit_per_minute=3000,
    )
    team = billing_pb2.Plan(
        id="team", name="Team", paid=True, price_unavailable="no_price_configured", caps=billing_pb2.MetricCaps()
    )
    got = body(plan_list(billing_pb2.PlanList(plans=[free, pro, team], currency_note="smallest unit")))
    assert got["currency_note"] == "smallest unit"
    assert got["plans"][0] == {
        "id": "free",
        "name": "Free",
        "paid": False,
        "price_id": None,
        "price": None,
        "price_available": True,
        "price_unavailable": None,
        "trial_days": 0,
        "caps": {"analyses": 200, "repositories": 3, "ai_tokens": 0},
        "max_seats": 5,
        "rate_limit_per_minute": 120,
        "org_rate_limit_per_minute": 600,
    }
    assert got["plans"][1]["price"] == {
        "id": "price_1",
        "currency": "usd",
        "unit_amount": 2000,
        "unit_amount_decimal": "2000",
        "billing_scheme": "per_unit",
        "product": "prod_1",
        "nickname": None,
        "active": True,
        "interval": "month",
        "interval_count": 1,
    }
    assert got["plans"][1]["price_id"] == "price_1"
    assert (got["plans"][2]["price"], got["plans"][2]["price_unavailable"]) == (None, "no_price_configured")


def test_subscription_token_and_member_times() -> None:
    subscription = billing_pb2.SubscriptionResponse(
        subscription=billing_pb2.Subscription(plan="team", status="active", seats=3, owner="org:o1")
    )
    assert body(subscription_result(subscription)) == {
        "subscription": {
            "plan": "team",
            "status": "active",
            "seats": 3,
            "current_period_end": None,  # was "0": int64 in the JSON mapping
            "cancel_at_period_end": False,
            "customer_id": "",
            "owner": "org:o1",
        }
    }
    token = billing_pb2.PersonalToken(id="t1", name="ci", prefix="crp_ab", created_at=START, expires_at=0)
    assert body(token_info(token)) == {
        "id": "t1",
        "name": "ci",
        "prefix": "crp_ab",
        "created_at": "2026-12-01T00:00:00.000Z",  # was "1796083200"
        "expires_at": None,
        "last_used_at": None,
    }
    member = billing_pb2.Member(
        id="m1", user_id="u1", login="ann", email="", role="member", status="invited", joined_at=START
    )
    assert body(member_info(member))["joined_at"] == "2026-12-01T00:00:00.000Z"
