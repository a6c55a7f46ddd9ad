"""Work that arrives together, done together: one call (a statement, an RPC) for the items that
waited while the previous one ran.

A lone item waits for nobody: it is flushed at once. Under load, items queue behind the flush in
progress and the next flush takes them all (up to a count and a weight), so the cost of a call
is shared by more items as the rate rises. Every submitter is answered with its own item's
result, once the flush that held it is done.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# One result per item: the value, or the exception that item's submitter raises.
Flush = Callable[[list[T]], Awaitable[list[R | Exception]]]


def _one(_: object) -> int:
    return 1


class Batcher(Generic[T, R]):
    """``submit(item)`` returns the item's result from ``flush(batch)``.

    ``flush`` gets the waiting items in submission order, at most ``max_items`` of them and,
    past the first, no more than ``max_weight`` in total (``weight`` of each); it returns one
    result per item, an exception instance standing for that item's failure. An exception raised
    by ``flush`` is every item's. At most ``concurrency`` flushes run at once.
    """

    def __init__(
        self,
        flush: Flush[T, R],
        *,
        max_items: int,
        max_weight: int = 0,
        weight: Callable[[T], int] = _one,
        concurrency: int = 1,
    ) -> None:
        self.flush = flush
        self.max_items = max_items
        self.max_weight = max_weight  # 0: no bound but the count
        self.weight = weight
        self.concurrency = concurrency
        self._waiting: list[tuple[T, asyncio.Future[R]]] = []
        self._drains: set[asyncio.Task[None]] = set()

    async def submit(self, item: T) -> R:
        done: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, done))
        if len(self._drains) < self.concurrency:
            # A flush serves many submitters: it runs in none's context (request id, principal).
            task = asyncio.create_task(self._drain(), context=contextvars.Context())
            self._drains.add(task)
        return await done

    def _take(self) -> list[tuple[T, asyncio.Future[R]]]:
        # An item whose submitter gave up while it waited (a deadline, a disconnect) is dropped.
        self._waiting = [(item, done) for item, done in self._waiting if not done.done()]
        count, total = 0, 0
        for item, _ in self._waiting:
            total += self.weight(item)
            if count and (count >= self.max_items or (self.max_weight and total > self.max_weight)):
                break
            count += 1
        batch, self._waiting = self._waiting[:count], self._waiting[count:]
        return batch

    async def _drain(self) -> None:
        """Flush what waits, one batch at a time, until nothing waits."""
        try:
            await self._flush_waiting()
        finally:
            # Here, not in a done callback: that runs a turn later, and an item submitted in
            # between would find this drain still counted and wait with nobody to flush it.
            self._drains.discard(asyncio.current_task())  # type: ignore[arg-type,unused-ignore]

    async def _flush_waiting(self) -> None:
        while self._waiting:
            batch = self._take()
            if not batch:
                break
            try:
                results = await self.flush([item for item, _ in batch])
                if len(results) != len(batch):
                    raise RuntimeError(f"{len(results)} results for {len(batch)} items")
            except Exception as exc:
                results = [exc] * len(batch)
            except BaseException:  # cancelled: no submitter may wait forever
                if len(self._drains) <= 1:  # no other drain will take what waits
                    batch, self._waiting = batch + self._waiting, []
                for _, done in batch:
                    if not done.done():
                        done.cancel()
                raise
            for (_, done), result in zip(batch, results, strict=True):
                if done.done():  # its submitter gave up (a deadline, a disconnect)
                    continue
                if isinstance(result, Exception):
                    done.set_exception(result)
                else:
                    done.set_result(result)
