"""Rate limits of /v1: fixed one-minute windows counted in PostgreSQL, so every gateway replica
shares them. One request costs one upsert per scope: the token (limit from the principal's
plan) and the organization the request names, when the caller belongs to it (a stranger must
not be able to spend another organization's budget)."""

from __future__ import annotations

import time

from sqlalchemy.ext.asyncio import AsyncSession

from services.billing import repository as repo
from services.billing.plans import Catalogue
from services.billing.usage import plan_of
from services.contracts.v1 import billing_pb2, common_pb2
from services.kit.errors import ServiceError
from services.kit.identity import owner_of_org, role_in


async def hit(
    session: AsyncSession,
    catalogue: Catalogue,
    principal: common_pb2.Principal,
    org_id: str,
    window_seconds: int = 60,
    now: float | None = None,
) -> billing_pb2.RateLimitResponse:
    now = time.time() if now is None else now
    window = int(now // window_seconds)
    reset_at = (window + 1) * window_seconds
    scale = window_seconds / 60  # plans state limits per minute
    limits: dict[str, int] = {}
    token_limit = catalogue.get(principal.plan).rate_limit_per_minute
    if token_limit > 0:
        limits[f"token:{principal.token_id or principal.user_id}"] = max(1, int(token_limit * scale))
    if org_id and role_in(principal, org_id) is not None:
        org_plan = plan_of(await repo.subscription_for(session, owner_of_org(org_id)), catalogue)
        if org_plan.org_rate_limit_per_minute > 0:
            limits[f"org:{org_id}"] = max(1, int(org_plan.org_rate_limit_per_minute * scale))
    counts = await repo.bump_counters(session, sorted(limits), window)
    response = billing_pb2.RateLimitResponse(reset_at=reset_at)
    tightest: tuple[int, int] | None = None  # (remaining, limit)
    for key, limit in limits.items():
        used = counts.get(key, 0)
        if used > limit:
            retry_after = max(1, int(reset_at - now))
            raise ServiceError(
                "rate_limited",
                f"rate limit of {limit} requests per {window_seconds} s reached; retry in {retry_after} s",
                {"scope": key.partition(":")[0], "limit": limit, "retry_after": retry_after, "reset_at": reset_at},
            )
        if tightest is None or limit - used < tightest[0]:
            tightest = (limit - used, limit)
    if tightest is not None:
        response.remaining, response.limit = tightest
    return response


async def purge(session: AsyncSession, window_seconds: int = 60) -> None:
    await repo.purge_counters(session, int(time.time() // window_seconds) - 2)
