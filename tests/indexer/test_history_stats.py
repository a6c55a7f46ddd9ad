"""History statistics, co-change rules and hot spots over hand-built commits."""

from __future__ import annotations

import time

import msgspec
import pytest

from services.indexer.git.log import Commit, FileChange
from services.indexer.history import (
    CoChange,
    change_sized,
    cochange_pairs,
    file_histories,
    hot_spots,
    index_cochanges,
    is_fix_commit,
    suggest_cochanges,
    summarize_history,
)


def c(sha: str, ts: int, subject: str, *files: tuple[str, int, int], who: str = "alice") -> Commit:
    return Commit(sha, f"{who}@example.com", who.title(), ts, subject, [FileChange(*f) for f in files])


# newest first, as read_log yields them
COMMITS = [
    c("c6", 600, "Vendor the parser", *[(f"f{i}.py", 1, 1) for i in range(40)], ("a.py", 1, 1), ("b.py", 1, 1)),
    c("c5", 500, "fix: crash when config is empty", ("a.py", 3, 1), ("b.py", 1, 0), who="bob"),
    c("c4", 400, "Add feature", ("a.py", 10, 0), ("b.py", 5, 0), ("c.py", 2, 0)),
    c("c3", 300, "Refactor prefix handling", ("a.py", 1, 1), ("img.png", 0, 0), who="Bob"),
    c("c2", 200, "Hotfix for regression", ("a.py", 2, 2), ("b.py", 1, 1), who="carol"),
    c("c1", 100, "Initial", ("a.py", 20, 0), ("b.py", 10, 0), ("c.py", 5, 0), ("README.md", 3, 0)),
]


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("fix: crash when config is empty", True),
        ("Fixes #12", True),
        ("Bugfix in parser", True),
        ("HOTFIX prod", True),
        ("Patch the regression", True),
        ("fix(parser): handle EOF", True),
        ("Refactor prefix handling", False),
        ("debugging output", False),
        ("monkeypatch the clock in tests", False),
        ("Add feature", False),
    ],
)
def test_fix_like_subjects_are_word_bounded(subject: str, expected: bool) -> None:
    assert is_fix_commit(subject) is expected


def test_file_histories() -> None:
    files = {h.path: h for h in file_histories(COMMITS)}
    a = files["a.py"]
    assert (a.commits, a.authors, a.added, a.deleted, a.churn) == (6, 3, 37, 5, 42)
    assert (a.fix_commits, a.first_timestamp, a.last_timestamp, a.last_sha) == (2, 100, 600, "c6")
    assert (files["img.png"].churn, files["img.png"].commits) == (0, 1)
    assert files["c.py"].authors == 1
    kept = file_histories(COMMITS, only_paths={"a.py"})
    assert [h.path for h in kept] == ["a.py"]


def test_cochange_pairs_ignore_huge_commits_and_go_both_ways() -> None:
    rules = {(r.source, r.target): r for r in cochange_pairs(COMMITS, max_files_per_commit=30)}
    # c6 (42 files) is ignored: a.py appears in 5 counted commits, b.py in 4, both in 4.
    assert rules[("b.py", "a.py")] == CoChange("b.py", "a.py", 4, 1.0)
    assert rules[("a.py", "b.py")] == CoChange("a.py", "b.py", 4, 0.8)
    assert rules[("c.py", "a.py")] == CoChange("c.py", "a.py", 2, 1.0)
    assert rules[("a.py", "c.py")] == CoChange("a.py", "c.py", 2, 0.4)
    assert not any("f1.py" in key for key in rules)
    assert ("a.py", "README.md") not in rules  # support 1 < min_support
    with_huge = {(r.source, r.target): r for r in cochange_pairs(COMMITS, max_files_per_commit=100)}
    assert ("a.py", "f1.py") not in with_huge  # support 1 < min_support
    assert with_huge[("a.py", "b.py")] == CoChange("a.py", "b.py", 5, 0.8333)
    ordered = [r.target for r in cochange_pairs(COMMITS) if r.source == "a.py"]
    assert ordered == ["b.py", "c.py"]


@pytest.mark.parametrize(
    ("subject", "counted"),
    [
        ("Release 2.4.0", False),
        ("v2.4.0", False),
        ("Bump version to 2.5.0.dev0", False),
        ("chore(release): 1.3.0", False),
        ("Prepare the 3.1 release", False),
        ("style: run black over the tests", False),
        ("Reformat with ruff format", False),
        ("[pre-commit.ci] pre-commit autoupdate", False),
        ("Format code", False),
        ("Fix release notes parsing", True),
        ("Bump httpx from 0.27 to 0.28", True),
        ("fix formatting of error messages", True),
        ("Add a formatter for dates", True),
    ],
)
def test_releases_and_formatter_sweeps_are_not_change_sized(subject: str, counted: bool) -> None:
    assert change_sized(c("x", 1, subject, ("src/api.py", 3, 1), ("CHANGES.rst", 2, 0))) is counted


def test_releases_teach_no_cochange() -> None:
    # Each release touches the changelog and the version module with whatever changed last: three
    # releases would otherwise make them partners of everything.
    commits = [
        c("r3", 900, "Release 1.3.0", ("CHANGES.rst", 5, 0), ("src/version.py", 1, 1), ("src/io.py", 1, 0)),
        c("r2", 800, "Release 1.2.0", ("CHANGES.rst", 5, 0), ("src/version.py", 1, 1), ("src/io.py", 2, 0)),
        c("f2", 700, "Read gzip files", ("src/io.py", 9, 2), ("tests/test_io.py", 20, 0)),
        c("f1", 600, "Stream large files", ("src/io.py", 9, 2), ("tests/test_io.py", 20, 0)),
    ]
    rules = {(r.source, r.target) for r in cochange_pairs(commits)}
    assert rules == {("src/io.py", "tests/test_io.py"), ("tests/test_io.py", "src/io.py")}
    assert summarize_history(commits).huge_commits == 2  # left out of the base rates too


def test_hot_spots_rank_by_documented_score() -> None:
    spots = hot_spots(file_histories(COMMITS), top_k=3)
    assert [s.path for s in spots] == ["a.py", "b.py", "c.py"]
    assert spots[0].score == pytest.approx((6 + 2) * 5.426264754702098, rel=1e-4)
    assert all(s.commits >= 2 for s in spots)


def test_suggest_cochanges() -> None:
    pairs = cochange_pairs(COMMITS)
    suggestions = suggest_cochanges(pairs, ["c.py"], top_k=5)
    assert [(s.path, s.confidence, s.support, s.because) for s in suggestions] == [
        ("a.py", 1.0, 2, ("c.py",)),
        ("b.py", 1.0, 2, ("c.py",)),
    ]
    index = index_cochanges(pairs)
    assert [s.path for s in suggest_cochanges(index, ["a.py", "b.py"], top_k=5)] == ["c.py"]
    assert suggest_cochanges(index, ["unknown.py"]) == []
    assert suggest_cochanges(index, ["a.py"], top_k=1, min_confidence=0.9) == []


def test_summary_serializes_to_json() -> None:
    report = summarize_history(COMMITS)
    assert (report.commits, report.huge_commits) == (6, 1)
    decoded = msgspec.json.decode(msgspec.json.encode(report))
    assert decoded["hot_spots"][0]["path"] == "a.py"
    assert {"source", "target", "support", "confidence"} <= set(decoded["cochanges"][0])


def test_cochange_scales_to_a_long_history() -> None:
    commits = [
        c(f"s{i}", i, "change", *[(f"pkg{i % 50}/m{(i * 7 + k) % 40}.py", 1, 1) for k in range(8)])
        for i in range(10_000)
    ]
    started = time.perf_counter()
    report = summarize_history(commits)
    assert time.perf_counter() - started < 10
    assert report.cochanges
