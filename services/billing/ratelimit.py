"""Rate limits of /v1: fixed one-minute windows counted in PostgreSQL, so every gateway replica
shares them. One request costs one upsert per scope: the token (limit from the principal's
plan) and the organization the request names, when the caller belongs to it (a stranger must
not be able to spend another organization's budget)."""

from __future__ import annotations

import time
from collections.abc import Mapping

from services.billing import queries
from services.billing.plans import Catalogue, effective_plan_id
from services.contracts.v1 import billing_pb2, common_pb2
from services.kit.db import Database
from services.kit.errors import ServiceError
from services.kit.identity import owner_of_org, role_in


def window_of(now: float, window_seconds: int) -> int:
    return int(now // window_seconds)


def token_key(principal: common_pb2.Principal) -> str:
    return f"token:{principal.token_id or principal.user_id}"


async def limits_of(
    db: queries.Executor, catalogue: Catalogue, principal: common_pb2.Principal, org_id: str, window_seconds: int
) -> dict[str, int]:
    """The scopes that limit a request of this principal about ``org_id``, with their limits per window."""
    scale = window_seconds / 60  # plans state limits per minute
    limits: dict[str, int] = {}
    token_limit = catalogue.get(principal.plan).rate_limit_per_minute
    if token_limit > 0:
        limits[token_key(principal)] = max(1, int(token_limit * scale))
    if org_id and role_in(principal, org_id) is not None:
        subscribed = await queries.plan_status(db, owner_of_org(org_id))
        org_plan = catalogue.get(effective_plan_id(*subscribed)) if subscribed else catalogue.free
        if org_plan.org_rate_limit_per_minute > 0:
            limits[f"org:{org_id}"] = max(1, int(org_plan.org_rate_limit_per_minute * scale))
    return limits


async def reserve(
    db: Database,
    catalogue: Catalogue,
    principal: common_pb2.Principal,
    org_id: str,
    want: int,
    window_seconds: int,
    now: float | None = None,
) -> billing_pb2.RateBudgetResponse:
    """``ReserveRateBudget``: up to ``want`` requests of this window on each limiting scope.

    The counter is raised by ``want`` whatever is granted, and a grant is only what was below
    the limit before this call: so however many gateways reserve at once, their grants in a
    window add up to at most the limit (the upsert serializes them per scope).
    """
    now = time.time() if now is None else now
    window = window_of(now, window_seconds)
    want = max(1, want)
    response = billing_pb2.RateBudgetResponse(window=window, reset_at=(window + 1) * window_seconds)
    async with db.autocommit() as conn:
        limits = await limits_of(conn, catalogue, principal, org_id[:64], window_seconds)
        counts = await queries.bump_counters(conn, sorted(limits), window, want)
    for scope, limit in sorted(limits.items()):
        before = counts[scope] - want
        response.budgets.add(scope=scope, limit=limit, granted=max(0, min(want, limit - before)))
    return response


async def hit(
    db: queries.Executor,
    catalogue: Catalogue,
    principal: common_pb2.Principal,
    org_id: str,
    window_seconds: int = 60,
    now: float | None = None,
    counted: Mapping[str, int] | None = None,
) -> billing_pb2.RateLimitResponse:
    """Count one request on every scope that limits it and refuse it when one is over.

    ``counted`` holds scopes already counted for this request (the token, by ``ValidateToken``).
    """
    now = time.time() if now is None else now
    window = window_of(now, window_seconds)
    reset_at = (window + 1) * window_seconds
    limits = await limits_of(db, catalogue, principal, org_id, window_seconds)
    counts = dict(counted or {})
    counts |= await queries.bump_counters(db, sorted(k for k in limits if k not in counts), window)
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


async def meter(
    db: Database, catalogue: Catalogue, principal: common_pb2.Principal, org_id: str, window_seconds: int
) -> billing_pb2.RateLimitResponse:
    """``HitRateLimit``: one request counted (``hit``) in its own unit of work."""
    async with db.session() as session:
        return await hit(session, catalogue, principal, org_id[:64], window_seconds)


async def hit_address(
    db: queries.Executor,
    scope: str,
    address: str,
    limit_per_minute: int,
    window_seconds: int = 60,
    message: str = "too many sign-in attempts from this address",
) -> None:
    """Count a request against its client address (sign-in, which carries no token; failed
    authentications); refuse it over the limit."""
    if limit_per_minute <= 0 or not address:
        return
    now = time.time()
    window = window_of(now, window_seconds)
    limit = max(1, int(limit_per_minute * window_seconds / 60))
    key = f"ip:{scope}:{address[:64]}"
    used = (await queries.bump_counters(db, [key], window))[key]
    if used > limit:
        reset_at = (window + 1) * window_seconds
        retry_after = max(1, int(reset_at - now))
        raise ServiceError(
            "rate_limited",
            f"{message}; retry in {retry_after} s",
            {"scope": "ip", "limit": limit, "retry_after": retry_after, "reset_at": reset_at},
        )


async def purge(db: queries.Executor, window_seconds: int = 60) -> None:
    await queries.purge_counters(db, int(time.time() // window_seconds) - 2)
