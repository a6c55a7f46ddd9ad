"""The history kept by delta (``HistoryState``: a head document and rows by path, only the changed
rows listed each time) is byte for byte the one computed from scratch (``summarize_history``), as
the window slides over generated histories: commits added in front, the oldest dropped, the
tree's paths changing, ties in time, huge and release commits."""

from __future__ import annotations

import msgspec
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from services.indexer.git.log import Commit, FileChange
from services.indexer.history import summarize_history
from services.indexer.history_delta import HistoryRow, HistoryState, assemble

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


def _stored(state: HistoryState, paths: set[str], table: dict[str, HistoryRow]) -> bytes:
    """List the state's rows into ``table`` as the write does (replace, then add), and the whole
    history they make with the head."""
    listing = state.listing(paths)
    if listing.replaced is None:
        table.clear()
    else:
        for path in listing.replaced:
            del table[path]  # only rows that were there are replaced
    for row in listing.rows:
        assert row[0] not in table
        table[row[0]] = row
    return orjson.dumps(assemble(listing.head, [table[p] for p in sorted(table)]))


@settings(max_examples=150, deadline=None)
@given(
    drawn=st.lists(_commit, min_size=1, max_size=30),
    depth=st.integers(1, 12),
    steps=st.lists(
        st.tuples(st.integers(0, 4), st.sets(st.sampled_from([*PATHS, "gen/1.py", "gen/7.py"]))), max_size=6
    ),
)
def test_a_sliding_window_by_delta_equals_a_summary_from_scratch(
    drawn: list[tuple[int, str, str, list[tuple[str, int, int]], bool]],
    depth: int,
    steps: list[tuple[int, set[str]]],
) -> None:
    history = _commits(drawn)
    head = len(history) - 1  # index of the commit the window starts at, moving toward newer ones
    paths = set(PATHS) | {f"gen/{k}.py" for k in range(40)}
    window = history[head : head + depth]
    state = HistoryState.build(window, depth)
    table: dict[str, HistoryRow] = {}
    assert _stored(state, paths, table) == _expected(window, depth, paths)
    for step, keep in steps:  # the window moves and the tree's paths change
        moved = head - max(head - step, 0)
        head -= moved
        before, window = window, history[head : head + depth]
        if not state.advance(window):
            assert moved >= len(before)  # only a window with nothing in common is rebuilt
            state = HistoryState.build(window, depth)
        paths = keep | {"README.md"}
        assert _stored(state, paths, table) == _expected(window, depth, paths)


def test_one_new_commit_lists_only_its_paths() -> None:
    """The cost of an update is the commits that moved: one commit touching one file relists
    that file's row alone (its rules and hot spot rank with it)."""
    files = [FileChange(f"pkg/m{i}.py", 1, 0) for i in range(5)]
    history = [Commit(f"{n:040x}", "a@x", "A", n, "Add thing", files[n % 3 : n % 3 + 3]) for n in range(6)][::-1]
    paths = {f.path for f in files}
    state = HistoryState.build(history, 100)
    assert len(state.listing(paths).rows) == 5
    newer = Commit("f" * 40, "b@x", "B", 99, "Fix crash", [FileChange("pkg/m4.py", 2, 1)])
    assert state.advance([newer, *history])
    listing = state.listing(paths)
    assert [row[0] for row in listing.rows] == listing.replaced == ["pkg/m4.py"]
    assert listing.rows[0][1:4] == (3, 2, 4)  # commits, authors, lines added
