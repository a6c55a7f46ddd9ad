"""A request's fan-out keeps a bound on the calls in flight, and the order of its answers."""

from __future__ import annotations

import asyncio

from services.kit.concurrency import gather_bounded


async def test_at_most_the_limit_in_flight_and_answers_in_order() -> None:
    in_flight = peak = 0
    release = asyncio.Event()

    async def call(n: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        if n == 0:
            await release.wait()  # the first call holds its slot until every other one has queued
        else:
            await asyncio.sleep(0)
        in_flight -= 1
        return n * n

    task = asyncio.ensure_future(gather_bounded((call(n) for n in range(3000)), limit=16))
    while peak < 16:
        await asyncio.sleep(0)
    release.set()
    assert await task == [n * n for n in range(3000)]
    assert peak == 16
