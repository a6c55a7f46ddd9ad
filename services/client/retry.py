"""The spec's retry rules as one pure decision, shared by the sync and async clients.

1. 5xx: exponential backoff, at most 3 attempts in all;
2. 429: wait ``Retry-After`` seconds, or 30 without it (bounded number of waits);
3. other 4xx: never retried;
4. ``index_in_progress`` / ``index_failed``: not retried here; ``wait_for_index`` polls the status.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3  # in all, for 5xx and unreachable servers
    backoff: float = 0.5  # first wait; doubles each time
    max_backoff: float = 8.0
    rate_limit_wait: float = 30.0  # 429 without Retry-After
    rate_limit_retries: int = 5

    def delay(self, status: int, headers: Mapping[str, str], failures: int, rate_limited: int) -> float | None:
        """Seconds to wait before trying again, or None to give up.

        ``failures`` counts the 5xx (or unreachable) answers so far including this one;
        ``rate_limited`` the 429 answers so far including this one. ``status`` 0 = no answer.
        """
        if status == 429:
            if rate_limited > self.rate_limit_retries:
                return None
            wait = retry_after(headers.get("retry-after"))
            return self.rate_limit_wait if wait is None else wait
        if status >= 500 or status == 0:
            if failures >= self.attempts:
                return None
            return min(self.backoff * 2 ** (failures - 1), self.max_backoff)
        return None


def retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (the delta-seconds form; an HTTP date is ignored)."""
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


@dataclass
class Attempts:
    """The answers one call has had so far; ``after`` says how long to wait before the next try."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    failures: int = 0
    rate_limited: int = 0

    def after(self, status: int, headers: Mapping[str, str]) -> float | None:
        self.failures += status >= 500 or status == 0
        self.rate_limited += status == 429
        return self.policy.delay(status, headers, self.failures, self.rate_limited)
