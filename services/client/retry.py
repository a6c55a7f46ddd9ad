"""The spec's retry rules as one pure decision, shared by the sync and async clients.

1. 5xx: exponential backoff, at most 3 attempts in all;
2. 429 ``rate_limited``: wait ``Retry-After`` seconds, or 30 without it, a bounded number of
   times, and never longer than ``max_wait`` at once. Any other 429 (``quota_exceeded``: a cap
   that resets at the end of the billing period) is not a rate limit and is raised at once;
3. other 4xx: never retried;
4. ``index_in_progress`` / ``index_failed``: not retried here; ``wait_for_index`` polls the status.

Every wait is announced (``Wait.reason``) before it starts, so a caller can say what it waits for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# A 429 the client may wait out: the spec's rate limit. Anything else answered 429 (a usage cap)
# stays refused however long one waits within reason.
WAITABLE_429 = frozenset({"rate_limited", ""})


@dataclass(frozen=True)
class Wait:
    """One pause before the next attempt and why."""

    seconds: float
    reason: str


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3  # in all, for 5xx and unreachable servers
    backoff: float = 0.5  # first wait; doubles each time
    max_backoff: float = 8.0
    rate_limit_wait: float = 30.0  # 429 without Retry-After
    rate_limit_retries: int = 5
    max_wait: float = 60.0  # a longer Retry-After is not waited out: the error is raised

    def delay(
        self, status: int, headers: Mapping[str, str], failures: int, rate_limited: int, code: str = ""
    ) -> Wait | None:
        """The wait before trying again, or None to give up.

        ``failures`` counts the 5xx (or unreachable) answers so far including this one;
        ``rate_limited`` the 429 answers so far including this one. ``status`` 0 = no answer;
        ``code`` is the error body's code, when there is one.
        """
        if status == 429:
            if code not in WAITABLE_429 or rate_limited > self.rate_limit_retries:
                return None
            given = retry_after(headers.get("retry-after"))
            seconds = self.rate_limit_wait if given is None else given
            if seconds > self.max_wait:
                return None
            tries = f"try {rate_limited + 1} of {self.rate_limit_retries + 1}"
            reason = f"rate limited (429 {code or 'without a code'}), {tries}"
            return Wait(seconds, reason)
        if status >= 500 or status == 0:
            if failures >= self.attempts:
                return None
            what = "no answer" if status == 0 else f"{status} {code}".strip()
            reason = f"server error ({what}), attempt {failures + 1} of {self.attempts}"
            return Wait(min(self.backoff * 2 ** (failures - 1), self.max_backoff), reason)
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

    def after(self, status: int, headers: Mapping[str, str], code: str = "") -> Wait | None:
        self.failures += status >= 500 or status == 0
        self.rate_limited += status == 429
        return self.policy.delay(status, headers, self.failures, self.rate_limited, code)
