"""Fan-out with a bound: one request may name thousands of files, and a call per file all at
once exhausts the callee's database pool and the channel's streams (a 3,000-file analyze_pr
answered 500 CANCELLED)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TypeVar

T = TypeVar("T")

FAN_OUT = 16  # calls in flight per request: about the callee's pool (5 + 10 overflow)


async def gather_bounded(awaitables: Iterable[Awaitable[T]], limit: int = FAN_OUT) -> list[T]:
    """``asyncio.gather`` with at most ``limit`` awaited at once; results in the given order."""
    gate = asyncio.Semaphore(limit)

    async def one(awaitable: Awaitable[T]) -> T:
        async with gate:
            return await awaitable

    return list(await asyncio.gather(*(one(a) for a in awaitables)))
