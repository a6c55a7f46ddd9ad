"""Learning by delta (``engine/learn_memo.py``) gives the model a full relearn gives, byte for byte.

The histories are real: this project's own commits to the engine and to fact extraction
(``services/analyzer/engine``, ``services/source``), every one a real edit of real files
(functions added and renamed, modules split, files added and deleted). Hypothesis draws a chain
of those commits (forward, backward, skipping), whether the domains come from the indexer
(explicit, and moving between snapshots) or from directories, and whether the replica kept its
memo (or starts from nothing, as another replica would). Each snapshot's facts are extracted and
resolved as the indexer does; the model learned with the memo carried along the chain must
serialize to the same bytes as the model learned from scratch, and only the files whose facts
or domain changed are observed again.
"""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.analyzer.engine import encode_model, learn
from services.analyzer.engine.learn_inputs import default_domain
from services.analyzer.engine.learn_memo import LearnMemo
from services.source.extract import extract
from services.source.facts import FileFacts
from services.source.imports import resolve_imports

ROOT = Path(__file__).resolve().parents[2]
SCOPE = ("services/analyzer/engine", "services/source")


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout


@cache
def _commits() -> tuple[str, ...]:
    try:
        log = _git("log", "--format=%H", "-n", "40", "--", *SCOPE)
    except (OSError, subprocess.CalledProcessError):
        return ()
    return tuple(reversed(log.split()))


@cache
def _blob(sha: str) -> bytes:
    return subprocess.run(["git", "-C", str(ROOT), "cat-file", "blob", sha], check=True, capture_output=True).stdout


@cache
def _extracted(path: str, sha: str) -> FileFacts:
    return extract(path, _blob(sha))


@cache
def _snapshot(commit: str) -> tuple[FileFacts, ...]:
    """The commit's facts in path order, imports resolved against the snapshot (as streamed)."""
    rows = [line.split(None, 3) for line in _git("ls-tree", "-r", commit, "--", *SCOPE).splitlines()]
    files = [_extracted(path, sha) for _mode, kind, sha, path in sorted(rows, key=lambda r: r[3]) if kind == "blob"]
    return tuple(resolve_imports(files))


def _domains(facts: tuple[FileFacts, ...], depth: int) -> dict[str, str] | None:
    """The indexer's domains, at a depth that differs between snapshots (0: none, from directories)."""
    if not depth:
        return None
    return {f.path: "/".join(f.path.split("/")[:depth]) for f in facts if f.path.count("/") >= depth}


def _model(facts: tuple[FileFacts, ...], commit: str, domains: dict[str, str] | None, memo: LearnMemo | None) -> bytes:
    return encode_model(learn(list(facts), domains=domains, repository="repo", commit=commit, memo=memo))


_step = st.tuples(
    st.integers(min_value=0, max_value=39),  # which commit (of those found)
    st.sampled_from([0, 0, 2, 3, 4]),  # domains: from directories, or explicit at a depth
    st.booleans(),  # the replica kept its memo from the previous step
    st.sampled_from([1, 3, 64]),  # files per run of kept sums (learn_inputs.Blocks) in a new memo
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_step, min_size=2, max_size=6))
def test_a_chain_of_real_commits_learned_by_delta_equals_full_relearns(chain: list[tuple[int, int, bool, int]]) -> None:
    commits = _commits()
    if len(commits) < 2:
        pytest.skip("no git history of the engine here")
    memo = LearnMemo(block=chain[0][3])
    previous: dict[str, tuple[FileFacts, str]] = {}
    for number, (index, depth, kept, block) in enumerate(chain):
        commit = commits[index % len(commits)]
        facts = _snapshot(commit)
        domains = _domains(facts, depth)
        if not kept:
            memo, previous = LearnMemo(block=block), {}
        by_delta = _model(facts, commit, domains, memo)
        assert by_delta == _model(facts, commit, domains, None), f"step {number}: {commit[:10]}"
        # What the memo keys a file's observations on: its facts and its domain.
        current = {
            f.path: (f, default_domain(f.path) if domains is None else domains.get(f.path, ""))
            for f in facts
            if not f.skipped
        }
        changed = sum(1 for path, entry in current.items() if previous.get(path) != entry)
        assert memo.last.observed == changed
        assert memo.last.dropped == len(previous.keys() - current.keys())
        previous = current


def test_an_unchanged_snapshot_observes_nothing_and_a_one_file_change_one_file() -> None:
    commits = _commits()
    if len(commits) < 2:
        pytest.skip("no git history of the engine here")
    facts = list(_snapshot(commits[-1]))
    memo = LearnMemo()
    parsed = sum(1 for f in facts if not f.skipped)  # a skipped file teaches nothing
    first = encode_model(learn(facts, memo=memo))
    assert memo.last.observed == parsed
    assert encode_model(learn(facts, memo=memo)) == first
    assert (memo.last.observed, memo.last.reused, memo.last.dropped) == (0, parsed, 0)
    i = next(i for i, f in enumerate(facts) if f.path.endswith("naming.py"))
    changed = extract(facts[i].path, _blob_text(facts[i].path, commits[-1]) + b"\n\ndef loadItems(Value):\n    pass\n")
    facts[i] = changed
    assert encode_model(learn(facts, memo=memo)) == encode_model(learn(facts))
    assert (memo.last.observed, memo.last.dropped) == (1, 0)


def _blob_text(path: str, commit: str) -> bytes:
    return subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"], check=True, capture_output=True).stdout


def test_files_with_the_same_path_twice_are_learned_without_the_memo() -> None:
    f = extract("pkg/a.py", b"def load_items():\n    pass\n")
    memo = LearnMemo()
    assert encode_model(learn([f, f], memo=memo)) == encode_model(learn([f, f]))
    assert memo.records == {}


def test_a_file_whose_base_class_changed_elsewhere_is_judged_again() -> None:
    """``pkg/impl.py`` does not change, but whether its ``close`` overrides a documented method
    (and so is not asked for a docstring) depends on ``pkg/base.py``."""
    impl = extract(
        "pkg/impl.py", b"class Impl(Base):\n    def close(self):\n        pass\n\n    def open(self):\n        pass\n"
    )
    plain = extract("pkg/base.py", b"class Base:\n    pass\n")
    based = extract("pkg/base.py", b'class Base:\n    def close(self):\n        """Close it."""\n')
    memo = LearnMemo()
    # Undocumented public methods: Impl's two, or with Base documenting close, Impl.open alone.
    for base, observed, undocumented in ((plain, 2, 2), (based, 1, 1), (plain, 1, 2)):
        files = [base, impl]
        model = learn(files, memo=memo)
        assert encode_model(model) == encode_model(learn(files))
        assert memo.last.observed == observed  # pkg/impl.py is not observed anew: judged again
        [rate] = [c for c in model.conventions if c.rule == "documentation.docstring.method"]
        assert (rate.choice, rate.support) == ("undocumented", undocumented)
