"""What a repository's history says about each file: activity, ownership spread, fixes,
which files change together, and where change concentrates (hot spots).

Pure functions over commits as ``services.indexer.git.log.read_log`` yields them (newest
first); any object with the same attributes works, so tests build commits directly.
Results are msgspec Structs and encode to JSON as they are.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import combinations
from typing import NamedTuple, Protocol

import msgspec

DEFAULT_MAX_FILES_PER_COMMIT = 30

# Word-bounded so "prefix", "debug" or "monkeypatch" do not count; conventional-commit
# prefixes ("fix:", "fix(parser):") match through the word boundary.
FIX_PATTERN = re.compile(
    r"\b(?:fix(?:e[sd]|ing)?|bug(?:s|fix(?:es)?)?|hotfix(?:es)?|patch(?:es|ed)?|regressions?"
    r"|crash(?:es|ed|ing)?|defects?|faults?|segfaults?)\b",
    re.IGNORECASE,
)


# A release or version bump touches the changelog, the version module and whatever was last
# changed: its file set is the calendar's, not a change's.
RELEASE_PATTERN = re.compile(
    r"^\s*(?:\[?release\]?\b|releas(?:e|ing)\s+v?\d|prepar(?:e|ing)\s+(?:for\s+)?(?:the\s+)?(?:\S+\s+)?release"
    r"|(?:bump(?:ed)?\s+(?:the\s+)?version|version\s+bump)|bump\s+(?:to\s+)?v?\d+\.\d"
    r"|chore\(release\)|v?\d+\.\d+(?:\.\d+)*(?:[-.+]?\w+)*\s*$)",
    re.IGNORECASE,
)
# Bulk reformatting and tool sweeps: every file a formatter or linter touched changes "together".
BULK_PATTERN = re.compile(
    r"^\s*(?:style|fmt|format)(?:\(.*?\))?\s*:|^\s*(?:re-?)?format\s+(?:the\s+|all\s+)?(?:code|codebase|files|sources?)\b"
    r"|\b(?:re-?format(?:ted|ting|s)?|(?:apply|run(?:ning)?|ran|update|upgrade)\s+(?:the\s+)?"
    r"(?:black|isort|ruff|prettier|clang-format|gofmt|rustfmt|autopep8|yapf|pre-commit|pyupgrade|formatter)"
    r"|pre-commit\s+autoupdate|trailing\s+whitespace|license\s+headers?|copyright\s+(?:year|headers?))\b",
    re.IGNORECASE,
)


def change_sized(commit: CommitLike, max_files_per_commit: int = DEFAULT_MAX_FILES_PER_COMMIT) -> bool:
    """Whether a commit is one change a reviewer would read as a unit: not too many files, not a
    release or version bump, not a formatter or linter sweep (merges never reach here: ``read_log``
    leaves them out). Only these teach which files change together."""
    if len({f[0] for f in commit.files}) > max_files_per_commit:
        return False
    subject = commit.subject
    return not (RELEASE_PATTERN.search(subject) or BULK_PATTERN.search(subject))


class CommitLike(Protocol):
    @property
    def sha(self) -> str: ...
    @property
    def author_email(self) -> str: ...
    @property
    def author_name(self) -> str: ...
    @property
    def timestamp(self) -> int: ...
    @property
    def subject(self) -> str: ...
    @property
    def files(self) -> Sequence[tuple[str, int, int]]: ...


class FileHistory(msgspec.Struct, frozen=True):
    path: str
    commits: int
    authors: int  # distinct author emails (case-insensitive)
    added: int
    deleted: int
    churn: int  # added + deleted; binary files contribute 0
    fix_commits: int  # commits whose subject reads like a fix
    first_timestamp: int
    last_timestamp: int
    last_sha: str


class CoChange(msgspec.Struct, frozen=True):
    """``target`` changed in ``support`` of the commits that changed ``source``."""

    source: str
    target: str
    support: int  # commits containing both files
    confidence: float  # support / commits of source (among commits small enough to count)


class HotSpot(msgspec.Struct, frozen=True):
    path: str
    score: float
    commits: int
    churn: int
    fix_commits: int


class CoChangeSuggestion(msgspec.Struct, frozen=True):
    path: str
    confidence: float
    support: int
    because: tuple[str, ...]  # changed files that predict this one at that confidence


class HistoryReport(msgspec.Struct):
    commits: int
    huge_commits: int  # skipped for co-change: too many files, a release, a formatter sweep
    files: list[FileHistory]
    cochanges: list[CoChange]
    hot_spots: list[HotSpot]


def is_fix_commit(subject: str) -> bool:
    return FIX_PATTERN.search(subject) is not None


def _paths(commit: CommitLike, only: Collection[str] | None) -> list[str]:
    seen = dict.fromkeys(f[0] for f in commit.files)
    return [p for p in seen if only is None or p in only]


def file_histories(commits: Iterable[CommitLike], *, only_paths: Collection[str] | None = None) -> list[FileHistory]:
    """Per-file statistics, sorted by path. ``only_paths`` keeps e.g. the files still in HEAD.

    On equal timestamps the first commit listed wins "last change" (newest-first input).
    """
    count: dict[str, int] = defaultdict(int)
    added: dict[str, int] = defaultdict(int)
    deleted: dict[str, int] = defaultdict(int)
    fixes: dict[str, int] = defaultdict(int)
    authors: dict[str, set[str]] = defaultdict(set)
    first: dict[str, int] = {}
    last: dict[str, tuple[int, str]] = {}
    for commit in commits:
        fix = is_fix_commit(commit.subject)
        author = (commit.author_email or commit.author_name).lower()
        for path, plus, minus in commit.files:
            if only_paths is not None and path not in only_paths:
                continue
            added[path] += plus
            deleted[path] += minus
        for path in _paths(commit, only_paths):
            count[path] += 1
            fixes[path] += fix
            authors[path].add(author)
            if path not in first or commit.timestamp < first[path]:
                first[path] = commit.timestamp
            if path not in last or commit.timestamp > last[path][0]:
                last[path] = (commit.timestamp, commit.sha)
    return [
        FileHistory(
            path=path,
            commits=count[path],
            authors=len(authors[path]),
            added=added[path],
            deleted=deleted[path],
            churn=added[path] + deleted[path],
            fix_commits=fixes[path],
            first_timestamp=first[path],
            last_timestamp=last[path][0],
            last_sha=last[path][1],
        )
        for path in sorted(count)
    ]


def cochange_pairs(
    commits: Iterable[CommitLike],
    *,
    max_files_per_commit: int = DEFAULT_MAX_FILES_PER_COMMIT,
    min_support: int = 2,
    min_confidence: float = 0.0,
    max_targets_per_file: int | None = 50,
    only_paths: Collection[str] | None = None,
) -> list[CoChange]:
    """Association rules ``source -> target`` in both directions, sorted by source then strength.

    Only change-sized commits count (``change_sized``): those touching more than
    ``max_files_per_commit`` files (mass reformatting, license headers, vendoring), releases and
    formatter sweeps are ignored entirely, for the pairs and for the denominators, so they neither
    create links nor dilute the confidence of real ones. Size is measured before ``only_paths``
    filtering: a huge commit stays huge even if most of its files are gone.
    """
    file_commits: dict[str, int] = defaultdict(int)
    support: dict[tuple[str, str], int] = defaultdict(int)
    for commit in commits:
        if not change_sized(commit, max_files_per_commit):
            continue
        paths = sorted(_paths(commit, only_paths))
        for path in paths:
            file_commits[path] += 1
        for pair in combinations(paths, 2):
            support[pair] += 1
    return cochange_rules(
        CochangePairs(file_commits, support),
        min_support=min_support,
        min_confidence=min_confidence,
        max_targets_per_file=max_targets_per_file,
    )


class CochangePairs(NamedTuple):
    file_commits: Mapping[str, int]  # change-sized commits per path
    support: Mapping[tuple[str, str], int]  # change-sized commits per pair (a < b)


def cochange_rules(
    pairs: CochangePairs,
    only_paths: Collection[str] | None = None,
    *,
    min_support: int = 2,
    min_confidence: float = 0.0,
    max_targets_per_file: int | None = 50,
) -> list[CoChange]:
    """The rules of ``cochange_pairs`` from its counts; ``only_paths`` keeps the pairs of
    which both files are among them (the same as counting only those files)."""
    by_source: dict[str, list[CoChange]] = defaultdict(list)
    for (a, b), both in pairs.support.items():
        if both < min_support or (only_paths is not None and (a not in only_paths or b not in only_paths)):
            continue
        for source, target in ((a, b), (b, a)):
            confidence = both / pairs.file_commits[source]
            if confidence >= min_confidence:
                by_source[source].append(CoChange(source, target, both, round(confidence, 4)))
    result: list[CoChange] = []
    for source in sorted(by_source):
        rules = sorted(by_source[source], key=lambda r: (-r.confidence, -r.support, r.target))
        result.extend(rules[:max_targets_per_file] if max_targets_per_file else rules)
    return result


def hot_spot_score(commits: int, churn: int, fix_commits: int) -> float:
    """``(commits + fix_commits) * log2(1 + churn)``.

    Change frequency is the strongest predictor of defects, so commits dominate; fix
    commits count twice because a file that keeps needing fixes is the point of the ranking.
    Churn enters logarithmically so one generated or vendored rewrite cannot top the list.
    """
    return (commits + fix_commits) * math.log2(1 + churn)


def hot_spots(histories: Iterable[FileHistory], *, top_k: int = 20, min_commits: int = 2) -> list[HotSpot]:
    spots = [
        HotSpot(h.path, round(hot_spot_score(h.commits, h.churn, h.fix_commits), 4), h.commits, h.churn, h.fix_commits)
        for h in histories
        if h.commits >= min_commits
    ]
    spots.sort(key=lambda s: (-s.score, s.path))
    return spots[:top_k]


def index_cochanges(pairs: Iterable[CoChange]) -> dict[str, list[CoChange]]:
    index: dict[str, list[CoChange]] = defaultdict(list)
    for pair in pairs:
        index[pair.source].append(pair)
    return dict(index)


def suggest_cochanges(
    pairs: Iterable[CoChange] | Mapping[str, Sequence[CoChange]],
    changed_paths: Iterable[str],
    top_k: int = 10,
    *,
    min_confidence: float = 0.0,
) -> list[CoChangeSuggestion]:
    """Files that usually change with ``changed_paths`` but are not among them (ROSE-style).

    Each candidate is scored by its strongest rule from any changed file (max confidence,
    then support); ``because`` lists every changed file with a rule of that strength. Pass
    ``index_cochanges(pairs)`` when asking many times (a replay benchmark).
    """
    index = pairs if isinstance(pairs, Mapping) else index_cochanges(pairs)
    changed = set(changed_paths)
    best: dict[str, tuple[float, int, list[str]]] = {}
    for source in sorted(changed):
        for rule in index.get(source, ()):
            if rule.target in changed or rule.confidence < min_confidence:
                continue
            current = best.get(rule.target)
            key = (rule.confidence, rule.support)
            if current is None or key > current[:2]:
                best[rule.target] = (rule.confidence, rule.support, [source])
            elif key == current[:2]:
                current[2].append(source)
    ranked = sorted(best.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))
    return [CoChangeSuggestion(path, conf, sup, tuple(because)) for path, (conf, sup, because) in ranked[:top_k]]


def summarize_history(
    commits: Iterable[CommitLike],
    *,
    max_files_per_commit: int = DEFAULT_MAX_FILES_PER_COMMIT,
    min_support: int = 2,
    top_hot_spots: int = 20,
    only_paths: Collection[str] | None = None,
) -> HistoryReport:
    """Everything above from one commit list (materialised once: it is iterated three times)."""
    commit_list = list(commits)
    files = file_histories(commit_list, only_paths=only_paths)
    huge = sum(1 for c in commit_list if not change_sized(c, max_files_per_commit))
    return HistoryReport(
        commits=len(commit_list),
        huge_commits=huge,
        files=files,
        cochanges=cochange_pairs(
            commit_list, max_files_per_commit=max_files_per_commit, min_support=min_support, only_paths=only_paths
        ),
        hot_spots=hot_spots(files, top_k=top_hot_spots),
    )
