"""Rate limiting of /v1 without a write per request: each gateway process spends budget it drew
from billing in batches.

Billing keeps the counters (fixed windows, PostgreSQL) and grants a batch per scope
(``ReserveRateBudget``) only out of what is left below the limit, so the grants of every process
of every replica add up to at most the limit in a window: a burst across any number of replicas
never passes it. The price is the other way: a caller may be refused while up to
``processes × (batch − 1)`` requests of its window sit unspent in other processes. A batch is a
``1/share`` of the tightest limit (at most ``max_batch``), so that waste stays a small share of
the budget (docs/accounts.md, "Rate limits"). A refused request raises ``rate_limited`` with
``details.retry_after``; the error handler turns it into 429 and ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fastapi import Request

from services.contracts.v1 import billing_pb2, common_pb2
from services.kit.errors import ServiceError
from services.kit.identity import role_in

Reserve = Callable[[common_pb2.Principal, str, int], Awaitable[billing_pb2.RateBudgetResponse]]


def org_of(request: Request) -> str:
    """The organization a request is about, when it names one (path, then query)."""
    org_id = request.path_params.get("org_id") or request.query_params.get("org_id") or ""
    return str(org_id)[:64]


@dataclass
class Budget:
    reset_at: int  # unix seconds: the end of the window the grants belong to
    window_seconds: int
    limit: int
    left: int
    exhausted: bool  # billing granted less than asked: nothing more this window


@dataclass
class Scopes:
    reset_at: int
    names: tuple[str, ...]


class RateBudgets:
    def __init__(
        self, reserve: Reserve, max_batch: int = 100, share: int = 20, clock: Callable[[], float] = time.time
    ) -> None:
        self.reserve = reserve
        self.max_batch = max_batch
        self.share = share
        self.clock = clock
        self.reservations = 0  # round trips to billing (the tests count them)
        self._scopes: dict[tuple[str, str, str], Scopes] = {}
        self._budgets: dict[str, Budget] = {}
        self._want: dict[tuple[str, str, str], int] = {}
        self._locks: dict[tuple[str, str, str], asyncio.Lock] = {}

    async def take(self, principal: common_pb2.Principal, org_id: str) -> None:
        """Spend one request on every scope that limits it, drawing a batch when one runs out."""
        member_of = org_id if org_id and role_in(principal, org_id) is not None else ""
        # The plan is part of the key: once the principal carries a new plan, the next request
        # draws under its limits instead of spending a batch granted under the old ones.
        key = (principal.token_id or principal.user_id, member_of, principal.plan)
        if self._spend(key, self.clock()):
            return
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:  # one reservation at a time per key; the others spend what it brought
            now = self.clock()
            if self._spend(key, now):
                return
            self._refuse_if_exhausted(key, now)
            reply = await self.reserve(principal, org_id, self._want.get(key, 1))
            self.reservations += 1
            self._store(key, reply)
            if not self._spend(key, self.clock()):
                self._refuse_if_exhausted(key, self.clock(), force=True)

    def _spend(self, key: tuple[str, str, str], now: float) -> bool:
        scopes = self._scopes.get(key)
        if scopes is None or scopes.reset_at <= now:
            return False
        budgets = [self._budgets.get(name) for name in scopes.names]
        if any(b is None or b.reset_at <= now or b.left <= 0 for b in budgets):
            return False
        for b in budgets:
            b.left -= 1  # type: ignore[union-attr]
        return True

    def _refuse_if_exhausted(self, key: tuple[str, str, str], now: float, force: bool = False) -> None:
        scopes = self._scopes.get(key)
        if scopes is None:
            return
        for name in scopes.names:
            b = self._budgets.get(name)
            if b is None or b.reset_at <= now or b.left > 0 or not (b.exhausted or force):
                continue
            retry_after = max(1, int(b.reset_at - now))
            raise ServiceError(
                "rate_limited",
                f"rate limit of {b.limit} requests per {b.window_seconds} s reached; retry in {retry_after} s",
                {
                    "scope": name.partition(":")[0],
                    "limit": b.limit,
                    "retry_after": retry_after,
                    "reset_at": b.reset_at,
                },
            )

    def _store(self, key: tuple[str, str, str], reply: billing_pb2.RateBudgetResponse) -> None:
        window_seconds = max(1, reply.reset_at // (reply.window + 1)) if reply.window >= 0 else 60
        want = self._want.get(key, 1)
        for grant in reply.budgets:
            b = self._budgets.get(grant.scope)
            if b is None or b.reset_at != reply.reset_at:
                b = self._budgets[grant.scope] = Budget(reply.reset_at, window_seconds, grant.limit, 0, False)
            if b.limit != grant.limit:
                b.left = 0  # drawn under another plan's limit: billing counted it, it is not spent now
            b.limit = grant.limit
            b.left += grant.granted
            b.exhausted = grant.granted < want
        self._scopes[key] = Scopes(reply.reset_at, tuple(g.scope for g in reply.budgets))
        tightest = min((g.limit for g in reply.budgets), default=0)
        self._want[key] = max(1, min(self.max_batch, tightest // self.share))
        if len(self._scopes) > 10_000:
            self._forget(self.clock())

    def _forget(self, now: float) -> None:
        """Drop past windows' state (a long-lived process sees many tokens)."""
        for key in [k for k, s in self._scopes.items() if s.reset_at <= now]:
            del self._scopes[key]
            self._want.pop(key, None)
            lock = self._locks.get(key)
            if lock is not None and not lock.locked():
                del self._locks[key]
        for name in [n for n, b in self._budgets.items() if b.reset_at <= now]:
            del self._budgets[name]
