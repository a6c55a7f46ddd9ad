"""Child processes that die with their parent.

A ``kill -9`` of a service gives it no chance to stop its children: without this, each one
left its worker processes running (memory, database connections) until they happened to exit.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Call first thing in a child process (a pool initializer): it is killed when
    ``parent_pid`` dies, however that happens.

    Linux delivers SIGKILL through ``PR_SET_PDEATHSIG`` when the thread that started the child
    ends, so children must be started from threads that live as long as the process (the
    event loop's default executor, the main thread). Elsewhere a thread watches the parent.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            _watch_parent(parent_pid)
    else:
        _watch_parent(parent_pid)
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)


def _watch_parent(parent_pid: int) -> None:
    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
