"""Usage: records from analysis-completed events and the AI proxy (each counted once, by its
natural key), the current billing period, and quota checks against the plan's caps."""

from __future__ import annotations

import calendar
import logging
import time
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from services.billing import queries
from services.billing.access import split_owner
from services.billing.models import Subscription
from services.billing.plans import METRICS, UNLIMITED, Catalogue, PlanConfig, effective_plan_id
from services.contracts.v1 import billing_pb2, common_pb2, events_pb2
from services.kit.db import Database
from services.kit.errors import ServiceError
from services.kit.identity import can_access_owner, owner_of_user
from services.kit.inbox import PermanentError
from services.kit.messages import timestamp_of_seconds

log = logging.getLogger(__name__)
MAX_RECORDS = 1000


def calendar_month(now: int) -> tuple[int, int]:
    day = datetime.fromtimestamp(now, UTC)
    start = datetime(day.year, day.month, 1, tzinfo=UTC)
    days = calendar.monthrange(day.year, day.month)[1]
    return int(start.timestamp()), int(start.timestamp()) + days * 86400


def current_period(row: Subscription | None, now: int) -> tuple[int, int]:
    """The provider's billing period while a paid plan applies; the calendar month otherwise."""
    if (
        row is not None
        and effective_plan_id(row.plan, row.status) == row.plan
        and row.current_period_start <= now < row.current_period_end
    ):
        return row.current_period_start, row.current_period_end
    return calendar_month(now)


def plan_of(row: Subscription | None, catalogue: Catalogue) -> PlanConfig:
    return catalogue.get(effective_plan_id(row.plan, row.status)) if row else catalogue.free


def _metric_usage(cap: int, used: int | None) -> billing_pb2.MetricUsage:
    remaining = None if cap == UNLIMITED or used is None else max(0, cap - used)
    return billing_pb2.MetricUsage(used=used, cap=cap, remaining=remaining)


async def usage_against_caps(
    session: AsyncSession, owner: str, row: Subscription | None, catalogue: Catalogue, now: int
) -> tuple[int, int, billing_pb2.UsageAgainstCaps]:
    """The current period (start, end) and each metric's use against the plan's cap in it."""
    start, end = current_period(row, now)
    totals = await queries.usage_totals(session, owner, start, end)
    plan = plan_of(row, catalogue)
    # Billing does not count repositories (the indexer does): it only knows the cap.
    usage = billing_pb2.UsageAgainstCaps(
        **{
            metric: _metric_usage(plan.cap(metric), None if metric == "repositories" else totals.get(metric, 0))
            for metric in METRICS
        }
    )
    return start, end, usage


async def usage_report(
    session: AsyncSession, owner: str, row: Subscription | None, catalogue: Catalogue
) -> billing_pb2.Usage:
    start, end, usage = await usage_against_caps(session, owner, row, catalogue, int(time.time()))
    records = await queries.usage_records(session, owner, start, end, MAX_RECORDS)
    return billing_pb2.Usage(
        owner=owner,
        plan=plan_of(row, catalogue).id,
        period_start=timestamp_of_seconds(start),
        period_end=timestamp_of_seconds(end),
        usage=usage,
        records=[
            billing_pb2.UsageRecord(
                id=r.id,
                metric=r.metric,
                amount=r.amount,
                source_id=r.source_id,
                detail=r.detail,
                user_id=r.user_id,
                occurred_at=timestamp_of_seconds(r.occurred_at),
            )
            for r in records
        ],
        truncated=len(records) >= MAX_RECORDS,
    )


async def check_quota(
    db: Database, catalogue: Catalogue, principal: common_pb2.Principal | None, owner: str, metric: str, amount: int
) -> billing_pb2.CheckQuotaResponse:
    split_owner(owner)
    # Services call this on behalf of a user (principal in metadata) or from a worker (none).
    if principal is not None and not can_access_owner(principal, owner):
        raise ServiceError("forbidden", "the caller cannot act for this owner", {"owner": owner})
    if metric not in METRICS:
        raise ServiceError("validation_failed", f"metric must be one of {', '.join(METRICS)}", {"field": "metric"})
    if amount < 0:
        raise ServiceError("validation_failed", "amount must not be negative", {"field": "amount"})
    now = int(time.time())
    async with db.session() as session:
        row = await queries.subscription_for(session, owner)
        plan = plan_of(row, catalogue)
        cap = plan.cap(metric)
        start, end = current_period(row, now)
        if metric == "repositories":
            used = max(0, amount - 1)  # the caller passes the total it would reach
            needed = amount
        else:
            used = (await queries.usage_totals(session, owner, start, end)).get(metric, 0)
            needed = used + amount
    response = billing_pb2.CheckQuotaResponse(
        allowed=True, used=used, cap=cap, plan=plan.id, rate_limit_per_minute=plan.rate_limit_per_minute
    )
    if amount == 0:  # a report: would one more unit fit?
        response.allowed = cap == UNLIMITED or used < cap
        return response
    if cap == UNLIMITED or needed <= cap:
        return response
    details = {"metric": metric, "used": used, "cap": cap, "plan": plan.id}
    if metric == "repositories":
        # Not a quota that a new period refills: only another plan makes room.
        raise ServiceError(
            "plan_required", f"the {plan.name} plan allows {cap} repositories ({used} registered)", details
        )
    if cap == 0:
        raise ServiceError("plan_required", f"the {plan.name} plan does not include {metric}", details)
    retry = max(1, end - now)
    raise ServiceError(
        "quota_exceeded",
        f"{metric} cap of the {plan.name} plan reached ({used}/{cap})",
        {**details, "retry_after": retry},
    )


async def record_analysis(session: AsyncSession, env: events_pb2.EventEnvelope) -> None:
    """Consumer handler of analysis.completed: one 'analyses' unit per audit."""
    try:
        event = events_pb2.AnalysisCompleted.FromString(env.payload)
    except Exception as exc:
        raise PermanentError(f"undecodable AnalysisCompleted: {exc}") from exc
    if not event.owner or not event.audit_id:
        log.warning("analysis.completed %s without owner or audit id: not counted", env.id)
        return
    await queries.add_usage(
        session,
        {
            "owner": event.owner,
            "metric": "analyses",
            "amount": 1,
            "source_id": event.audit_id[:100],
            "detail": f"{event.kind}:{event.repository_id}"[:200],
            "user_id": event.user_id[:32],
            "occurred_at": env.occurred_at // 1000 if env.occurred_at else int(time.time()),
        },
    )


async def record_ai(db: Database, principal: common_pb2.Principal, request: billing_pb2.RecordAiUsageRequest) -> None:
    """``RecordAiUsage``: the caller's own account is charged for the tokens."""
    if not request.request_id:
        raise ServiceError("validation_failed", "request_id is required (the dedupe key)", {"field": "request_id"})
    tokens = max(0, request.prompt_tokens) + max(0, request.completion_tokens)
    async with db.session() as session:
        await queries.add_usage(
            session,
            {
                "owner": owner_of_user(principal.user_id),
                "metric": "ai_tokens",
                "amount": tokens,
                "source_id": request.request_id[:100],
                "detail": f"{request.model}:{request.prompt_tokens}+{request.completion_tokens}"[:200],
                "user_id": principal.user_id,
                "occurred_at": int(time.time()),
            },
        )
