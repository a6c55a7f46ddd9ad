"""Supervision of a process's long-running loops: consumers, outbox relay, reaper, reconciler,
workers. One mechanism for all of them, so a loop that ends cannot go unnoticed.

A loop is registered as a factory (so it can be started again) and runs as a task. It tells
its supervisor it is alive with ``beat()`` (progress: a fetch returned, a message was handled,
a job's heartbeat) and marks its waits for work with ``idle()``. The supervisor:

* notices a loop that ended (an exception, or a return from a loop meant to run for ever) or
  stalled (no beat for ``stall_after`` seconds outside ``idle()``), logs the cause, counts it
  in ``cr_loop_restarts_total`` and drops ``cr_loop_up`` to 0;
* reports the process NOT_SERVING (gRPC health, hence the gateway's ``/readyz`` 503) from then
  until the restarted loop beats again;
* restarts it after a doubling backoff; after ``max_failures`` failures in a row (a loop that
  ran ``stable_after`` seconds starts the count again) it gives up and asks the process to
  exit with ``EXIT_LOOP_FAILED``, so the outer supervisor (Kubernetes, ``make run``) restarts it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar, copy_context
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import Counter, Gauge

log = logging.getLogger(__name__)

EXIT_LOOP_FAILED = 70  # EX_SOFTWARE: a loop could not be kept running

LOOP_UP = Gauge("cr_loop_up", "1 while a supervised loop runs and makes progress", ["service", "loop"])
LOOP_RESTARTS = Counter(
    "cr_loop_restarts_total", "Supervised loops restarted, by cause (died, stalled)", ["service", "loop", "reason"]
)

LoopFactory = Callable[[], Awaitable[Any]]


@dataclass
class _Loop:
    name: str
    factory: LoopFactory
    stall_after: float | None
    once: bool
    stop: Callable[[], None] | None
    task: asyncio.Task[Any] | None = None
    state: str = "waiting"  # waiting (to start) | running | restarting | done
    started_at: float = 0.0
    last_beat: float = 0.0
    beats: int = 0
    idle: int = 0
    failures: int = 0  # in a row
    restarts: int = 0
    restart_at: float = 0.0
    problem: str = field(default="not started")

    def beat(self, now: float) -> None:
        self.last_beat = now
        self.beats += 1

    def stalled(self, now: float) -> bool:
        return (
            self.state == "running"
            and self.stall_after is not None
            and self.idle == 0
            and now - self.last_beat > self.stall_after
        )

    def healthy(self, now: float) -> bool:
        if self.state == "done":
            return True
        # Running and heard from since its (re)start, or waiting for work; a loop that cannot
        # beat (no stall_after) only has to be running.
        heard = self.beats > 0 or self.idle > 0 or self.stall_after is None
        return self.state == "running" and heard and not self.stalled(now)


_current: ContextVar[tuple[_Loop, Callable[[], float]] | None] = ContextVar("supervised_loop", default=None)


def beat() -> None:
    """Progress of the calling loop (or of a task it started); a no-op outside supervision."""
    current = _current.get()
    if current is not None:
        loop, clock = current
        loop.beat(clock())


@contextlib.contextmanager
def idle() -> Iterator[None]:
    """The calling loop waits for work (or for its next round): it cannot stall meanwhile."""
    current = _current.get()
    if current is None:
        yield
        return
    loop, clock = current
    loop.idle += 1
    try:
        yield
    finally:
        loop.idle -= 1
        loop.beat(clock())


class Wakeable:
    """A background loop that works, then waits until it is woken, stopped, or its poll interval
    has passed (the outbox relay, hostapp's delivery processor and feedback sender)."""

    def __init__(self) -> None:
        self._wake = asyncio.Event()
        self._stopping = False

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()

    async def doze(self, seconds: float) -> None:
        """Wait, idle, until woken or ``seconds`` have passed; the caller clears the wake-up."""
        with idle():
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=seconds)
            except TimeoutError:
                pass


class Supervisor:
    def __init__(
        self,
        service: str,
        *,
        on_fatal: Callable[[str], None],
        max_failures: int = 5,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        stable_after: float = 60.0,
        check_interval: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.service = service
        self.on_fatal = on_fatal
        self.max_failures = max_failures
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.stable_after = stable_after
        self.check_interval = check_interval
        self.clock = clock
        self.loops: dict[str, _Loop] = {}
        self.changed = asyncio.Event()  # set when health may have changed
        self._stopping = False
        self._was_healthy: dict[str, bool] = {}
        self._ever_healthy: set[str] = set()

    def add(
        self,
        name: str,
        factory: LoopFactory,
        *,
        stop: Callable[[], None] | None = None,
        stall_after: float | None = 60.0,
        once: bool = False,
    ) -> None:
        """Register a loop; ``once`` for a task that may finish (a start-up pass); ``stall_after``
        None for one that cannot beat while it works (its work has its own time limit)."""
        if name in self.loops:
            raise ValueError(f"loop {name} is already supervised")
        self.loops[name] = _Loop(name, factory, stall_after, once, stop)
        LOOP_UP.labels(self.service, name).set(0)

    def healthy(self) -> bool:
        now = self.clock()
        return all(loop.healthy(now) for loop in self.loops.values())

    async def ready(self) -> bool:
        """A readiness check: every loop is running and heard from."""
        return self.healthy()

    def problems(self) -> dict[str, str]:
        now = self.clock()
        return {name: loop.problem for name, loop in self.loops.items() if not loop.healthy(now)}

    async def run(self) -> None:
        """Start every loop and watch them until ``stop()``."""
        for loop in self.loops.values():
            self._start(loop)
        while not self._stopping:
            self.check()
            await asyncio.sleep(self.check_interval)

    def check(self) -> None:
        now = self.clock()
        for loop in self.loops.values():
            if loop.state == "running" and loop.task is not None and loop.task.done():
                self._ended(loop, now)
            elif loop.stalled(now):
                self._stalled(loop, now)
            elif loop.state == "restarting" and now >= loop.restart_at:
                self._start(loop)
            healthy = loop.healthy(now)
            if healthy != self._was_healthy.get(loop.name):
                if healthy and (loop.name in self._ever_healthy or loop.restarts):
                    log.info("loop %s is running again", loop.name)
                if healthy:
                    self._ever_healthy.add(loop.name)
                self._was_healthy[loop.name] = healthy
                LOOP_UP.labels(self.service, loop.name).set(1 if healthy else 0)
                self.changed.set()

    def _start(self, loop: _Loop) -> None:
        if self._stopping:
            return
        loop.state = "running"
        loop.beats = 0
        loop.idle = 0
        loop.started_at = loop.last_beat = self.clock()
        loop.problem = "started, not heard from yet"
        context = copy_context()
        context.run(_current.set, (loop, self.clock))
        loop.task = asyncio.get_running_loop().create_task(_call(loop.factory), name=loop.name, context=context)

    def _ended(self, loop: _Loop, now: float) -> None:
        assert loop.task is not None
        exc = None if loop.task.cancelled() else loop.task.exception()
        if exc is None and loop.once:
            loop.state = "done"
            loop.problem = ""
            return
        cause = f"{type(exc).__name__}: {exc}" if exc is not None else "it returned"
        log.error("loop %s died: %s", loop.name, cause, exc_info=exc)
        self._failed(loop, now, "died", cause)

    def _stalled(self, loop: _Loop, now: float) -> None:
        assert loop.task is not None
        silent = now - loop.last_beat
        cause = f"no progress for {silent:.0f}s (limit {loop.stall_after:g}s)"
        log.error("loop %s stalled: %s; cancelling it", loop.name, cause)
        loop.task.cancel()  # a wait in a thread goes on, but the loop no longer waits for it
        self._failed(loop, now, "stalled", cause)

    def _failed(self, loop: _Loop, now: float, reason: str, cause: str) -> None:
        LOOP_RESTARTS.labels(self.service, loop.name, reason).inc()
        loop.restarts += 1
        loop.failures = 1 if now - loop.started_at >= self.stable_after else loop.failures + 1
        loop.problem = f"{reason}: {cause}"
        if loop.failures > self.max_failures:
            loop.state = "restarting"
            loop.restart_at = float("inf")
            message = f"loop {loop.name} failed {loop.failures} times in a row ({loop.problem})"
            log.critical("%s; exiting with status %d so the process is restarted", message, EXIT_LOOP_FAILED)
            self.on_fatal(message)
            return
        delay = min(self.backoff_initial * 2 ** (loop.failures - 1), self.backoff_max)
        loop.state = "restarting"
        loop.restart_at = now + delay
        log.warning(
            "restarting loop %s in %.1fs (failure %d of %d)", loop.name, delay, loop.failures, self.max_failures
        )

    async def stop(self) -> None:
        """Stop watching, ask every loop to stop, and cancel what is left."""
        self._stopping = True
        for loop in self.loops.values():
            if loop.stop is not None:
                with contextlib.suppress(Exception):
                    loop.stop()
        tasks = [loop.task for loop in self.loops.values() if loop.task is not None and not loop.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _call(factory: LoopFactory) -> Any:
    return await factory()
