"""Parallel extraction: a pool of worker processes, each reading blobs from the mirror through
its own ``git cat-file --batch``, extracting facts and writing them with COPY.

Work crosses the process boundary as (path, blob sha, size) triples and comes back as small
summaries, so file contents and full facts never travel through the parent. Processes are
spawned (not forked): the parent runs gRPC and asyncio, which do not survive a fork.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from services.indexer import bulk
from services.indexer.facts_codec import encode_facts, encode_summary, summarize
from services.indexer.git import GitOperationError, GitStream, validate_sha
from services.indexer.git.errors import GIT_FAILED
from services.kit.processes import die_with_parent
from services.source.extract import extract
from services.source.facts import FACTS_SCHEMA_VERSION, FileFacts

log = logging.getLogger(__name__)

Item = tuple[str, str, int]  # path, blob sha, size


@dataclass(frozen=True)
class ExtractTask:
    dsn: str
    mirror: str
    repository_id: str
    items: tuple[Item, ...]
    max_bytes: int


@dataclass
class ExtractResult:
    summaries: list[bytes]
    read_seconds: float = 0.0
    parse_seconds: float = 0.0
    write_seconds: float = 0.0
    failures: list[str] = field(default_factory=list)


_conns: dict[str, Any] = {}


def _init_worker(parent_pid: int) -> None:
    die_with_parent(parent_pid)
    # Load the grammars now, not inside the first timed task.
    from services.source.languages import get_language

    for language in ("python", "javascript", "typescript"):
        get_language(language)


def _connection(dsn: str) -> Any:
    conn = _conns.get(dsn)
    if conn is None or conn.closed:
        conn = _conns[dsn] = bulk.connect(dsn)
    return conn


def _read_blobs(
    mirror: str, shas: Sequence[str], timeout: float = 600.0
) -> Generator[tuple[bytes | None, int], None, None]:
    """(content, size) per sha, in order, from one ``git cat-file --batch`` fed all requests up
    front: asking one object at a time costs a pipe round trip (two context switches) each.

    A writer thread feeds the requests so neither side can block the other on a full pipe.
    """
    for sha in shas:
        validate_sha(sha)  # also keeps newlines and "rev:path" syntax out of the batch protocol
    with GitStream(["cat-file", "--batch"], git_dir=mirror, timeout=timeout, stdin=True) as stream:

        def feed() -> None:
            try:
                stream.stdin.write(b"".join(sha.encode("ascii") + b"\n" for sha in shas))
                stream.stdin.close()
            except (BrokenPipeError, ValueError, OSError):
                pass  # git stopped: the reader reports why

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        out = stream.stdout
        try:
            for sha in shas:
                header = out.readline(512).split()
                if len(header) == 2 and header[1] in (b"missing", b"ambiguous"):
                    yield None, 0
                    continue
                if len(header) != 3 or header[0].decode("ascii", "replace") != sha:
                    stream.check_alive()
                    raise GitOperationError(GIT_FAILED, f"unexpected cat-file header {header!r}")
                size = int(header[2])
                data = out.read(size)
                if len(data) != size or out.read(1) != b"\n":
                    stream.check_alive()
                    raise GitOperationError(GIT_FAILED, "git cat-file output ended early")
                yield data, size
        finally:
            writer.join(timeout=5)


def _extract_one(path: str, data: bytes, sha: str, max_bytes: int, failures: list[str]) -> FileFacts:
    try:
        return extract(path, data, max_bytes=max_bytes, blob_sha=sha)
    except Exception as exc:  # one file the library cannot handle must not fail the index
        failures.append(f"{path}: {type(exc).__name__}: {exc}"[:300])
        lines = data.count(b"\n")
        return FileFacts(path=path, language="", size=len(data), lines=lines, blob_sha=sha, skipped="extraction_failed")


def run_task(task: ExtractTask) -> ExtractResult:
    """Worker entry point: read, extract and store one batch of files."""
    result = ExtractResult(summaries=[])
    rows: list[bulk.BlobRow] = []
    blobs = _read_blobs(task.mirror, [sha for _path, sha, _size in task.items])
    for path, sha, _size in task.items:
        t0 = time.perf_counter()
        data, _ = next(blobs)
        t1 = time.perf_counter()
        facts = _extract_one(path, data or b"", sha, task.max_bytes, result.failures)
        result.read_seconds += t1 - t0
        result.parse_seconds += time.perf_counter() - t1
        summary = encode_summary(summarize(facts))
        rows.append((sha, path, FACTS_SCHEMA_VERSION, facts.language, facts.skipped, encode_facts(facts), summary))
        result.summaries.append(summary)
    blobs.close()
    t2 = time.perf_counter()
    try:
        bulk.write_blob_facts(_connection(task.dsn), task.repository_id, rows)
    except Exception:
        # A broken connection must not poison the next task of this process.
        conn = _conns.pop(task.dsn, None)
        if conn is not None:
            conn.close()
        raise
    result.write_seconds = time.perf_counter() - t2
    return result


def _noop() -> int:
    return 0


class ExtractorPool:
    """The worker processes, created once per service process and reused by every index."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        atexit.register(self.shutdown)

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker,
                initargs=(os.getpid(),),
            )
        return self._pool

    def warm_up(self) -> None:
        """Start every worker now (imports included) so the first index is not slower."""
        pool = self._executor()
        try:
            for future in [pool.submit(_noop) for _ in range(self.workers)]:
                future.result()
        except BrokenProcessPool:
            # A worker that died starting up breaks the pool for good: the supervisor's next
            # start of the loop gets a new one (it once got the same broken pool six times).
            self._discard()
            raise

    def map(
        self, tasks: Sequence[ExtractTask], *, in_flight: int = 0, check: Callable[[], None] | None = None
    ) -> Iterator[ExtractResult]:
        """Results in completion order, with at most ``in_flight`` tasks queued (memory bound).

        ``check`` runs every second while waiting and may raise to abandon the run; workers
        still busy then are killed, so a file that hangs the parser cannot hold the pool. A
        crashed worker breaks the pool: it is rebuilt for the next index and the error
        propagates (the job is retried).
        """
        pool = self._executor()
        limit = in_flight or self.workers * 2
        pending: set[Future[ExtractResult]] = set()
        queue = list(tasks)
        queue.reverse()
        finished = False
        try:
            while queue or pending:
                while queue and len(pending) < limit:
                    pending.add(pool.submit(run_task, queue.pop()))
                done, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                if check is not None:
                    check()
                for future in done:
                    yield future.result()
            finished = True
        except BrokenProcessPool:
            self._discard()
            raise
        finally:
            for future in pending:
                future.cancel()
            if not finished and any(f.running() for f in pending):
                self.kill()

    def kill(self) -> None:
        """Terminate the worker processes (abandoned tasks); the next index starts new ones."""
        pool = self._pool
        self._pool = None
        if pool is None:
            return
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)

    def _discard(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def stop(self) -> None:
        """Stop without waiting (service shutdown: running tasks are abandoned, so their
        processes are killed rather than left to finish them)."""
        self.kill()

    def shutdown(self) -> None:
        """At interpreter exit: whatever still runs there is abandoned work."""
        self.kill()
