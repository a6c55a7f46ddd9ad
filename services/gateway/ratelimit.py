"""Rate limiting of /v1 (called from ``deps.current_principal`` for every authenticated request).

The counters are not in this process: billing keeps fixed one-minute windows in PostgreSQL, so
all gateway replicas share one budget per token and per organization, and the limits follow
the caller's plan. A refused request raises ``rate_limited`` with ``details.retry_after``,
which the error handler turns into ``429`` and a ``Retry-After`` header.
"""

from __future__ import annotations

from fastapi import Request

from services.contracts.v1 import billing_pb2, common_pb2
from services.kit.grpc_client import call


class RateLimiter:
    def __init__(self, timeout: float = 2.0) -> None:
        self.timeout = timeout

    @staticmethod
    def org_of(request: Request) -> str:
        """The organization a request is about, when it names one (path, then query)."""
        org_id = request.path_params.get("org_id") or request.query_params.get("org_id") or ""
        return str(org_id)[:64]

    async def check(self, request: Request, principal: common_pb2.Principal) -> None:
        await call(
            request.app.state.clients.billing.HitRateLimit,
            billing_pb2.RateLimitRequest(org_id=self.org_of(request)),
            principal=principal,
            timeout=self.timeout,
        )
