"""What the indexing benchmarks share: a PostgreSQL database, the pipeline run as the worker
runs it, peak memory, and ruff on the same tree (the baseline measured in the same run)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import psycopg
from sqlalchemy import text, update

from services.devrun.infra import EmbeddedPostgres, port_open
from services.indexer import queries
from services.indexer.extraction import ExtractorPool
from services.indexer.git import validate_local_repository
from services.indexer.models import Repository
from services.indexer.pipeline import Limits, PipelineInput, Progress, SnapshotResult, build_snapshot
from services.kit.db import Database


class RssMonitor:
    """Peak resident memory of this process plus its children (pool workers, git)."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.peak_total = 0
        self.peak_main = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self.run_loop, daemon=True)

    def run_loop(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            try:
                main = me.memory_info().rss
                total = main + sum(rss(c) for c in me.children(recursive=True))
            except psutil.Error:
                continue
            self.peak_main = max(self.peak_main, main)
            self.peak_total = max(self.peak_total, total)
            self._stop.wait(self.interval)

    def __enter__(self) -> RssMonitor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def rss(proc: psutil.Process) -> int:
    try:
        return int(proc.memory_info().rss)
    except psutil.Error:
        return 0


def server_url() -> tuple[str, EmbeddedPostgres | None]:
    url = os.environ.get("CR_POSTGRES_URL") or os.environ.get("CR_TEST_POSTGRES_URL")
    if url:
        return url, None
    if port_open("127.0.0.1", 5432):
        return "postgresql://postgres@127.0.0.1:5432/postgres", None
    server = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix="cr-bench-pg-")) / "data")
    return server.start(), server


def create_repository(dsn: str, repo: Path) -> str:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO repositories (id, name, kind, source, owner, status, default_branch, created_at, head_sha)"
            " VALUES ('bench', %s, 'local', %s, 'user:bench', 'active', '', 0, '')",
            (repo.name, str(repo)),
        )
    return "bench"


def index(
    dsn: str, repo: Path, mirror: Path, pool: ExtractorPool, *, incremental: bool
) -> tuple[float, SnapshotResult]:
    source = validate_local_repository(repo, [str(repo.parent)])
    inp = PipelineInput(
        "bench",
        f"run-{time.time_ns()}",
        source,
        mirror,
        dsn,
        incremental=incremental,
        history_cache=mirror.with_suffix(".history"),
    )
    start = time.perf_counter()
    result = build_snapshot(inp, Limits(), pool, Progress())
    elapsed = time.perf_counter() - start
    # Server-side work after the pipeline, timed apart: the switch (in the run's final
    # transaction) and the removal of facts no file row points at any more (after it: by delta
    # among the pruned rows' blobs, else all of the repository's).
    result.timings["switch"], result.timings["facts_cleanup"] = (round(t, 4) for t in switch(dsn, "bench", result))
    return elapsed, result


def switch(dsn: str, repository_id: str, result: SnapshotResult, *, facts: bool = True) -> tuple[float, float]:
    """What the indexer worker does after a run, through its own queries: the switch of its final
    transaction (the repository points at ``result``; ``queries.delete_other_snapshots``), then,
    with ``facts``, ``queries.delete_unreferenced_facts``. Returns the seconds of each step."""
    return asyncio.run(_switch(dsn, repository_id, result, facts))


async def _switch(dsn: str, repository_id: str, result: SnapshotResult, facts: bool) -> tuple[float, float]:
    db = Database(dsn.replace("postgresql://", "postgresql+psycopg://", 1), pool_size=1)
    try:
        async with db.session() as session:  # connected before the clock starts, as the worker is
            await session.execute(text("SELECT 1"))
        start = time.perf_counter()
        async with db.session() as session:
            await session.execute(
                update(Repository)
                .where(Repository.id == repository_id)
                .values(snapshot_id=result.snapshot_id, head_sha=result.commit)
            )
            pruned = await queries.delete_other_snapshots(session, repository_id, result.snapshot_id)
        mark = time.perf_counter()
        if facts:
            async with db.session() as session:
                candidates = pruned if "write" in result.by_delta else None
                await queries.delete_unreferenced_facts(session, repository_id, candidates)
        return mark - start, time.perf_counter() - mark
    finally:
        await db.dispose()


def ruff(repo: Path) -> float:
    return ruff_measured(repo)[0]


def ruff_measured(repo: Path) -> tuple[float, int]:
    """Seconds and peak RSS (bytes) of ``ruff check --select ALL`` on ``repo``."""
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff") or "ruff"
    cmd = [exe, "check", "--select", "ALL", "--no-cache", "--exit-zero", "--quiet", "--isolated", str(repo)]
    start = time.perf_counter()
    proc = psutil.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, rss(proc))
        time.sleep(0.05)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    return elapsed, peak
