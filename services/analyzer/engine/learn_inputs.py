"""Shared inputs of the family learners and small helpers they all use."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar

from services.analyzer.engine.config import RepoConfig
from services.analyzer.engine.conventions import DIRECTORY, DOMAIN, LANGUAGE, Convention, Scope, wilson_upper
from services.analyzer.engine.thresholds import Thresholds, wilson_lower
from services.source.facts import FileFacts

_T = TypeVar("_T")
_P = TypeVar("_P")

# Turns counts of observed values in one scope into a convention (or None when nothing to learn).
Build = Callable[[str, Scope, Counter[str]], Convention | None]
CoChange = tuple[str, str, int, float]  # (path a, path b, commits together, P(b changes | a changes))


@dataclass
class LearnInput:
    files: list[FileFacts]
    thresholds: Thresholds
    config: RepoConfig
    domains: dict[str, str]  # path -> domain
    explicit_domains: bool  # domains came from the indexer rather than the directory heuristic
    cochange: list[CoChange] = field(default_factory=list)
    # Directories of the packages below the root (toolconfig.package_root): each learns its habits
    # from its own files, and the language scope from the files of none of them.
    packages: frozenset[str] = frozenset()

    def by_language(self) -> dict[str, list[FileFacts]]:
        out: dict[str, list[FileFacts]] = {}
        for f in self.files:
            if f.language:
                out.setdefault(f.language, []).append(f)
        return out


# Directories of programs, examples and documentation: code that uses the library rather than
# being it, held to the library's habits of documenting, annotating and depending on nothing new.
PROGRAM_DIRS = frozenset(
    {
        *("examples", "example", "docs", "doc", "demo", "demos", "scripts", "script", "tools"),
        *("bin", "benchmarks", "benchmark", "bench", "playground", "samples", "sample"),
    }
)


def is_program(path: str) -> bool:
    """A file under an examples/docs/scripts/benchmarks directory or the top-level tasks/, one
    named for examples with a qualifier (attrs' ``typing-examples/``, ``code_examples/``: mypy
    fixtures, not its API), or a Python file whose name is no module name."""
    parts = path.split("/")
    dirs = parts[:-1]
    if parts[-1].endswith(".py") and not parts[-1][:-3].isidentifier():
        # No import statement can name it (mistune's root `serve-doc.py`): it is run, not imported.
        return True
    if dirs[:1] == ["tasks"]:
        # A top-level tasks/ holds the repository's development automation (invoke's layout;
        # packaging, filelock and platformdirs keep their release scripts there); a package's
        # own tasks/ (a Celery application's) is code of the project.
        return True
    return bool(PROGRAM_DIRS & set(dirs)) or any(_EXAMPLES.search(d) for d in dirs)


_EXAMPLES = re.compile(r"(?:^|[-_.])examples?(?:$|[-_.])", re.IGNORECASE)
# Directories of examples and demos: programs that show the library in use, each often a small
# project of its own.
EXAMPLE_DIRS = frozenset({"examples", "example", "demo", "demos", "samples", "sample", "playground"})


def is_example(directory: str) -> bool:
    """Whether one directory name names examples or demos (``examples``, ``code_examples``)."""
    return directory in EXAMPLE_DIRS or bool(_EXAMPLES.search(directory))


def default_domain(path: str) -> str:
    """Without the indexer's domains, the first two directories approximate a component."""
    parts = posixpath.dirname(path).split("/")
    return "/".join(parts[:2]) if parts != [""] else ""


def ancestors(path: str) -> Iterator[str]:
    """Directories containing ``path``, deepest first (the repository root excluded)."""
    d = posixpath.dirname(path)
    while d:
        yield d
        d = posixpath.dirname(d)


def majority(counts: Counter[str], allowed: frozenset[str] | None = None) -> str | None:
    best = [(n, k) for k, n in counts.items() if allowed is None or k in allowed]
    if not best:
        return None
    return max(best, key=lambda t: (t[0], t[1]))[1]


@lru_cache(maxsize=1 << 16)
def _ancestry(path: str) -> tuple[str, ...]:
    return tuple(ancestors(path))


def _bump(counts: dict[Any, Counter[str]], key: Any, value: str, n: int) -> None:
    c = counts.get(key)
    if c is None:
        c = counts[key] = Counter()
    c[value] = c.get(value, 0) + n


@dataclass
class Tally:
    """Observations of one rule, kept per language, per directory subtree and per domain."""

    by_language: dict[str, Counter[str]] = field(default_factory=dict)
    by_directory: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    by_domain: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)

    def add(self, language: str, path: str, domain: str, value: str, n: int = 1) -> None:
        _bump(self.by_language, language, value, n)
        for d in _ancestry(path):
            _bump(self.by_directory, (language, d), value, n)
        if domain:
            _bump(self.by_domain, (language, domain), value, n)


class FileTallies:
    """One file's observations for the tallies of a family: tally name -> value -> count, in the
    order first observed. Added to the family's tallies file by file in the files' order
    (:func:`merge`), they give the tallies, key order included, that adding every observation
    one by one gives: a learner counts each file once and keeps what it counted
    (``learn_memo``), so a relearn counts only the files that changed."""

    __slots__ = ("counts", "domain", "language", "path")

    def __init__(self, language: str, path: str, domain: str) -> None:
        self.language = language
        self.path = path
        self.domain = domain
        self.counts: dict[str, dict[str, int]] = {}

    def add(self, tally: str, value: str, n: int = 1) -> None:
        c = self.counts.get(tally)
        if c is None:
            c = self.counts[tally] = {}
        c[value] = c.get(value, 0) + n


def merge(
    tallies: dict[str, Tally], observed: Iterable[FileTallies | None], blocks: Blocks | None = None
) -> dict[str, Tally]:
    """``tallies`` with every file's observations added, in order (a tally is made when first
    observed, after those already in ``tallies``). ``blocks``: the sums of runs of files kept from
    the last merge of the same family, reused where the run holds the same observations."""
    if blocks is None:
        for ft in observed:
            if ft is not None:
                _add_file(tallies, ft)
        return tallies
    return blocks.merge(tallies, observed)


def _add_file(tallies: dict[str, Tally], ft: FileTallies) -> None:
    for name, counts in ft.counts.items():
        tally = tallies.get(name)
        if tally is None:
            tally = tallies[name] = Tally()
        for value, n in counts.items():
            tally.add(ft.language, ft.path, ft.domain, value, n)


def _add_tallies(tallies: dict[str, Tally], part: dict[str, Tally]) -> None:
    """``part`` (the sums of a run of files) added after what ``tallies`` holds: the same counts,
    in the same key order, as adding the run's files one by one."""
    for name, block in part.items():
        tally = tallies.get(name)
        if tally is None:
            tally = tallies[name] = Tally()
        _add_scoped(tally.by_language, block.by_language)
        _add_scoped(tally.by_directory, block.by_directory)
        _add_scoped(tally.by_domain, block.by_domain)


def _add_scoped(into: dict[Any, Counter[str]], part: dict[Any, Counter[str]]) -> None:
    for key, counts in part.items():
        total = into.get(key)
        if total is None:
            into[key] = Counter(counts)  # a copy: the run's sums are kept as they are
        else:
            for value, n in counts.items():
                total[value] = total.get(value, 0) + n


class Blocks:
    """One family's sums of runs of consecutive files, kept between merges (``learn_memo``).

    A run ends before a file whose path hashes to 0 modulo ``size``, so runs are cut by content:
    adding or removing a file moves no other run's bounds. A run whose files' observations are
    the very objects it was summed from is reused; the others are summed again. Sums of runs
    added in order give what adding every file in order gives (key order included): a key first
    appears in the first run that has it, at the place of its first file there.
    """

    def __init__(self, size: int = 64) -> None:
        self.size = size  # files in a run, on average
        self._sums: dict[str, dict[tuple[int, ...], tuple[tuple[Any, ...], Any]]] = {}
        self.summed = 0  # runs summed again by the last fold

    def merge(self, tallies: dict[str, Tally], observed: Iterable[FileTallies | None]) -> dict[str, Tally]:
        files = (ft for ft in observed if ft is not None)
        self.fold("tallies", files, _path_of, _sum_run, lambda part: _add_tallies(tallies, part))
        return tallies

    def fold(
        self,
        what: str,
        items: Iterable[_T],
        path: Callable[[_T], str],
        total: Callable[[list[_T]], _P],
        add: Callable[[_P], None],
    ) -> None:
        """``add(total(run))`` for each run of ``items`` in order, ``total`` reused from the last
        fold of ``what`` for a run of the same objects. ``add`` must not change what it is given."""
        kept = self._sums.get(what, {})
        used: dict[tuple[int, ...], tuple[tuple[Any, ...], Any]] = {}
        run: list[_T] = []
        self.summed = 0

        def flush() -> None:
            key = tuple(map(id, run))
            # The kept entries hold their items, so an id here is never another object's.
            entry = used.get(key) or kept.get(key)
            if entry is None:
                entry = (tuple(run), total(run))
                self.summed += 1
            used[key] = entry
            add(entry[1])

        for item in items:
            if run and hash(path(item)) % self.size == 0:
                flush()
                run = []
            run.append(item)
        if run:
            flush()
        self._sums[what] = used


def _path_of(ft: FileTallies) -> str:
    return ft.path


def _sum_run(run: list[FileTallies]) -> dict[str, Tally]:
    part: dict[str, Tally] = {}
    for ft in run:
        _add_file(part, ft)
    return part


def scoped_conventions(
    tally: Tally,
    build: Build,
    inp: LearnInput,
    rule: str,
    *,
    with_domains: bool = False,
) -> list[Convention]:
    """Language-level conventions plus directory/domain ones wherever those differ.

    A directory is kept when its choice differs from the nearest scope above it that was kept, or
    when its own share would not earn the level the scope above has and it is significantly less
    consistent than that scope (a mixed-style directory silences a strong repository-wide
    convention there; a consistent subdirectory of a mixed one is still enforced). A consistent but
    small directory is not kept: few observations that agree with the repository do not weaken it.
    A different or more consistent choice is kept only when the directory is surely apart from the
    scope above (``_apart``): a few files that happen to agree in a mixed repository are no habit.
    """
    thresholds = inp.thresholds
    min_sub_count = thresholds.bar(rule).loose.min_count
    with_domains = with_domains and inp.explicit_domains
    out: list[Convention] = []
    top: dict[str, Convention] = {}
    packages = inp.packages if rule.split(".", 1)[0] not in REPOSITORY_WIDE else frozenset()
    outer = outermost(packages)
    for language, counts in tally.by_language.items():
        own = _without_packages(counts, [tally.by_directory.get((language, p)) for p in outer])
        conv = build(language, Scope(LANGUAGE, language), own) if own else None
        if conv is not None:
            out.append(conv)
            top[language] = conv
    kept: dict[tuple[str, str], Convention] = {}
    for (language, directory), counts in sorted(tally.by_directory.items(), key=lambda kv: kv[0][1].count("/")):
        if sum(counts.values()) < min_sub_count:
            continue
        package = package_of(directory + "/x", packages)
        # Inside a package the scope above is the package's own, never the root's.
        parent = top.get(language) if package is None else None
        for d in ancestors(directory + "/x"):
            if d != directory and (language, d) in kept:
                parent = kept[(language, d)]
                break
            if d == package:
                break
        conv = build(language, Scope(DIRECTORY, directory), counts)
        if conv is None:
            continue
        if directory == package or (parent is not None and _differs(conv, parent, thresholds)):
            out.append(conv)
            kept[(language, directory)] = conv
    if with_domains:
        for (language, domain), counts in tally.by_domain.items():
            if sum(counts.values()) < min_sub_count:
                continue
            conv = build(language, Scope(DOMAIN, domain), counts)
            parent = top.get(language)
            if conv is not None and parent is not None and _differs(conv, parent, thresholds):
                out.append(conv)
    return out


# Families whose conventions are the repository's choices, not a package's habits: the library
# settled for a job (a benchmark harness importing a second test runner is a second tool for the
# repository), the layers between its modules, the files that change together. A package below
# the root learns and is judged by its own habits in every other family.
REPOSITORY_WIDE = frozenset({"dependencies", "cochange"})


def outermost(packages: frozenset[str]) -> list[str]:
    """The packages no other package holds."""
    return sorted(p for p in packages if not any(a in packages for a in ancestors(p)))


def package_of(path: str, packages: frozenset[str] | tuple[str, ...]) -> str | None:
    """The directory of the innermost package holding ``path``, None for the root's files."""
    if not packages:
        return None
    return next((d for d in _ancestry(path) if d in packages), None)


def _without_packages(counts: Counter[str], parts: list[Counter[str] | None]) -> Counter[str]:
    """A language's counts less those of its packages' files: the root package's own."""
    if not any(parts):
        return counts
    own = Counter(counts)
    for part in parts:
        if part:
            own.subtract(part)
    return Counter({k: n for k, n in own.items() if n > 0})


def _differs(conv: Convention, parent: Convention, thresholds: Thresholds) -> bool:
    if conv.choice != parent.choice:
        return _apart(conv, parent)
    # Judge the share alone: a small directory that agrees must not dilute the repository's level.
    by_share = thresholds.level(conv.rule, conv.share, 1 << 30)
    if _RANK[by_share] < _RANK[parent.level]:
        # Only a directory that is really less consistent than the scope above silences it: one
        # exception among 12 files (92%) is within chance of a repository's 97%. And only one
        # without a habit of its own: "16 of 17 classes PascalCase" (loose) agrees with the
        # repository's "1,239 of 1,240" (strict) and must not demote it there.
        return by_share == "off" and wilson_upper(conv.support, conv.count) < parent.share
    return _RANK[conv.level] > _RANK[parent.level] and conv.share > parent.share and _apart(conv, parent)


def _apart(conv: Convention, parent: Convention) -> bool:
    """Whether a directory's habit is surely its own where the scope around it holds none (a mix,
    level off): the share of its choice it is sure of (the Wilson lower bound) must exceed that
    choice's share around it. Three example files of three using unittest in a repository whose
    test files mix unittest (7) and pytest (5) are what the mix gives by chance (pyparsing's
    ``examples/``), not a convention of the directory. Where the scope around holds a habit, a
    directory sharpening or departing from it is judged by its own bar, as before (boltons'
    package directory is more consistent about class docstrings than the repository's 93 %)."""
    if parent.level != "off":
        return True
    around = parent.alternatives.get(conv.choice, 0) / max(parent.count, 1)
    if parent.choice == conv.choice:
        around = parent.share
    return wilson_lower(conv.support, conv.count) > around


_RANK = {"off": 0, "loose": 1, "strict": 2}


class Observations(list[_T]):
    """One family's observations of the files learned, in their order, with the family's
    :class:`Blocks` (what ``learn_memo`` hands a learner; ``blocks_of`` finds them)."""

    def __init__(self, items: Iterable[_T], blocks: Blocks) -> None:
        super().__init__(items)
        self.blocks = blocks


def blocks_of(observed: object) -> Blocks | None:
    return observed.blocks if isinstance(observed, Observations) else None
