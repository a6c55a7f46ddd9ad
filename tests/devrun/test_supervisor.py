"""The ``make run`` supervisor over real child processes: restart with backoff, neighbours
untouched, nothing left behind."""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from services.devrun.infra import stable_port
from services.devrun.supervisor import Backoff, Program, Supervisor

# A service that starts a worker of its own (as the indexer does) and then waits.
WITH_WORKER = (
    "import subprocess, sys, time; "
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
    "time.sleep(600)"
)


def wait_for(condition: Callable[[], object], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout}s")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def descendants(sup: Supervisor) -> list[psutil.Process]:
    """The supervised programs and everything they started (not the test session's other children)."""
    found = []
    for program in sup.programs:
        if program.proc is not None and alive(program.proc.pid):
            root = psutil.Process(program.proc.pid)
            found += [root, *root.children(recursive=True)]
    return found


@pytest.fixture
def supervised() -> Iterator[tuple[Supervisor, io.StringIO]]:
    out = io.StringIO()
    programs = [Program(name, [sys.executable, "-c", WITH_WORKER], dict(os.environ)) for name in ("one", "two")]
    sup = Supervisor(programs, out=out, backoff=Backoff(initial=0.2, maximum=1.0, stable_after=30))
    runner = threading.Thread(target=sup.run, kwargs={"poll": 0.05})
    runner.start()
    wait_for(lambda: len(descendants(sup)) == 4)
    yield sup, out
    sup.request_stop()
    runner.join(30)


def test_a_killed_child_is_restarted_with_its_workers_cleared_and_its_neighbour_untouched(
    supervised: tuple[Supervisor, io.StringIO],
) -> None:
    sup, out = supervised
    one, two = (p.proc for p in sup.programs)
    assert one is not None
    assert two is not None
    [worker] = psutil.Process(one.pid).children()
    os.kill(one.pid, signal.SIGKILL)
    wait_for(lambda: sup.programs[0].restarts == 1)
    assert "one killed by SIGKILL" in out.getvalue()
    assert "restarting in 0 s" in out.getvalue()
    wait_for(lambda: not alive(worker.pid))  # the dead service's own worker does not leak
    new = sup.programs[0].proc
    assert new is not None
    assert new.pid != one.pid
    assert alive(new.pid)
    assert sup.programs[1].proc is two
    assert alive(two.pid)


def test_stop_leaves_no_descendant_alive(supervised: tuple[Supervisor, io.StringIO]) -> None:
    sup, out = supervised
    before = descendants(sup)
    assert len(before) == 4
    sup.request_stop()
    wait_for(lambda: "all services stopped" in out.getvalue())
    assert [p.pid for p in before if alive(p.pid)] == []


def test_a_crash_loop_backs_off_exponentially_and_resets_once_stable() -> None:
    backoff = Backoff(initial=1, maximum=30, stable_after=60)
    assert [backoff.delay(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]
    now = [0.0]
    out = io.StringIO()
    program = Program("crash", [sys.executable, "-c", "raise SystemExit(3)"], dict(os.environ))
    sup = Supervisor([program], out=out, backoff=backoff, clock=lambda: now[0])
    sup.start()
    delays = []
    for _ in range(3):
        assert program.proc is not None
        program.proc.wait(20)
        sup.check()
        assert program.restart_at is not None
        delays.append(program.restart_at - now[0])
        now[0] = program.restart_at
        sup.check()  # restarts
    assert delays == [1, 2, 4]
    assert "crash exited with code 3 after 0 s; restarting in 4 s" in out.getvalue()
    assert program.proc is not None
    program.proc.wait(20)
    now[0] += 61  # it had stayed up long enough: the next crash starts the delays over
    program.started_at = now[0] - 61
    sup.check()
    assert program.restart_at == now[0] + 1
    sup.shutdown(grace=5)


def test_the_gateway_port_is_8080_or_the_first_free_one_after_it_and_is_remembered(tmp_path: Path) -> None:
    memo = tmp_path / "gateway.port"
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        first = taken.getsockname()[1]
        port = stable_port(memo, first)
        assert port > first
        assert memo.read_text().strip() == str(port)
    # Remembered even when the first port is free again, so saved URLs keep working.
    assert stable_port(memo, first) == port
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        moved = stable_port(memo, first)
        assert moved != port
        assert memo.read_text().strip() == str(moved)
