"""The history document kept by delta (``HistoryState``) is byte for byte the one computed from
scratch (``summarize_history``), as the window slides over generated histories: commits added in
front, the oldest dropped, the tree's paths changing, ties in time, huge and release commits."""

from __future__ import annotations

from unittest import mock

import msgspec
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from services.indexer import history_delta
from services.indexer.git.log import Commit, FileChange
from services.indexer.history import summarize_history
from services.indexer.history_delta import HistoryState

PATHS = [f"pkg/m{i}.py" for i in range(8)] + ["README.md", "setup.py"]
_commit = st.tuples(
    st.integers(0, 40),  # timestamp: small range, so ties happen
    st.sampled_from(["Fix crash", "Add thing", "Release 1.2", "style: format", "refactor"]),
    st.sampled_from(["alice@x", "bob@x", "Carol@X", ""]),
    st.lists(st.tuples(st.sampled_from(PATHS), st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=6),
    st.booleans(),  # huge: a sweep over 40 generated files
)


def _commits(drawn: list[tuple[int, str, str, list[tuple[str, int, int]], bool]]) -> list[Commit]:
    out = []
    for n, (ts, subject, email, files, huge) in enumerate(drawn):
        changes = [FileChange(*f) for f in files] + (
            [FileChange(f"gen/{k}.py", 1, 0) for k in range(40)] if huge else []
        )
        out.append(Commit(f"{n:040x}", email, "Name", ts, subject, changes))
    return out[::-1]  # newest first, as read_log gives them


def _expected(commits: list[Commit], depth: int, paths: set[str]) -> bytes:
    document = msgspec.to_builtins(summarize_history(commits, only_paths=paths))
    document["depth"] = depth
    return orjson.dumps(document)


@settings(max_examples=150, deadline=None)
@given(
    drawn=st.lists(_commit, min_size=1, max_size=30),
    depth=st.integers(1, 12),
    steps=st.lists(
        st.tuples(st.integers(0, 4), st.sets(st.sampled_from([*PATHS, "gen/1.py", "gen/7.py"]))), max_size=6
    ),
    block=st.sampled_from([1, 2, 3, 512]),
)
def test_a_sliding_window_by_delta_equals_a_summary_from_scratch(
    drawn: list[tuple[int, str, str, list[tuple[str, int, int]], bool]],
    depth: int,
    steps: list[tuple[int, set[str]]],
    block: int,
) -> None:
    # Small blocks: the document's files array is joined from many, split as paths come in.
    with mock.patch.object(history_delta, "BLOCK", block):
        _slide(_commits(drawn), depth, steps)


def _slide(history: list[Commit], depth: int, steps: list[tuple[int, set[str]]]) -> None:
    head = len(history) - 1  # index of the commit the window starts at, moving toward newer ones
    paths = set(PATHS) | {f"gen/{k}.py" for k in range(40)}
    window = history[head : head + depth]
    state = HistoryState.build(window, depth)
    assert state.document(paths) == _expected(window, depth, paths)
    for step, keep in steps:  # the window moves and the tree's paths change
        moved = head - max(head - step, 0)
        head -= moved
        before, window = window, history[head : head + depth]
        if not state.advance(window):
            assert moved >= len(before)  # only a window with nothing in common is rebuilt
            state = HistoryState.build(window, depth)
        paths = keep | {"README.md"}
        assert state.document(paths) == _expected(window, depth, paths)
