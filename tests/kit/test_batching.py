"""kit.batching: items waiting while a flush runs share the next one, each submitter gets its own
item's result or failure, and no item is left waiting."""

from __future__ import annotations

import asyncio

import pytest

from services.kit.batching import Batcher


class Recorder:
    """A flush that keeps its batches and answers each item with its double (or a failure)."""

    def __init__(self, fail_items: frozenset[int] = frozenset(), fail_all: bool = False) -> None:
        self.batches: list[list[int]] = []
        self.fail_items = fail_items
        self.fail_all = fail_all
        self.gate = asyncio.Event()
        self.gate.set()

    async def __call__(self, items: list[int]) -> list[int | Exception]:
        self.batches.append(items)
        await self.gate.wait()
        if self.fail_all:
            raise ConnectionError("down")
        return [ValueError(f"bad {i}") if i in self.fail_items else i * 2 for i in items]


async def test_a_lone_item_is_flushed_at_once_and_those_waiting_share_the_next_flush() -> None:
    flush = Recorder()
    batcher: Batcher[int, int] = Batcher(flush, max_items=100)
    assert await batcher.submit(1) == 2
    flush.gate.clear()  # the next flush is held: everything submitted meanwhile waits for it
    first = asyncio.ensure_future(batcher.submit(2))
    await asyncio.sleep(0)
    rest = [asyncio.ensure_future(batcher.submit(n)) for n in range(3, 9)]
    await asyncio.sleep(0)
    flush.gate.set()
    assert await first == 4
    assert [await r for r in rest] == [n * 2 for n in range(3, 9)]
    assert flush.batches == [[1], [2], list(range(3, 9))]


async def test_batches_are_bounded_by_count_and_weight() -> None:
    flush = Recorder()
    flush.gate.clear()
    batcher: Batcher[int, int] = Batcher(flush, max_items=3, max_weight=10, weight=lambda n: n)
    submitted = [asyncio.ensure_future(batcher.submit(n)) for n in (1, 1, 1, 1, 6, 5, 20, 1)]
    await asyncio.sleep(0)
    flush.gate.set()
    assert await asyncio.gather(*submitted) == [2, 2, 2, 2, 12, 10, 40, 2]
    # At most 3 items, at most 10 in weight past the first: an item heavier than the bound goes alone.
    assert flush.batches == [[1, 1, 1], [1, 6], [5], [20], [1]]


async def test_each_submitter_gets_its_own_failure_and_a_failed_flush_is_every_items() -> None:
    flush = Recorder(fail_items=frozenset({3}))
    batcher: Batcher[int, int] = Batcher(flush, max_items=10)
    results = await asyncio.gather(*(batcher.submit(n) for n in range(1, 6)), return_exceptions=True)
    assert [r if isinstance(r, int) else str(r) for r in results] == [2, 4, "bad 3", 8, 10]
    flush.fail_all = True
    results = await asyncio.gather(*(batcher.submit(n) for n in range(1, 4)), return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in results)
    flush.fail_all = False
    assert await batcher.submit(7) == 14  # the batcher goes on after a failed flush


async def test_an_item_submitted_as_a_drain_finishes_is_still_flushed() -> None:
    """The drain leaves the count of running drains in the same turn as it finds nothing
    waiting. An item submitted right after, in that turn of the loop (before a done callback
    would have run), starts a new drain instead of waiting for the finished one."""
    flush = Recorder()
    flush.gate.clear()
    batcher: Batcher[int, int] = Batcher(flush, max_items=10)
    first = asyncio.ensure_future(batcher.submit(1))
    for _ in range(3):
        await asyncio.sleep(0)
    assert flush.batches == [[1]]  # held at the gate

    async def submit_once_released() -> int:
        await flush.gate.wait()  # woken right after the flush, in the same turn
        return await batcher.submit(2)

    late = asyncio.ensure_future(submit_once_released())
    await asyncio.sleep(0)
    flush.gate.set()
    assert await first == 2
    assert await asyncio.wait_for(late, timeout=5) == 4


async def test_an_item_whose_submitter_gave_up_is_not_flushed() -> None:
    flush = Recorder()
    flush.gate.clear()
    batcher: Batcher[int, int] = Batcher(flush, max_items=10)
    first = asyncio.ensure_future(batcher.submit(1))
    await asyncio.sleep(0)
    gives_up = asyncio.ensure_future(batcher.submit(2))
    stays = asyncio.ensure_future(batcher.submit(3))
    await asyncio.sleep(0)
    gives_up.cancel()
    flush.gate.set()
    assert await first == 2
    assert await stays == 6
    with pytest.raises(asyncio.CancelledError):
        await gives_up
    assert flush.batches == [[1], [3]]  # its item, still waiting, was dropped


async def test_with_two_flushes_in_flight_an_item_waits_only_when_both_are_busy() -> None:
    """Concurrency 2: an item submitted while one flush is held goes at once in a second flush
    (it does not wait for the first to end); what is submitted while both are held shares the
    flush that starts when the first of them ends."""
    flush = Recorder()
    flush.gate.clear()
    batcher: Batcher[int, int] = Batcher(flush, max_items=100, concurrency=2)
    first = asyncio.ensure_future(batcher.submit(1))
    for _ in range(3):
        await asyncio.sleep(0)
    second = asyncio.ensure_future(batcher.submit(2))
    for _ in range(3):
        await asyncio.sleep(0)
    assert flush.batches == [[1], [2]]  # both in flight, neither done
    rest = [asyncio.ensure_future(batcher.submit(n)) for n in range(3, 7)]
    for _ in range(3):
        await asyncio.sleep(0)
    assert flush.batches == [[1], [2]]  # both slots taken: these wait
    flush.gate.set()
    assert [await first, await second] == [2, 4]
    assert [await r for r in rest] == [6, 8, 10, 12]
    assert flush.batches == [[1], [2], [3, 4, 5, 6]]
