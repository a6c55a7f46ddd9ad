"""The extraction worker processes die with the indexer, even on ``kill -9`` (issue 10,
finding 2: each kill used to leave them running with their database connections)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import psutil

from tests.conftest import ROOT

CHILD = """
import sys, time
from services.indexer.extraction import ExtractorPool
pool = ExtractorPool(2)
pool.warm_up()
print("ready", flush=True)
time.sleep(120)
"""


def test_extraction_workers_die_with_a_killed_parent() -> None:
    parent = subprocess.Popen([sys.executable, "-c", CHILD], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        assert parent.stdout.readline().strip() == "ready"
        children = psutil.Process(parent.pid).children(recursive=True)
        workers = [c for c in children if "multiprocessing" in " ".join(c.cmdline())]
        assert len(workers) >= 2, [c.cmdline() for c in children]
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        _, alive = psutil.wait_procs(children, timeout=10)
        assert alive == [], [p.cmdline() for p in alive]
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_pool_stop_leaves_no_process() -> None:
    from services.indexer.extraction import ExtractorPool

    before = set(psutil.Process().children(recursive=True))
    pool = ExtractorPool(2)
    pool.warm_up()
    # The pool's workers (not multiprocessing's resource tracker, one per interpreter).
    workers = [p for p in psutil.Process().children(recursive=True) if p not in before]
    workers = [p for p in workers if "resource_tracker" not in " ".join(p.cmdline())]
    assert len(workers) == 2
    pool.stop()
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert alive == []
