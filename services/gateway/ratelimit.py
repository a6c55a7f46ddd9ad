"""Rate limiting of /v1, metered in the same billing round trip that validates the token.

The counters are not in this process: billing keeps fixed one-minute windows in PostgreSQL, so
all gateway replicas share one budget per token and per organization, and the limits follow
the caller's plan. A refused request raises ``rate_limited`` with ``details.retry_after``,
which the error handler turns into ``429`` and a ``Retry-After`` header.
"""

from __future__ import annotations

from fastapi import Request


def org_of(request: Request) -> str:
    """The organization a request is about, when it names one (path, then query)."""
    org_id = request.path_params.get("org_id") or request.query_params.get("org_id") or ""
    return str(org_id)[:64]
