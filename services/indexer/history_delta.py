"""``history.summarize_history`` kept up to date by delta, for incremental indexes.

The history document covers the newest ``depth`` commits. A new index usually adds a commit or
two at the newest end and (once the window is full) drops as many at the oldest. ``HistoryState``
holds the sums behind the document (per file and per co-changing pair, over every path, filtered
to the tree's paths only when the document is written) and each file's entry already encoded,
so an update costs the commits that entered and left the window, not the files of the window.

Its document is byte for byte ``orjson.dumps(msgspec.to_builtins(summarize_history(...)))`` with
``depth`` added, which tests/indexer/test_history_delta.py checks on generated histories.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import msgspec
import orjson

from services.indexer.history import (
    DEFAULT_MAX_FILES_PER_COMMIT,
    CochangePairs,
    CommitLike,
    FileHistory,
    HotSpot,
    change_sized,
    cochange_rules,
    hot_spots,
    is_fix_commit,
)

TOP_HOT_SPOTS = 20
MIN_SUPPORT = 2
BLOCK = 512  # paths per block of the document's files array, joined once until one changes


@dataclass
class _File:
    commits: list[CommitLike] = field(default_factory=list)  # of the window touching it, newest first
    added: int = 0
    deleted: int = 0


@dataclass
class HistoryState:
    depth: int
    commits: list[CommitLike]  # the window, newest first
    files: dict[str, _File]
    file_commits: Counter[str]  # change-sized commits per path
    support: Counter[tuple[str, str]]  # change-sized commits per sorted pair
    huge: int
    encoded: dict[str, bytes]  # path -> its FileHistory, encoded
    histories: dict[str, FileHistory]
    # What the last document listed, kept so the next one costs the paths that moved: the
    # sorted paths of its files array in consecutive blocks (each with the first path it may
    # hold and its entries joined, None once one of them changed), the tree's paths it was
    # filtered by, the paths that entered or left ``files`` and those re-encoded since, and the
    # paths with two commits or more (hot spot material).
    blocks: list[list[str]] = field(default_factory=list)
    starts: list[str] = field(default_factory=list)
    joined: list[bytes | None] = field(default_factory=list)
    listed_for: frozenset[str] | None = None
    moved: set[str] = field(default_factory=set)
    stale: set[str] = field(default_factory=set)
    multi: set[str] = field(default_factory=set)

    @classmethod
    def build(cls, commits: Sequence[CommitLike], depth: int) -> HistoryState:
        state = cls(depth, [], {}, Counter(), Counter(), 0, {}, {})
        state._add(list(commits), at_front=False)
        return state

    def advance(self, commits: Sequence[CommitLike]) -> bool:
        """Move the window to ``commits`` (newest first). False when that is not the current
        window with commits added in front and the oldest dropped: build a new state then."""
        old = [c.sha for c in self.commits]
        new = [c.sha for c in commits]
        fresh = next(
            (n for n in range(len(new)) if len(new) - n <= len(old) and new[n:] == old[: len(new) - n]),
            len(new),
        )
        if fresh == len(new) and old:
            return False  # nothing in common: as costly as a new state, and simpler
        self._remove(self.commits[len(new) - fresh :])
        self._add(list(commits[:fresh]), at_front=True)
        return True

    def _add(self, commits: list[CommitLike], *, at_front: bool) -> None:
        dirty: set[str] = set()
        for commit in commits:
            for path, plus, minus in commit.files:
                entry = self.files.get(path)
                if entry is None:
                    entry = self.files[path] = _File()
                    self.moved.add(path)
                entry.added += plus
                entry.deleted += minus
            paths = list(dict.fromkeys(f[0] for f in commit.files))
            dirty.update(paths)
            self._pairs(commit, paths, 1)
        for commit in reversed(commits) if at_front else commits:
            for path in dict.fromkeys(f[0] for f in commit.files):
                if at_front:
                    self.files[path].commits.insert(0, commit)
                else:
                    self.files[path].commits.append(commit)
        self.commits = commits + self.commits if at_front else self.commits + commits
        self._refresh(dirty)

    def _remove(self, commits: list[CommitLike]) -> None:
        dirty: set[str] = set()
        gone = {id(c) for c in commits}
        for commit in commits:
            for path, plus, minus in commit.files:
                entry = self.files[path]
                entry.added -= plus
                entry.deleted -= minus
            paths = list(dict.fromkeys(f[0] for f in commit.files))
            dirty.update(paths)
            self._pairs(commit, paths, -1)
        for path in dirty:
            entry = self.files[path]
            entry.commits = [c for c in entry.commits if id(c) not in gone]
        del self.commits[len(self.commits) - len(commits) :]
        self._refresh(dirty)

    def _pairs(self, commit: CommitLike, paths: list[str], sign: int) -> None:
        if not change_sized(commit, DEFAULT_MAX_FILES_PER_COMMIT):
            self.huge += sign
            return
        ordered = sorted(paths)
        for path in ordered:
            self.file_commits[path] += sign
        for pair in combinations(ordered, 2):
            self.support[pair] += sign

    def _refresh(self, paths: set[str]) -> None:
        for path in paths:
            entry = self.files[path]
            if not entry.commits:
                del self.files[path]
                self.encoded.pop(path, None)
                self.histories.pop(path, None)
                self.moved.add(path)
                self.multi.discard(path)
                continue
            if len(entry.commits) >= 2:
                self.multi.add(path)
            else:
                self.multi.discard(path)
            history = _history(path, entry)
            self.histories[path] = history
            self.encoded[path] = orjson.dumps(msgspec.to_builtins(history))
            self.stale.add(path)

    def document(self, only_paths: Collection[str]) -> bytes:
        """The snapshot's history document, as ``pipeline`` stores it."""
        only = frozenset(only_paths)
        self._relist(only)
        pairs = {pair: n for pair, n in self.support.items() if n >= MIN_SUPPORT}
        cochanges = cochange_rules(CochangePairs(self.file_commits, pairs), only)
        spots = _hot_spots(self.histories[p] for p in self.multi if p in only)
        head = orjson.dumps({"commits": len(self.commits), "huge_commits": self.huge})
        # One copy: at 58k files the document is ~14 MB, and every ``+`` or nested join would
        # copy it again.
        parts = [head[:-1], b',"files":[']
        for k, block in enumerate(self.blocks):
            if block:
                parts += (b",", self._joined(k)) if len(parts) > 2 else (self._joined(k),)
        parts += (
            b'],"cochanges":',
            orjson.dumps(msgspec.to_builtins(cochanges)),
            b',"hot_spots":',
            orjson.dumps(msgspec.to_builtins(spots)),
            b',"depth":',
            orjson.dumps(self.depth),
            b"}",
        )
        return b"".join(parts)

    def _relist(self, only: frozenset[str]) -> None:
        """Bring the blocks to the sorted paths with a history that are among ``only``: the
        last list, corrected for the paths that moved since (in or out of ``files``, in or out
        of the tree); a block whose paths or entries changed is joined again."""
        if self.listed_for is None:
            listed = sorted(p for p in self.files if p in only)
            self.blocks = [listed[i : i + BLOCK] for i in range(0, len(listed), BLOCK)] or [[]]
            self.starts = [block[0] if block else "" for block in self.blocks]
            self.joined = [None] * len(self.blocks)
        else:
            for path in self.moved | (only ^ self.listed_for):
                k = self._block_of(path)
                block = self.blocks[k]
                at = bisect_left(block, path)
                have = at < len(block) and block[at] == path
                want = path in self.files and path in only
                if want and not have:
                    block.insert(at, path)
                    self.joined[k] = None
                elif have and not want:
                    del block[at]
                    self.joined[k] = None
            for path in self.stale:
                k = self._block_of(path)
                if self.joined[k] is not None and path in only and path in self.files:
                    self.joined[k] = None
            self._split()
        self.listed_for = only
        self.moved = set()
        self.stale = set()

    def _block_of(self, path: str) -> int:
        # The first block starts with "" or its first path; each later one at its first path
        # when made. A block keeps its start, so order holds as paths come and go.
        return max(bisect_right(self.starts, path) - 1, 0)

    def _split(self) -> None:
        k = 0
        while k < len(self.blocks):
            block = self.blocks[k]
            if len(block) > 2 * BLOCK:
                self.blocks[k : k + 1] = [block[:BLOCK], block[BLOCK:]]
                self.starts.insert(k + 1, block[BLOCK])
                self.joined[k : k + 1] = [None, None]
            k += 1

    def _joined(self, k: int) -> bytes:
        joined = self.joined[k]
        if joined is None:
            joined = self.joined[k] = b",".join(self.encoded[p] for p in self.blocks[k])
        return joined


def _history(path: str, entry: _File) -> FileHistory:
    authors = {(c.author_email or c.author_name).lower() for c in entry.commits}
    first = min(c.timestamp for c in entry.commits)
    last = entry.commits[0]
    for commit in entry.commits:  # newest first: on equal times the newest listed wins
        if commit.timestamp > last.timestamp:
            last = commit
    return FileHistory(
        path=path,
        commits=len(entry.commits),
        authors=len(authors),
        added=entry.added,
        deleted=entry.deleted,
        churn=entry.added + entry.deleted,
        fix_commits=sum(is_fix_commit(c.subject) for c in entry.commits),
        first_timestamp=first,
        last_timestamp=last.timestamp,
        last_sha=last.sha,
    )


def _hot_spots(histories: Iterable[FileHistory]) -> list[HotSpot]:
    return hot_spots(histories, top_k=TOP_HOT_SPOTS)
