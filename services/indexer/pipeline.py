"""From a repository to a snapshot: mirror, tree, facts, structure, history, stored.

Synchronous by design: it runs in a thread of the worker (git and the pool block), reports
progress through ``Progress`` and stops at the next batch when ``Progress.cancel`` is set.
The snapshot it writes is not current until the caller switches the repository to it, in
the transaction that marks the run ready.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from services.indexer import bulk
from services.indexer.addressable import split_addressable
from services.indexer.extraction import ExtractorPool, ExtractTask, Item
from services.indexer.facts_codec import (
    FileSummary,
    decode_summaries,
    decode_summary,
    encode_summaries,
    resolution_of,
    resolve,
    summary_to_facts,
)
from services.indexer.git import (
    CloneUrl,
    GitError,
    GitInputError,
    LocalRepository,
    TreeEntry,
    ensure_mirror,
    list_tree,
    resolve_ref,
    run_git,
)
from services.indexer.history import summarize_history
from services.indexer.history_cache import commits_for
from services.indexer.models import new_id, now_ms
from services.indexer.structure import analyze_structure
from services.source.facts import FACTS_SCHEMA_VERSION
from services.source.languages import language_for

log = logging.getLogger(__name__)

# Git failures that will not go away by retrying the same run.
PERMANENT_GIT_CODES = frozenset(
    {
        "validation_failed",
        "forbidden_scheme",
        "forbidden_host",
        "path_not_allowed",
        "not_a_repository",
        "empty_repository",
        "ref_not_found",
        "repository_too_large",
        "output_too_large",
        "unsafe_objects",
    }
)


# Skip reasons decided from the tree alone; such placeholders are never reused as facts.
_NOT_READ = frozenset({"submodule", "symlink", "unsupported_mode", "oversized"})


class IndexFailure(Exception):
    """The run cannot produce a snapshot; ``permanent`` says whether a retry could help."""

    def __init__(self, code: str, message: str, *, permanent: bool = True) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.permanent = permanent


class Cancelled(Exception):
    """The run was cancelled (repository deleted, lease lost) while it ran."""


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = 1_000_000
    max_files: int = 200_000
    max_repository_bytes: int = 4 * 1024 * 1024 * 1024
    clone_timeout: float = 900.0
    history_depth: int = 2000
    batch_files: int = 128
    batch_bytes: int = 4 * 1024 * 1024


@dataclass(frozen=True)
class PipelineInput:
    repository_id: str
    run_id: str
    source: LocalRepository | CloneUrl
    mirror: Path
    dsn: str
    token: str | None = None
    ref: str = ""
    incremental: bool = False
    history_cache: Path | None = None  # parsed commits of the last index (see history_cache.py)


@dataclass
class Progress:
    """Shared between the pipeline thread and the worker's heartbeat."""

    total: int = 0
    done: int = 0
    parsed: int = 0
    skipped: int = 0
    phase: str = "queued"
    cancel: threading.Event = field(default_factory=threading.Event)
    timed_out: bool = False  # set with cancel when the run exceeded its time budget

    def check(self) -> None:
        if self.cancel.is_set():
            raise Cancelled("index timed out" if self.timed_out else "index cancelled")


@dataclass
class SnapshotResult:
    snapshot_id: str
    commit: str
    default_branch: str
    files_total: int
    files_parsed: int
    files_skipped: int
    timings: dict[str, float]
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the run's user (see IndexRun.notes)


class _Clock:
    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._start = time.perf_counter()
        self._last = self._start

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = round(self.timings.get(name, 0.0) + now - self._last, 4)
        self._last = now

    def total(self) -> None:
        self.timings["total"] = round(time.perf_counter() - self._start, 4)


def git_failure(exc: GitError) -> IndexFailure:
    permanent = isinstance(exc, GitInputError) or exc.code in PERMANENT_GIT_CODES
    return IndexFailure(exc.code, exc.message, permanent=permanent)


def build_snapshot(inp: PipelineInput, limits: Limits, pool: ExtractorPool, progress: Progress) -> SnapshotResult:
    clock = _Clock()
    try:
        progress.phase = "fetching"
        mirror = ensure_mirror(
            inp.source,
            inp.mirror,
            token=inp.token,
            timeout=limits.clone_timeout,
            max_size_bytes=limits.max_repository_bytes,
        )
        progress.check()
        if mirror.head is None:
            raise IndexFailure("empty_repository", "the repository has no commits")
        commit = resolve_ref(mirror.path, inp.ref or "HEAD")
        branch = _default_branch(mirror.path)
        clock.lap("fetch")
        progress.phase = "listing"
        entries, left_out = split_addressable(list_tree(mirror.path, commit, max_entries=limits.max_files))
        clock.lap("tree")
    except GitError as exc:
        raise git_failure(exc) from exc
    progress.total = len(entries)

    with bulk.connect(inp.dsn) as conn:
        known = _known(conn, inp.repository_id) if inp.incremental else {}
        clock.lap("load")
        summaries, to_parse, modes = _plan(entries, known, limits.max_file_bytes, progress)
        progress.phase = "extracting"
        failures = _extract(inp, limits, pool, to_parse, summaries, progress)
        clock.lap("extract")
        progress.phase = "analyzing"
        ordered = [summaries[e.path] for e in entries]
        files = resolve([summary_to_facts(s) for s in ordered])
        clock.lap("resolve")
        structure = analyze_structure(files)
        clock.lap("structure")
        progress.check()
        history = _history(mirror.path, commit, limits.history_depth, {e.path for e in entries}, inp.history_cache)
        clock.lap("history")
        progress.check()
        progress.phase = "writing"
        snapshot_id = new_id()
        rows = (
            (f.path, f.blob_sha, modes[f.path], f.size, f.language, f.skipped, resolution_of(s, f))
            for s, f in zip(ordered, files, strict=True)
        )
        documents = {
            "stats": _stats(commit, files, progress.parsed),
            "domains": msgspec.to_builtins(structure.domains),
            "segments": msgspec.to_builtins(structure.segments),
            "network": msgspec.to_builtins(structure.network),
            "history": history,
        }
        bulk.write_snapshot(
            conn,
            snapshot_id=snapshot_id,
            repository_id=inp.repository_id,
            run_id=inp.run_id,
            commit_sha=commit,
            created_at=now_ms(),
            files=rows,
            documents=documents,
            facts_schema=FACTS_SCHEMA_VERSION,
            summaries=encode_summaries(ordered),
        )
        clock.lap("write")
    clock.total()
    return SnapshotResult(
        snapshot_id=snapshot_id,
        commit=commit,
        default_branch=branch,
        files_total=len(entries),
        files_parsed=progress.parsed,
        files_skipped=sum(1 for f in files if f.skipped),
        timings=clock.timings,
        failures=failures,
        notes=[*mirror.notes, *left_out],
    )


def _known(conn: Any, repository_id: str) -> dict[tuple[str, str], FileSummary]:
    """What an incremental index may reuse: the current snapshot's summaries (one value), or
    failing that every summary stored for the repository."""
    current = bulk.current_summaries(conn, repository_id, FACTS_SCHEMA_VERSION)
    if current is not None:
        return {(s.blob_sha, s.path): s for s in decode_summaries(current) if s.blob_sha}
    stored = bulk.known_summaries(conn, repository_id, FACTS_SCHEMA_VERSION)
    return {key: decode_summary(raw) for key, raw in stored.items()}


def _plan(
    entries: Sequence[TreeEntry], known: dict[tuple[str, str], FileSummary], max_bytes: int, progress: Progress
) -> tuple[dict[str, FileSummary], list[Item], dict[str, str]]:
    """Reuse what is known, skip what must not be read, and list what must be parsed."""
    summaries: dict[str, FileSummary] = {}
    modes: dict[str, str] = {}
    to_parse: list[Item] = []
    for entry in entries:
        modes[entry.path] = entry.mode
        size = entry.size or 0
        reason = _skip_reason(entry, max_bytes)
        if reason:
            language = language_for(entry.path) if reason == "oversized" else ""
            summaries[entry.path] = FileSummary(entry.path, language, size, 0, entry.blob_sha, reason)
            progress.skipped += 1
            progress.done += 1
            continue
        cached = known.get((entry.blob_sha, entry.path))
        if cached is not None and cached.skipped not in _NOT_READ:
            summaries[entry.path] = cached
            progress.done += 1
        else:
            to_parse.append((entry.path, entry.blob_sha, size))
    return summaries, to_parse, modes


def _skip_reason(entry: TreeEntry, max_bytes: int) -> str:
    # Symlinks are data (their target string), never followed; submodules are other repositories.
    if entry.is_submodule:
        return "submodule"
    if entry.is_symlink:
        return "symlink"
    if not entry.is_regular:
        return "unsupported_mode"
    if (entry.size or 0) > max_bytes:
        return "oversized"
    return ""


def _batches(items: list[Item], max_files: int, max_bytes: int) -> list[tuple[Item, ...]]:
    batches: list[tuple[Item, ...]] = []
    current: list[Item] = []
    size = 0
    for item in items:
        if current and (len(current) >= max_files or size + item[2] > max_bytes):
            batches.append(tuple(current))
            current, size = [], 0
        current.append(item)
        size += item[2]
    if current:
        batches.append(tuple(current))
    # Largest batches first: the last task to finish is then a small one (less idle core).
    batches.sort(key=lambda b: -sum(i[2] for i in b))
    return batches


def _extract(
    inp: PipelineInput,
    limits: Limits,
    pool: ExtractorPool,
    items: list[Item],
    summaries: dict[str, FileSummary],
    progress: Progress,
) -> list[str]:
    failures: list[str] = []
    if not items:
        return failures
    tasks = [
        ExtractTask(inp.dsn, str(inp.mirror), inp.repository_id, batch, limits.max_file_bytes)
        for batch in _batches(items, limits.batch_files, limits.batch_bytes)
    ]
    results: Iterator[Any] = pool.map(tasks, check=progress.check)
    try:
        for result in results:
            for raw in result.summaries:
                summary = decode_summary(raw)
                summaries[summary.path] = summary
                progress.parsed += 1
                progress.done += 1
                if summary.skipped:
                    progress.skipped += 1
            failures.extend(result.failures)
            progress.check()
    except Cancelled:
        raise
    except Exception as exc:
        progress.check()  # a repository deleted under us shows up as a failed write: say so
        raise IndexFailure("extraction_failed", f"extraction failed: {exc}"[:500], permanent=False) from exc
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()
    if failures:
        log.warning("%d files could not be extracted, e.g. %s", len(failures), failures[0])
    return failures


def _history(mirror: Path, commit: str, depth: int, paths: set[str], cache: Path | None) -> dict[str, Any]:
    try:
        report = summarize_history(commits_for(mirror, commit, depth, cache), only_paths=paths)
    except GitError as exc:
        raise git_failure(exc) from exc
    document = msgspec.to_builtins(report)
    document["depth"] = depth
    return document


def _stats(commit: str, files: Sequence[Any], parsed: int) -> dict[str, Any]:
    skipped = Counter(f.skipped for f in files if f.skipped)
    languages = Counter(f.language for f in files if f.language and not f.skipped)
    return {
        "commit": commit,
        "files": len(files),
        "files_parsed": parsed,
        "skipped": dict(sorted(skipped.items())),
        "languages": dict(languages.most_common()),
        "lines": sum(f.lines for f in files if not f.skipped),
        "bytes": sum(f.size for f in files),
    }


def _default_branch(mirror: Path) -> str:
    result = run_git(["symbolic-ref", "--quiet", "--short", "HEAD"], git_dir=mirror, check=False)
    return result.stdout.decode("utf-8", "replace").strip() if result.returncode == 0 else ""
