"""Waiting for an index, written once as steps that both clients drive.

The trigger is sent once. An answer ``index_in_progress`` or ``index_failed`` is not retried
(spec rule 4): the steps follow the run through ``index/status`` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from services.api.repositories import IndexStatus
from services.client import api
from services.client.errors import ApiError

FOLLOW_CODES = frozenset({"index_in_progress", "index_failed"})


@dataclass(frozen=True)
class Pause:
    seconds: float


@dataclass(frozen=True)
class Progress:
    status: IndexStatus


Step = api.Call[Any] | Pause | Progress
Steps = Generator[Step, Any, IndexStatus]


def index_and_wait(
    repo: str,
    clock: Callable[[], float],
    trigger: bool = False,
    incremental: bool = False,
    poll_interval: float = 1.0,
    timeout: float | None = None,
) -> Steps:
    """Yields calls (answered with their result, or thrown their ApiError), pauses and progress."""
    deadline = None if timeout is None else clock() + timeout
    if trigger:
        try:
            yield api.index_repo(repo, incremental)
        except ApiError as exc:
            if exc.code not in FOLLOW_CODES:
                raise
    while True:
        status: IndexStatus = yield api.index_status(repo)
        yield Progress(status)
        if status.finished or (not trigger and not status.state):
            return status
        if deadline is not None and clock() >= deadline:
            raise ApiError(
                0, "timeout", f"index of {repo} still {status.state} after {timeout:g}s", status.model_dump()
            )
        yield Pause(poll_interval)
