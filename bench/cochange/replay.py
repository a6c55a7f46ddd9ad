"""The replay: walk a history oldest first, learn co-change from the past only, predict the rest.

For commit ``i`` after the warm-up, co-change pairs are learned from commits ``< i`` exactly as
the indexer learns them (``summarize_history``'s parameters, restricted to the files of the
snapshot before ``i``); part of commit ``i``'s changed files is shown as the query and the rest
hidden. A query is a hit at ``k`` when at least one hidden file is among the first ``k``
suggestions. Rankings:

- ``all``: ``suggest_cochanges`` over every learned pair (what the indexer stores);
- ``engine``: the change-level findings of ``check_change`` on a model learned from those pairs
  at the default thresholds and ``strict`` level, i.e. what a pull-request review would say
  (``engine-loose``: at the ``loose`` level of dashboards and ``review_context``);
- ``frequency``: a baseline without co-change, the files changed most often so far.

With one commit per release, a few files change in nearly every commit (the changelog, the
version); the ``core`` view scores the same queries without them: files changed in at least
``ROUTINE_SHARE`` of the earlier commits are removed from the hidden files and from every ranking,
and a query left with no hidden file is not counted.

The precision view (``judge``) scores the findings themselves: each changed file of an evaluated
commit is shown alone, and every ``cochange.partner`` / ``cochange.routine`` finding is correct
when the file it names did change in that commit. ``sweep`` repeats it over a grid of each rule's
strict bar (with the lift bar, the routine base rate and the history needed for base rates), which
is where the engine's co-change bars come from.
"""

from __future__ import annotations

import inspect
import math
import random
import subprocess
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from services.analyzer.engine import CheckPrefs, ConventionModel, check_change, cochange, learn
from services.analyzer.engine.thresholds import DEFAULT_THRESHOLDS, LOOSE, STRICT, Bar, Threshold, Thresholds
from services.indexer.git.log import Commit, read_log
from services.indexer.history import CoChange, cochange_pairs, index_cochanges, suggest_cochanges, summarize_history
from services.indexer.settings import IndexerSettings

# The indexer calls summarize_history(commits, only_paths=<files of the snapshot>) on at most
# history_depth commits: its defaults are the indexer's parameters.
_DEFAULTS = inspect.signature(summarize_history).parameters
MAX_FILES_PER_COMMIT: int = _DEFAULTS["max_files_per_commit"].default
MIN_SUPPORT: int = _DEFAULTS["min_support"].default
HISTORY_DEPTH: int = IndexerSettings.model_fields["history_depth"].default

RANKINGS = ("all", "engine", "engine-loose", "frequency")
COCHANGE_RULES = cochange.RULES
QUERIES = ("one", "half")
VIEWS = ("all", "core")
TOP_K = (1, 3, 10)
ROUTINE_SHARE = 0.75


@dataclass
class Tally:
    commits: int = 0
    queries: int = 0
    answered: int = 0  # queries with at least one suggestion
    hits: dict[int, int] = field(default_factory=lambda: dict.fromkeys(TOP_K, 0))

    def add(self, other: Tally) -> None:
        self.commits += other.commits
        self.queries += other.queries
        self.answered += other.answered
        for k in TOP_K:
            self.hits[k] += other.hits[k]

    def rate(self, n: int) -> float | None:
        return round(n / self.queries, 4) if self.queries else None

    def interval(self, k: int) -> tuple[float, float] | None:
        """95% Wilson interval of the top-k hit rate (the samples are small)."""
        return wilson(self.hits[k], self.queries)

    def summary(self) -> dict[str, object]:
        out: dict[str, object] = asdict(self)
        out["answered_share"] = self.rate(self.answered)
        out.update({f"top{k}": self.rate(self.hits[k]) for k in TOP_K})
        out["top3_ci95"] = self.interval(3)
        return out


@dataclass
class Snapshot:
    """What the engine is given before one evaluated commit, and what that commit changed."""

    pairs: list[tuple[str, str, int, float]]  # as GetCoChanges returns them
    history_commits: int  # commits of <= MAX_FILES_PER_COMMIT files so far (commits - huge_commits)
    changed: list[str]
    added: set[str]
    routine: set[str]  # files changed in >= ROUTINE_SHARE of the earlier commits (the core view)


@dataclass
class Precision:
    """Findings of one rule as a reviewer sees them, over one-file queries."""

    commits: int = 0
    queries: int = 0
    findings: int = 0
    correct: int = 0  # the named file did change in that commit
    hidden: int = 0  # changed files not shown, over all queries
    found: int = 0  # hidden files named by a finding
    every_release: int = 0  # findings naming a file changed in >= ROUTINE_SHARE of earlier commits

    def add(self, other: Precision) -> None:
        for name in ("commits", "queries", "findings", "correct", "hidden", "found", "every_release"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def precision(self) -> float | None:
        return round(self.correct / self.findings, 4) if self.findings else None

    @property
    def recall(self) -> float | None:
        return round(self.found / self.hidden, 4) if self.hidden else None

    @property
    def per_commit(self) -> float | None:
        return round(self.findings / self.commits, 2) if self.commits else None

    def interval(self) -> tuple[float, float] | None:
        return wilson(self.correct, self.findings)

    def summary(self) -> dict[str, object]:
        out: dict[str, object] = asdict(self)
        out.update(
            precision=self.precision, precision_ci95=self.interval(), recall=self.recall, per_commit=self.per_commit
        )
        return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """95% Wilson interval of k / n (the samples are small)."""
    if not n:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)


@dataclass(frozen=True)
class Variant:
    """How the engine is configured for one precision run."""

    strict: tuple[float, int]  # (confidence, commits of the changed file) for cochange.partner
    loose: tuple[float, int]
    routine_strict: tuple[float, int]  # the same for cochange.routine
    routine_loose: tuple[float, int]
    min_lift: float = cochange.MIN_LIFT
    routine_share: float = cochange.ROUTINE_SHARE
    exact: bool = False  # give the engine the number of commits (else it derives a lower bound)

    def thresholds(self) -> Thresholds:
        bars = {
            "cochange": Bar(Threshold(*self.strict), Threshold(*self.loose)),
            "cochange.routine": Bar(Threshold(*self.routine_strict), Threshold(*self.routine_loose)),
        }
        return DEFAULT_THRESHOLDS.merged(bars)


def _bars(rule: str) -> tuple[tuple[float, int], tuple[float, int]]:
    bar = DEFAULT_THRESHOLDS.bar(rule)
    return (bar.strict.min_share, bar.strict.min_count), (bar.loose.min_share, bar.loose.min_count)


def default_variant(*, exact: bool = False) -> Variant:
    """The engine as configured (thresholds.py, cochange.py)."""
    (ps, pl), (rs, rl) = _bars(cochange.RULE), _bars(cochange.ROUTINE_RULE)
    return Variant(ps, pl, rs, rl, exact=exact)


# The engine before the routine rule and the lift bar: every partner judged alike.
BEFORE = Variant((0.80, 5), (0.60, 3), (0.80, 5), (0.60, 3), min_lift=0.0, routine_share=1.01)


def variant_model(snap: Snapshot, variant: Variant) -> ConventionModel:
    th = variant.thresholds()
    convs = cochange.learn(
        snap.pairs,
        th,
        history_commits=snap.history_commits if variant.exact else 0,
        min_lift=variant.min_lift,
        routine_share=variant.routine_share,
    )
    return ConventionModel(conventions=convs, thresholds=th)


def judge(snapshots: Sequence[Snapshot], variant: Variant, level: str) -> dict[str, Precision]:
    """Each changed file shown alone (the rest hidden); every co-change finding judged.

    A finding is correct when the file it names did change in that commit. Recall: hidden files
    named, over all hidden files (a file added by the commit cannot be named; it still counts).
    ``any`` pools both rules.
    """
    out = {rule: Precision() for rule in (*COCHANGE_RULES, "any")}
    prefs = CheckPrefs(level=level)
    for snap in snapshots:
        model = variant_model(snap, variant)
        changed = set(snap.changed)
        for tally in out.values():
            tally.commits += 1
        for shown in snap.changed:
            hidden = changed - {shown}
            findings = check_change([shown], [shown] if shown in snap.added else [], model, prefs=prefs)
            named: dict[str, set[str]] = {rule: set() for rule in out}
            for f in findings:
                if f.rule not in COCHANGE_RULES or f.evidence is None:
                    continue
                partner = f.evidence.choice
                for rule in (f.rule, "any"):
                    out[rule].findings += 1
                    out[rule].correct += partner in changed
                    out[rule].every_release += partner in snap.routine
                    named[rule].add(partner)
            for rule, tally in out.items():
                tally.queries += 1
                tally.hidden += len(hidden)
                tally.found += len(named[rule] & hidden)
    return out


SWEEP_CONFIDENCE = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
SWEEP_COMMITS = (3, 5, 8)
SWEEP_LIFT = (0.0, 1.5, 2.0, 3.0)
SWEEP_ROUTINE_SHARE = (0.5, 0.75, 0.9)
SWEEP_MIN_HISTORY = (5, 8, 10)


def sweep(snapshots: Sequence[Snapshot]) -> dict[str, list[dict[str, object]]]:
    """Strict-level precision of each rule over a grid of its bar (the other rule as configured)."""
    base = default_variant()
    out: dict[str, list[dict[str, object]]] = {"partner": [], "routine": [], "min_history": []}
    for lift in SWEEP_LIFT:
        for conf in SWEEP_CONFIDENCE:
            for n in SWEEP_COMMITS:
                v = replace(base, strict=(conf, n), min_lift=lift)
                t = judge(snapshots, v, STRICT)[cochange.RULE]
                out["partner"].append({"min_lift": lift, "confidence": conf, "min_commits": n, **t.summary()})
    for share in SWEEP_ROUTINE_SHARE:
        for conf in SWEEP_CONFIDENCE:
            for n in SWEEP_COMMITS:
                v = replace(base, routine_strict=(conf, n), routine_share=share)
                t = judge(snapshots, v, STRICT)[cochange.ROUTINE_RULE]
                out["routine"].append({"routine_share": share, "confidence": conf, "min_commits": n, **t.summary()})
    saved = cochange.MIN_HISTORY
    try:
        for m in SWEEP_MIN_HISTORY:
            cochange.MIN_HISTORY = m
            got = judge(snapshots, base, STRICT)
            out["min_history"].append({"min_history": m, **{r: got[r].summary() for r in COCHANGE_RULES}})
    finally:
        cochange.MIN_HISTORY = saved
    return out


@dataclass
class Replay:
    package: str
    commits: int
    warmup: int
    considered: int  # commits after the warm-up
    too_small: int  # after the warm-up, fewer than 2 changed files
    too_large: int  # after the warm-up, more than MAX_FILES_PER_COMMIT changed files
    sizes: list[int]  # changed files of every evaluated commit
    tallies: dict[str, dict[str, dict[str, Tally]]]  # view -> query kind -> ranking -> tally
    routine: list[str]  # files counted as changing with every release at the last commit
    snapshots: list[Snapshot]  # per evaluated commit, for the precision view


def tree_files(git_dir: Path, sha: str) -> set[str]:
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-z", "--name-only", sha],
        capture_output=True,
        check=True,
    ).stdout
    return {p.decode("utf-8", "replace") for p in out.split(b"\0") if p}


def _engine_model(pairs: list[CoChange]) -> ConventionModel:
    """The analyzer's model from what ``GetCoChanges`` would return (no other facts needed)."""
    return learn([], cochange_pairs=_tuples(pairs))


def _tuples(pairs: list[CoChange]) -> list[tuple[str, str, int, float]]:
    return [(p.source, p.target, p.support, p.confidence) for p in pairs]


def _engine_ranking(model: ConventionModel, query: Sequence[str], added: set[str], level: str) -> list[str]:
    """Partners ``check_change`` reports as left out, strongest first (its own order per file)."""
    findings = check_change(query, [q for q in query if q in added], model, prefs=CheckPrefs(level=level))
    best: dict[str, tuple[float, int]] = {}
    for f in findings:
        if f.rule not in COCHANGE_RULES or f.evidence is None:
            continue
        key = (f.evidence.share, f.evidence.support)
        partner = f.evidence.choice
        if partner not in best or key > best[partner]:
            best[partner] = key
    return sorted(best, key=lambda p: (-best[p][0], -best[p][1], p))


def _frequency_ranking(counts: Counter[str], tree: set[str], query: Sequence[str]) -> list[str]:
    shown = set(query)
    ranked = sorted((p for p in counts if p in tree and p not in shown), key=lambda p: (-counts[p], p))
    return ranked


def _score(tally: Tally, ranking: list[str], hidden: set[str]) -> None:
    tally.commits += 1
    tally.queries += 1
    tally.answered += bool(ranking)
    for k in TOP_K:
        tally.hits[k] += any(p in hidden for p in ranking[:k])


def replay(package: str, git_dir: Path, *, warmup_share: float = 0.3, seed: int = 0) -> Replay:
    commits: list[Commit] = list(read_log(git_dir, "HEAD", max_commits=HISTORY_DEPTH))[::-1]  # oldest first
    warmup = max(1, round(len(commits) * warmup_share))
    tallies = {v: {q: {r: Tally() for r in RANKINGS} for q in QUERIES} for v in VIEWS}
    too_small = too_large = 0
    sizes: list[int] = []
    counts: Counter[str] = Counter()  # commits per file so far (small commits only, as for pairs)
    small = 0  # commits so far that count for co-change
    routine: set[str] = set()
    prev_tree: set[str] = set()
    snapshots: list[Snapshot] = []
    for i, commit in enumerate(commits):
        changed = list(dict.fromkeys(f.path for f in commit.files))
        tree = tree_files(git_dir, commit.sha)
        if i >= warmup:
            if len(changed) < 2:
                too_small += 1
            elif len(changed) > MAX_FILES_PER_COMMIT:
                too_large += 1
            else:
                sizes.append(len(changed))
                # The indexed snapshot before commit i: its files and the history leading to it.
                past = commits[:i][::-1]  # newest first, as read_log yields them
                pairs = cochange_pairs(
                    past, max_files_per_commit=MAX_FILES_PER_COMMIT, min_support=MIN_SUPPORT, only_paths=prev_tree
                )
                index = index_cochanges(pairs)
                model = _engine_model(pairs)
                added = set(changed) - prev_tree
                routine = {p for p in prev_tree if counts[p] >= ROUTINE_SHARE * small}
                snapshots.append(Snapshot(_tuples(pairs), small, sorted(changed), added, routine))
                rng = random.Random(f"{seed}:{package}:{commit.sha}")
                order = sorted(changed)
                for kind in QUERIES:
                    shown = len(order) // 2 if kind == "half" else 1
                    query = rng.sample(order, shown)
                    hidden = set(order) - set(query)
                    rankings = {
                        "all": [s.path for s in suggest_cochanges(index, query, top_k=len(index) + 1)],
                        "engine": _engine_ranking(model, query, added, STRICT),
                        "engine-loose": _engine_ranking(model, query, added, LOOSE),
                        "frequency": _frequency_ranking(counts, prev_tree, query),
                    }
                    for name, ranking in rankings.items():
                        _score(tallies["all"][kind][name], ranking, hidden)
                        if hidden - routine:
                            core = [p for p in ranking if p not in routine]
                            _score(tallies["core"][kind][name], core, hidden - routine)
        if len(changed) <= MAX_FILES_PER_COMMIT:
            counts.update(changed)
            small += 1
        prev_tree = tree
    return Replay(
        package=package,
        commits=len(commits),
        warmup=warmup,
        considered=max(0, len(commits) - warmup),
        too_small=too_small,
        too_large=too_large,
        sizes=sizes,
        tallies=tallies,
        routine=sorted(routine),
        snapshots=snapshots,
    )
