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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import msgspec
import orjson

from services.indexer import bulk
from services.indexer.addressable import split_addressable
from services.indexer.delta import STATES, IndexState, StateCache, same_shape
from services.indexer.extraction import ExtractorPool, ExtractTask, Item
from services.indexer.facts_codec import (
    FileSummary,
    decode_summary,
    resolution_of,
    summary_to_facts,
)
from services.indexer.git import (
    CloneUrl,
    Commit,
    GitError,
    GitInputError,
    LocalRepository,
    TreeEntry,
    ensure_mirror,
    list_tree,
    modified_entries,
    resolve_ref,
    run_git,
)
from services.indexer.history_cache import commits_for
from services.indexer.history_delta import HISTORY_COLUMNS, HISTORY_TYPES, HistoryRows, HistoryState
from services.indexer.models import new_id, now_ms
from services.indexer.structure import Structure, analyze_structure, source_modules, source_rule, with_line_changes
from services.source.facts import FACTS_SCHEMA_VERSION, FileFacts
from services.source.imports import Resolver
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
    by_delta: list[str] = field(default_factory=list)  # phases that worked from the last index's state


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


def build_snapshot(
    inp: PipelineInput, limits: Limits, pool: ExtractorPool, progress: Progress, states: StateCache = STATES
) -> SnapshotResult:
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
        # The mirror resolved HEAD already (one git process fewer on every index).
        commit = mirror.head if inp.ref in ("", "HEAD") else resolve_ref(mirror.path, inp.ref)
        branch = _default_branch(mirror.path)
        clock.lap("fetch")
    except GitError as exc:
        raise git_failure(exc) from exc

    with bulk.connect(inp.dsn) as conn:
        # Whatever state this process holds is taken out: a full run rebuilds it, and a run that
        # fails halfway must not leave it half-updated.
        current = bulk.current_snapshot_id(conn, inp.repository_id)
        state = states.take(inp.repository_id, current) if inp.incremental else None
        progress.phase = "listing"
        try:
            modified = modified_entries(mirror.path, state.commit, commit) if state is not None else None
            if modified is None or state is None:
                entries, left_out = split_addressable(list_tree(mirror.path, commit, max_entries=limits.max_files))
            else:
                # Same paths as the state's tree, so the same ones are left out as then.
                left_out = state.left_out
                by_path = {e.path: e for e in modified if e.path in state.entries}
                modified = list(by_path.values())
                entries = [by_path.get(path, entry) for path, entry in state.entries.items()]
        except GitError as exc:
            raise git_failure(exc) from exc
        clock.lap("tree")
        progress.total = len(entries)
        known = _known(conn, inp.repository_id) if inp.incremental and state is None else {}
        # Without the state, the current snapshot's rows as stored: only those that differ are
        # written (a restarted process's first index would otherwise rewrite every list whole).
        stored = (
            bulk.stored_lists(conn, current, HISTORY_COLUMNS)
            if inp.incremental and state is None and current is not None
            else None
        )
        clock.lap("load")
        if state is not None:
            changed, removed = (modified, []) if modified is not None else _changes(entries, state)
            known = {(s.blob_sha, s.path): s for s in (state.summaries.get(e.path) for e in changed) if s}
            summaries, to_parse, modes = _plan(changed, known, limits.max_file_bytes, progress)
            progress.done += len(entries) - len(changed)
        else:
            changed, removed = list(entries), []
            summaries, to_parse, modes = _plan(entries, known, limits.max_file_bytes, progress)
        progress.phase = "extracting"
        failures = _extract(inp, limits, pool, to_parse, summaries, progress)
        clock.lap("extract")
        progress.phase = "analyzing"
        tree = _Tree.build(entries, changed, removed, summaries, modes, state)
        clock.lap("resolve")
        structure, encoded = tree.structure()
        clock.lap("structure")
        progress.check()
        history, history_state, history_by_delta = _history(
            mirror.path, commit, limits.history_depth, tree.paths(), inp.history_cache, state, stored
        )
        clock.lap("history")
        progress.check()
        progress.phase = "writing"
        snapshot_id = new_id()
        rows, base = tree.rows(current, stored)
        documents: dict[str, Any] = {
            "stats": tree.stats(commit, progress.parsed),
            **encoded,
            "history": history.head,
        }
        written_by_delta = bulk.write_snapshot(
            conn,
            snapshot_id=snapshot_id,
            repository_id=inp.repository_id,
            run_id=inp.run_id,
            commit_sha=commit,
            created_at=now_ms(),
            lists=[
                bulk.file_versions(rows, base[1] if base is not None else None),
                bulk.Versions(
                    "history_versions",
                    "snapshot_histories",
                    HISTORY_COLUMNS,
                    HISTORY_TYPES,
                    history.rows,
                    history.replaced if base is not None else None,
                ),
            ],
            documents=documents,
            facts_schema=FACTS_SCHEMA_VERSION,
            base=base[0] if base is not None else None,
            same_as_base=tree.same_documents,
        )
        clock.lap("write")
    states.put(tree.state(inp.repository_id, snapshot_id, commit, structure, encoded, history_state, left_out))
    clock.total()
    return SnapshotResult(
        snapshot_id=snapshot_id,
        commit=commit,
        default_branch=branch,
        files_total=len(entries),
        files_parsed=progress.parsed,
        files_skipped=tree.skipped_count(),
        timings=clock.timings,
        failures=failures,
        notes=[*mirror.notes, *left_out],
        by_delta=[
            phase
            for phase, done in (
                ("load", state is not None),
                ("resolve", tree.changed is not None),
                ("structure", tree.structure_by_delta),
                ("history", history_by_delta),
                ("write", "file_versions" in written_by_delta),
            )
            if done
        ],
    )


def _changes(entries: Sequence[TreeEntry], state: IndexState) -> tuple[list[TreeEntry], list[str]]:
    """Entries new or different since the state's tree, and the paths gone from it."""
    before = state.entries
    changed = [e for e in entries if before.get(e.path) != e]
    removed: list[str] = []
    if len(entries) - len(changed) != len(before):
        now = {e.path for e in entries}
        removed = [p for p in before if p not in now]
    return changed, removed


class _Tree:
    """The new tree's files, resolved, with what changed since the state it came from.

    ``build`` re-resolves only the changed files when the resolver says nothing else can move
    (``Resolver.reusable_for``), otherwise the whole tree; both give what a full index gives.
    """

    def __init__(
        self,
        entries: dict[str, TreeEntry],
        summaries: dict[str, FileSummary],
        files: dict[str, FileFacts],
        resolver: Resolver,
        state: IndexState | None,
        changed: list[str] | None,
    ) -> None:
        self.entries = entries
        self.summaries = summaries
        self.files = files
        self.resolver = resolver
        self.previous = state
        self.changed = changed  # paths re-resolved by delta; None after a full resolution
        self.old_files: dict[str, FileFacts] = {}
        self.modules: dict[str, str] = state.modules if state is not None else {}
        self.rule = state.rule if state is not None else ""
        self.all_rows: dict[str, bulk.FileRow] = {}
        self.structure_by_delta = False
        self.same_documents: set[str] = set()  # documents equal to the previous snapshot's
        self.sums: dict[str, Any] = {}  # of the statistics document (``stats``)

    @classmethod
    def build(
        cls,
        entries: Sequence[TreeEntry],
        changed: list[TreeEntry],
        removed: list[str],
        new_summaries: dict[str, FileSummary],
        modes: dict[str, str],
        state: IndexState | None,
    ) -> _Tree:
        if state is not None and not removed and all(e.path in state.entries for e in changed):
            fresh = [summary_to_facts(new_summaries[e.path]) for e in changed]
            if state.resolver.reusable_for(fresh):
                old_files = {e.path: state.files[e.path] for e in changed}
                state.resolver.update(fresh)
                for e, facts in zip(changed, fresh, strict=True):
                    state.entries[e.path] = e
                    state.summaries[e.path] = new_summaries[e.path]
                    state.files[e.path] = state.resolver.resolve(facts)
                tree = cls(
                    state.entries, state.summaries, state.files, state.resolver, state, [e.path for e in changed]
                )
                tree.old_files = old_files
                return tree
        summaries = dict(state.summaries) if state is not None else {}
        for path in removed:
            summaries.pop(path, None)
        summaries.update(new_summaries)
        ordered = [summary_to_facts(summaries[e.path]) for e in entries]
        resolver = Resolver(ordered)
        files = {f.path: resolver.resolve(f) for f in ordered}
        by_path = {e.path: e for e in entries}
        return cls(by_path, {e.path: summaries[e.path] for e in entries}, files, resolver, state, None)

    def paths(self) -> set[str]:
        return set(self.entries)

    def ordered_files(self) -> list[FileFacts]:
        return list(self.files.values())  # built in tree order; updates by delta keep it

    def skipped_count(self) -> int:
        return sum(1 for f in self.files.values() if f.skipped)

    def stats(self, commit: str, parsed: int) -> dict[str, Any]:
        """The statistics document. After a structure by delta (same languages, skip reasons
        and files) only the line and byte sums move: adjusted by the changed files."""
        state = self.previous
        if self.structure_by_delta and state is not None and state.sums:
            sums = dict(state.sums)
            for path in self.changed or ():
                old, new = self.old_files[path], self.files[path]
                sums["lines"] += (0 if new.skipped else new.lines) - (0 if old.skipped else old.lines)
                sums["bytes"] += new.size - old.size
        else:
            sums = _sums(self.ordered_files())
        self.sums = sums
        return {
            "commit": commit,
            "files": sums["files"],
            "files_parsed": parsed,
            **{k: v for k, v in sums.items() if k != "files"},
        }

    def structure(self) -> tuple[Structure, dict[str, bytes]]:
        """The structure and its three documents, encoded; by delta when only line counts moved."""
        state = self.previous
        if state is not None and self.changed is not None:
            pairs = [(self.old_files[p], self.files[p]) for p in self.changed]
            if all(same_shape(old, new, self.modules) for old, new in pairs):
                structure = with_line_changes(state.structure, pairs, state.rule)
                encoded = dict(state.documents)
                encoded["domains"] = _encode(structure.domains)
                self.structure_by_delta = True
                self.same_documents = {"segments", "network"}
                return structure, encoded
        files = self.ordered_files()
        structure = analyze_structure(files)
        self.modules = source_modules(files)
        self.rule = source_rule(files)
        return structure, {
            "domains": _encode(structure.domains),
            "segments": _encode(structure.segments),
            "network": _encode(structure.network),
        }

    def rows(
        self, current: str | None, stored: bulk.StoredLists | None = None
    ) -> tuple[list[bulk.FileRow], tuple[str, list[str]] | None]:
        """The snapshot_files rows to send, and the snapshot (with the paths to leave out) whose
        other rows the server copies: only rows that differ from the current snapshot (as the
        state or ``stored`` has it) travel."""
        state = self.previous
        if self.changed is not None:
            candidates: Iterable[str] = self.changed
        else:
            candidates = self.entries
        fresh: dict[str, bulk.FileRow] = {}
        for path in candidates:
            entry = self.entries[path]
            summary = self.summaries[path]
            facts = self.files[path]
            fresh[path] = (
                path,
                facts.blob_sha,
                entry.mode,
                facts.size,
                facts.language,
                facts.skipped,
                resolution_of(summary, facts),
            )
        if stored is not None and stored.snapshot_id == current:
            send = [row for path, row in fresh.items() if stored.files.get(path) != row]
            gone = [p for p in stored.files if p not in self.entries]
            base = (current, [row[0] for row in send] + gone)
        elif state is None or current is None or state.snapshot_id != current:
            send, base = list(fresh.values()), None
        else:
            send = [row for path, row in fresh.items() if state.rows.get(path) != row]
            gone = [p for p in state.rows if p not in self.entries] if self.changed is None else []
            base = (current, [row[0] for row in send] + gone)
        if self.changed is None or state is None:
            self.all_rows = fresh
        else:
            self.all_rows = state.rows
            self.all_rows.update(fresh)
        return send, base

    def state(
        self,
        repository_id: str,
        snapshot_id: str,
        commit: str,
        structure: Structure,
        documents: dict[str, bytes],
        history: HistoryState,
        left_out: list[str],
    ) -> IndexState:
        return IndexState(
            repository_id=repository_id,
            snapshot_id=snapshot_id,
            commit=commit,
            entries=self.entries,
            summaries=self.summaries,
            files=self.files,
            resolver=self.resolver,
            structure=structure,
            modules=self.modules,
            rule=self.rule,
            rows=self.all_rows,
            documents=documents,
            sums=self.sums,
            history=history,
            left_out=left_out,
        )


def _encode(value: Any) -> bytes:
    return orjson.dumps(msgspec.to_builtins(value))


def _known(conn: Any, repository_id: str) -> dict[tuple[str, str], FileSummary]:
    """What an incremental index may reuse: the summaries of the current snapshot's files, or
    failing that every summary stored for the repository."""
    stored = bulk.current_summaries(conn, repository_id, FACTS_SCHEMA_VERSION)
    if stored is None:
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


def _history(
    mirror: Path,
    commit: str,
    depth: int,
    paths: set[str],
    cache: Path | None,
    state: IndexState | None,
    stored: bulk.StoredLists | None = None,
) -> tuple[HistoryRows, HistoryState, bool]:
    """The history's head document and changed rows, and the sums behind them for the next index
    (by delta when this process holds the last index's; else the rows that differ from
    ``stored``, when given)."""
    previous = state.history if state is not None and state.history.depth == depth else None
    known = (state.commit, cast(list[Commit], previous.commits)) if state is not None and previous else None
    try:
        commits = commits_for(mirror, commit, depth, cache, known)
    except GitError as exc:
        raise git_failure(exc) from exc
    if previous is not None and previous.advance(commits):
        return previous.listing(paths), previous, True
    previous = HistoryState.build(commits, depth)
    listing = previous.listing(paths)
    if stored is not None:
        listing.rows = [row for row in listing.rows if stored.histories.get(row[0]) != row]
        listing.replaced = [row[0] for row in listing.rows] + [p for p in stored.histories if p not in previous.written]
    return listing, previous, False


def _sums(files: Sequence[FileFacts]) -> dict[str, Any]:
    """The statistics document but for the commit and the run's work, in its key order."""
    skipped = Counter(f.skipped for f in files if f.skipped)
    languages = Counter(f.language for f in files if f.language and not f.skipped)
    return {
        "files": len(files),
        "skipped": dict(sorted(skipped.items())),
        "languages": dict(languages.most_common()),
        "lines": sum(f.lines for f in files if not f.skipped),
        "bytes": sum(f.size for f in files),
    }


def _default_branch(mirror: Path) -> str:
    result = run_git(["symbolic-ref", "--quiet", "--short", "HEAD"], git_dir=mirror, check=False)
    return result.stdout.decode("utf-8", "replace").strip() if result.returncode == 0 else ""
