"""``history.summarize_history`` kept up to date by delta, for incremental indexes.

The history covers the newest ``depth`` commits. A new index usually adds a commit or two at the
newest end and (once the window is full) drops as many at the oldest. ``HistoryState`` holds the
sums behind it (per file and per co-changing pair, over every path, filtered to the tree's paths
only when rows are listed), so an update costs the commits that entered and left the window, not
the files of the window.

What is stored is split by how it changes (docs/indexing.md#history-by-version-range):

- one row per path of the tree with a history (``HistoryRow``: its ``FileHistory`` and the
  co-change rules of which it is the source), stored by version range like the file list, so an
  index writes only the rows that changed: the paths of the commits that entered or left the
  window, the paths that entered or left the tree, and the co-change partners of the latter;
- a small head document: the window's counts, the number of files and rules, the hot spots.

Together they are ``summarize_history`` over the window with ``depth`` added
(``assemble`` puts them back together), which tests/indexer/test_history_delta.py checks on
generated histories.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import orjson

from services.indexer.history import (
    DEFAULT_MAX_FILES_PER_COMMIT,
    CommitLike,
    FileHistory,
    change_sized,
    hot_spot_score,
    hot_spots,
    is_fix_commit,
)

TOP_HOT_SPOTS = 20
MIN_SUPPORT = 2
MAX_RULES_PER_FILE = 50  # as history.cochange_pairs' max_targets_per_file

# path, commits, authors, added, deleted, churn, fix_commits, first_timestamp, last_timestamp,
# last_sha, cochanges (rules with this path as source), rules: JSON [[target, support, confidence]]
# in the order ``cochange_rules`` gives them, None when there is none.
HistoryRow = tuple[str, int, int, int, int, int, int, int, int, str, int, bytes | None]
HISTORY_COLUMNS = (
    "path",
    "commits",
    "authors",
    "added",
    "deleted",
    "churn",
    "fix_commits",
    "first_timestamp",
    "last_timestamp",
    "last_sha",
    "cochanges",
    "rules",
)
HISTORY_TYPES = ("text", "int4", "int4", "int8", "int8", "int8", "int4", "int8", "int8", "varchar", "int4", "bytea")


@dataclass
class HistoryRows:
    """What one index writes of the history: the head document, the rows that differ from the
    last listing, and the paths whose rows they replace or that left it (None: the whole list,
    when there was no last listing)."""

    head: bytes
    rows: list[HistoryRow]
    replaced: list[str] | None


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
    support: Counter[tuple[str, str]]  # change-sized commits per sorted pair (no zeros)
    partners: dict[str, set[str]]  # the other path of every pair with support
    huge: int
    histories: dict[str, FileHistory]
    # What the last listing wrote, kept so the next one costs the paths that moved: the tree's
    # paths it was filtered by, its rows, the paths whose history or pairs changed since, the
    # hot spot ranking ((-score, path) of its paths with two commits or more) and its rule count.
    listed_for: frozenset[str] | None = None
    written: dict[str, HistoryRow] = field(default_factory=dict)
    dirty: set[str] = field(default_factory=set)
    ranked: list[tuple[float, str]] = field(default_factory=list)
    rules: int = 0

    @classmethod
    def build(cls, commits: Sequence[CommitLike], depth: int) -> HistoryState:
        state = cls(depth, [], {}, Counter(), Counter(), {}, 0, {})
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
            n = self.support[pair] + sign
            a, b = pair
            if n:
                self.support[pair] = n
                self.partners.setdefault(a, set()).add(b)
                self.partners.setdefault(b, set()).add(a)
            else:
                del self.support[pair]
                self.partners[a].discard(b)
                self.partners[b].discard(a)

    def _refresh(self, paths: set[str]) -> None:
        self.dirty |= paths
        for path in paths:
            entry = self.files[path]
            if not entry.commits:
                del self.files[path]
                self.histories.pop(path, None)
                continue
            self.histories[path] = _history(path, entry)

    def listing(self, only_paths: Collection[str]) -> HistoryRows:
        """The snapshot's history for a tree of ``only_paths``: its head document and the rows
        that changed since the last listing (all of them the first time)."""
        only = frozenset(only_paths)
        first = self.listed_for is None
        if first:
            candidates: Iterable[str] = self.files
        else:
            assert self.listed_for is not None
            entered_or_left = only ^ self.listed_for
            around = set(self.dirty) | entered_or_left
            for path in entered_or_left:  # its pairs' rules keep or lose it as a target
                around |= self.partners.get(path, set())
            candidates = around
        rows: list[HistoryRow] = []
        replaced: list[str] = []
        ranks: list[tuple[float, str]] = []
        for path in candidates:
            row = self._row(path, only) if path in only and path in self.files else None
            before = self.written.get(path)
            if row == before:
                continue
            if before is not None:
                self.rules -= before[10]
                self._unrank(before)
                replaced.append(path)
            if row is None:
                del self.written[path]
                continue
            self.written[path] = row
            self.rules += row[10]
            if row[1] >= 2:  # hot spots need two commits (history.hot_spots' min_commits)
                ranks.append(_rank(row))
            rows.append(row)
        if len(ranks) > 64:  # a first listing: one sort, not an insertion each
            self.ranked += ranks
            self.ranked.sort()
        else:
            for key in ranks:
                insort(self.ranked, key)
        self.listed_for = only
        self.dirty = set()
        rows.sort()
        replaced.sort()
        head = {
            "commits": len(self.commits),
            "huge_commits": self.huge,
            "file_count": len(self.written),
            "cochange_pairs": self.rules,
            "hot_spots": [_spot(self.histories[path]) for _key, path in self.ranked[:TOP_HOT_SPOTS]],
            "depth": self.depth,
        }
        return HistoryRows(orjson.dumps(head), rows, None if first else replaced)

    def _row(self, path: str, only: frozenset[str]) -> HistoryRow:
        h = self.histories[path]
        rules = self._rules(path, only)
        return (
            path,
            h.commits,
            h.authors,
            h.added,
            h.deleted,
            h.churn,
            h.fix_commits,
            h.first_timestamp,
            h.last_timestamp,
            h.last_sha,
            len(rules),
            orjson.dumps(rules) if rules else None,
        )

    def _rules(self, source: str, only: frozenset[str]) -> list[tuple[str, int, float]]:
        """``history.cochange_rules``' rules of ``source``, as [target, support, confidence]."""
        rules: list[tuple[str, int, float]] = []
        commits = self.file_commits[source]
        for target in self.partners.get(source, ()):
            both = self.support[(source, target) if source < target else (target, source)]
            if both >= MIN_SUPPORT and target in only:
                rules.append((target, both, round(both / commits, 4)))
        rules.sort(key=lambda r: (-r[2], -r[1], r[0]))
        return rules[:MAX_RULES_PER_FILE]

    def _unrank(self, row: HistoryRow) -> None:
        if row[1] >= 2:
            key = _rank(row)
            at = bisect_left(self.ranked, key)
            if at < len(self.ranked) and self.ranked[at] == key:
                del self.ranked[at]


def _rank(row: HistoryRow) -> tuple[float, str]:
    return (-round(hot_spot_score(row[1], row[5], row[6]), 4), row[0])


def _spot(history: FileHistory) -> dict[str, Any]:
    (spot,) = hot_spots([history], top_k=1)
    return {
        "path": spot.path,
        "score": spot.score,
        "commits": spot.commits,
        "churn": spot.churn,
        "fix_commits": spot.fix_commits,
    }


def file_history(row: Sequence[Any]) -> dict[str, Any]:
    """A stored row's ``FileHistory`` as the API shows it (the columns, in their order)."""
    return dict(zip(HISTORY_COLUMNS[:10], row[:10], strict=True))


def cochange_rules_of(path: str, rules: bytes | None) -> list[dict[str, Any]]:
    """A stored row's rules as ``CoChange`` records with ``path`` as their source."""
    if not rules:
        return []
    return [
        {"source": path, "target": target, "support": support, "confidence": confidence}
        for target, support, confidence in orjson.loads(rules)
    ]


def assemble(head: bytes, rows: Iterable[Sequence[Any]]) -> dict[str, Any]:
    """The whole history (``summarize_history`` with ``depth``) from the head and the rows in
    path order: what the history was when it was one document."""
    document = orjson.loads(head)
    listed = list(rows)
    return {
        "commits": document["commits"],
        "huge_commits": document["huge_commits"],
        "files": [file_history(row) for row in listed],
        "cochanges": [rule for row in listed for rule in cochange_rules_of(row[0], row[11])],
        "hot_spots": document["hot_spots"],
        "depth": document["depth"],
    }


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
