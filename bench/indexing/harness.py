"""What the indexing benchmarks share: a PostgreSQL database, the pipeline run as the worker
runs it, peak memory, and ruff on the same tree (the baseline measured in the same run)."""

from __future__ import annotations

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

from services.devrun.infra import EmbeddedPostgres, port_open
from services.indexer.extraction import ExtractorPool
from services.indexer.git import validate_local_repository
from services.indexer.pipeline import Limits, PipelineInput, Progress, SnapshotResult, build_snapshot


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
    with psycopg.connect(dsn) as conn:  # what the worker's final transaction does
        conn.execute(
            "UPDATE repositories SET snapshot_id = %s, head_sha = %s WHERE id = 'bench'",
            (result.snapshot_id, result.commit),
        )
        conn.execute("DELETE FROM snapshots WHERE repository_id = 'bench' AND id <> %s", (result.snapshot_id,))
        conn.execute(  # the history rows only the deleted snapshots saw
            "DELETE FROM history_versions WHERE repository_id = 'bench'"
            " AND until_seq <= (SELECT seq FROM snapshots WHERE id = %s)",
            (result.snapshot_id,),
        )
        pruned = conn.execute(  # the file rows only the deleted snapshots saw
            "DELETE FROM file_versions WHERE repository_id = 'bench'"
            " AND until_seq <= (SELECT seq FROM snapshots WHERE id = %s) RETURNING path, blob_sha",
            (result.snapshot_id,),
        ).fetchall()
    # Server-side work after the pipeline, timed apart: the switch (in the run's final
    # transaction) and the removal of facts no file row points at any more (after it: by delta
    # among the pruned rows' blobs, else all of the repository's).
    result.timings["switch"] = round(time.perf_counter() - start - elapsed, 4)
    mark = time.perf_counter()
    among = " AND (b.path, b.blob_sha) IN (SELECT * FROM unnest(%s::text[], %s::text[]))"
    delta = "write" in result.by_delta
    with psycopg.connect(dsn) as conn:
        conn.execute(
            "DELETE FROM blob_facts b WHERE b.repository_id = 'bench' AND NOT EXISTS (SELECT 1 FROM file_versions v"
            " WHERE v.repository_id = 'bench' AND v.path = b.path AND v.blob_sha = b.blob_sha)"
            + (among if delta else ""),
            ([p for p, _ in pruned], [sha for _, sha in pruned]) if delta else (),
        )
    result.timings["facts_cleanup"] = round(time.perf_counter() - mark, 4)
    return elapsed, result


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
