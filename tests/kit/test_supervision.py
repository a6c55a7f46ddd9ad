"""The supervisor of a process's loops: a loop that dies or stalls is reported (health, log,
metric), restarted with backoff, and after too many failures in a row the process is asked to
exit. Bounds are shortened here; every wait polls a condition with a deadline."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import pytest
from prometheus_client import REGISTRY

from services.kit.supervision import Supervisor, beat, idle


async def until(condition: Callable[[], bool], timeout: float = 5.0, what: str = "") -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        await asyncio.sleep(0.01)


def restarts(service: str, loop: str, reason: str) -> float:
    value = REGISTRY.get_sample_value("cr_loop_restarts_total", {"service": service, "loop": loop, "reason": reason})
    return value or 0.0


def up(service: str, loop: str) -> float | None:
    return REGISTRY.get_sample_value("cr_loop_up", {"service": service, "loop": loop})


def fast(service: str, fatal: list[str], **kw: float) -> Supervisor:
    return Supervisor(service, on_fatal=fatal.append, backoff_initial=0.05, backoff_max=0.2, check_interval=0.01, **kw)


async def run(supervisor: Supervisor) -> asyncio.Task[None]:
    return asyncio.create_task(supervisor.run())


async def test_a_loop_that_dies_is_reported_and_restarted(caplog: pytest.LogCaptureFixture) -> None:
    fatal: list[str] = []
    sup = fast("t-died", fatal)
    starts = 0

    async def worker() -> None:
        nonlocal starts
        starts += 1
        beat()
        if starts == 1:
            raise ConnectionError("the ack could not be sent")
        while True:
            with idle():
                await asyncio.sleep(0.01)

    sup.add("worker", worker)
    changed_seen: list[bool] = []
    task = await run(sup)
    try:
        with caplog.at_level(logging.INFO, logger="services.kit.supervision"):
            await until(lambda: restarts("t-died", "worker", "died") == 1, what="death counted")
            changed_seen.append(sup.healthy())
            await until(lambda: starts == 2 and up("t-died", "worker") == 1, what="restarted and up")
        assert changed_seen == [False]  # NOT ready between the death and the restarted beat
        messages = [r.getMessage() for r in caplog.records]
        assert any("loop worker died: ConnectionError: the ack could not be sent" in m for m in messages)
        assert any("loop worker is running again" in m for m in messages)
        assert fatal == []
    finally:
        await sup.stop()
        task.cancel()


async def test_a_stalled_loop_is_cancelled_and_restarted(caplog: pytest.LogCaptureFixture) -> None:
    fatal: list[str] = []
    sup = fast("t-stall", fatal)
    starts = 0
    cancelled = asyncio.Event()

    async def wedged() -> None:
        nonlocal starts
        starts += 1
        beat()
        if starts == 1:
            try:
                await asyncio.Event().wait()  # a wait that never ends, outside idle()
            except asyncio.CancelledError:
                cancelled.set()
                raise
        while True:
            await asyncio.sleep(0.01)
            beat()

    sup.add("wedged", wedged, stall_after=0.2)
    task = await run(sup)
    try:
        await until(sup.healthy, what="started")
        with caplog.at_level(logging.INFO, logger="services.kit.supervision"):
            await until(cancelled.is_set, what="stalled task cancelled")
        assert any("loop wedged stalled: no progress for" in r.getMessage() for r in caplog.records)
        await until(lambda: starts == 2 and sup.healthy(), what="restarted")
        assert restarts("t-stall", "wedged", "stalled") == 1
    finally:
        await sup.stop()
        task.cancel()


async def test_idle_loops_and_finished_passes_are_healthy() -> None:
    now = [0.0]
    fatal: list[str] = []
    sup = Supervisor("t-idle", on_fatal=fatal.append, check_interval=0.01, clock=lambda: now[0])
    waiting_started = asyncio.Event()

    async def waiting() -> None:
        with idle():
            waiting_started.set()
            await asyncio.Event().wait()

    async def one_pass() -> None:
        beat()

    async def long_pass() -> None:  # cannot beat (its work has its own limit): running is enough
        await asyncio.Event().wait()

    sup.add("waiting", waiting, stall_after=5)
    sup.add("one-pass", one_pass, once=True)
    sup.add("long-pass", long_pass, once=True, stall_after=None)
    task = await run(sup)
    try:
        await until(lambda: sup.loops["one-pass"].state == "done" and waiting_started.is_set(), what="started")
        now[0] += 60  # far past the stall bound: waiting for work is not a stall
        sup.check()
        assert sup.healthy(), sup.problems()
    finally:
        await sup.stop()
        task.cancel()


async def test_a_loop_that_keeps_failing_makes_the_process_exit() -> None:
    fatal: list[str] = []
    sup = fast("t-fatal", fatal, max_failures=3)

    async def broken() -> None:
        raise RuntimeError("cannot start")

    sup.add("broken", broken)
    task = await run(sup)
    try:
        await until(lambda: bool(fatal), what="fatal reported")
        assert "loop broken failed 4 times in a row" in fatal[0]
        assert restarts("t-fatal", "broken", "died") == 4
        assert not sup.healthy()
    finally:
        await sup.stop()
        task.cancel()
