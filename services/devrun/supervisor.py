"""``make run``'s process supervisor: the five services as children that are restarted
when they die, and stopped (with everything they started) on Ctrl-C.

Why not a library: honcho (used before) stops every process when one exits and cannot
restart; supervisord and circus are daemons driven by config files and an RPC channel
(circus also needs ZeroMQ), far more than a foreground developer run needs, and neither
kills a crashed child's leftover subprocesses. What Kubernetes does in production is the
model here: restart a dead container with exponential backoff (reset once it stayed up),
say so in the log, and never touch its neighbours. That is a short loop over
``subprocess``.

Each child runs in its own session (process group): the terminal's Ctrl-C reaches only this
supervisor, which then stops the children in order, and a child's whole group (the
indexer's extraction workers included) is killed when the child dies or is stopped, so
nothing is left behind. The children also get a parent-death signal, so even a
``kill -9`` of the supervisor does not leave services running.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO

_PR_SET_PDEATHSIG = 1
try:  # resolved here, not between fork and exec, where only the call itself should run
    _prctl: Callable[..., int] | None = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: children just outlive a killed supervisor
    _prctl = None


def _die_with_parent() -> None:
    """Runs in the child between fork and exec: SIGTERM when the supervising thread dies."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))


@dataclass(frozen=True)
class Backoff:
    """Restart delays: ``initial`` doubling up to ``maximum``; back to ``initial`` once a
    child has stayed up for ``stable_after`` seconds (Kubernetes' CrashLoopBackOff shape)."""

    initial: float = 1.0
    maximum: float = 30.0
    stable_after: float = 60.0

    def delay(self, crashes: int) -> float:
        return float(min(self.maximum, self.initial * 2 ** max(0, crashes - 1)))


@dataclass
class Program:
    name: str
    argv: list[str]
    env: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    crashes: int = 0  # consecutive quick exits
    restart_at: float | None = None
    restarts: int = 0
    reader: threading.Thread | None = field(default=None, repr=False)


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


class Supervisor:
    def __init__(
        self,
        programs: list[Program],
        *,
        out: IO[str],
        backoff: Backoff = Backoff(),
        clock: Callable[[], float] = time.monotonic,
        stopping: threading.Event | None = None,
    ) -> None:
        self.programs = programs
        self.out = out
        self.backoff = backoff
        self.clock = clock
        self.stopping = stopping or threading.Event()
        self._out_lock = threading.Lock()
        self._width = max((len(p.name) for p in programs), default=6)

    def say(self, name: str, line: str) -> None:
        with self._out_lock:
            self.out.write(f"{time.strftime('%H:%M:%S')} {name:<{self._width}} | {line}\n")
            self.out.flush()

    def _spawn(self, program: Program) -> None:
        proc = subprocess.Popen(
            program.argv,
            env=program.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        program.proc = proc
        program.started_at = self.clock()
        program.restart_at = None
        program.reader = threading.Thread(target=self._pump, args=(program.name, proc), daemon=True)
        program.reader.start()
        self.say("system", f"{program.name} started (pid={proc.pid})")

    def _pump(self, name: str, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            self.say(name, raw.decode(errors="replace").rstrip("\n"))

    @staticmethod
    def _kill_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
        # The group outlives its leader: a dead service's own children are still in it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)

    def start(self) -> None:
        for program in self.programs:
            self._spawn(program)

    def check(self) -> None:
        """One pass: notice exits, clear what they left, restart those whose delay is over."""
        now = self.clock()
        for program in self.programs:
            proc = program.proc
            if proc is not None and program.restart_at is None and proc.poll() is not None:
                self._kill_group(proc, signal.SIGKILL)
                uptime = now - program.started_at
                program.crashes = 1 if uptime >= self.backoff.stable_after else program.crashes + 1
                delay = self.backoff.delay(program.crashes)
                program.restart_at = now + delay
                how = describe_exit(proc.returncode)
                self.say("system", f"{program.name} {how} after {uptime:.0f} s; restarting in {delay:.0f} s")
            elif program.restart_at is not None and now >= program.restart_at:
                try:
                    self._spawn(program)
                except (OSError, subprocess.SubprocessError) as exc:
                    program.crashes += 1
                    delay = self.backoff.delay(program.crashes)
                    program.restart_at = now + delay
                    self.say("system", f"{program.name} could not start ({exc}); retrying in {delay:.0f} s")
                else:
                    program.restarts += 1

    def run(self, poll: float = 0.2) -> None:
        """Supervise until :meth:`request_stop`, then stop every child."""
        self.start()
        try:
            while not self.stopping.wait(poll):
                self.check()
        finally:
            self.shutdown()

    def request_stop(self) -> None:
        self.stopping.set()

    def shutdown(self, grace: float = 15.0) -> None:
        """SIGTERM every child, wait up to ``grace``, then SIGKILL what is left of its group.

        Only the child itself is asked to stop (as Kubernetes signals a container's main process):
        it stops its own workers in order, which a signal to the whole group would kill under it."""
        running = [p.proc for p in self.programs if p.proc is not None]
        for proc in running:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for proc in running:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.0, deadline - time.monotonic()))
        for proc in running:
            self._kill_group(proc, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
        for program in self.programs:
            if program.reader is not None:
                program.reader.join(2)
        self.say("system", "all services stopped")
