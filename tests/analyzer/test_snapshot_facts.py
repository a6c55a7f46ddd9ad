"""Learning from facts kept and updated by delta (and from what each file taught the learners, kept
with them) equals learning from a full decode, byte for byte.

Histories are drawn by hypothesis over real source files (this project's own ``services/kit`` and
``services/source`` modules): functions appended with different naming and documentation habits,
modules added as copies under new packages, deleted, renamed, imports added (which moves other
files' resolved imports without changing their text), tests added. Every commit's facts are
extracted and resolved as the indexer does and streamed in path order; the analyzer's state is
updated from the previous one (or from nothing, as on a replica that did not learn the last
commit), and the model learned from it must serialize to the same bytes as the model learned
from decoding the whole stream.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.analyzer.engine import encode_model, learn
from services.analyzer.engine.learn_memo import LearnMemo
from services.analyzer.snapshot_facts import FactsCache, SnapshotFacts, update
from services.source.extract import extract
from services.source.facts import FileFacts, decode, encode
from services.source.imports import resolve_imports

ROOT = Path(__file__).resolve().parents[2]
REAL = sorted(
    p.relative_to(ROOT).as_posix()
    for d in ("services/kit", "services/source")
    for p in (ROOT / d).glob("*.py")
    if p.stat().st_size < 12_000
)
BASE: dict[str, str] = {path: (ROOT / path).read_text() for path in REAL}
PATHS = st.sampled_from(REAL)

_function = st.tuples(
    st.sampled_from(["load_items", "loadItems", "LoadItems", "_load", "fetch_all_rows"]),
    st.booleans(),  # documented
    st.booleans(),  # annotated
)
_edit = st.one_of(
    st.tuples(st.just("append"), PATHS, _function),
    st.tuples(st.just("copy"), PATHS, st.sampled_from(["services/extra", "lib", "services/kit/more"])),
    st.tuples(st.just("delete"), PATHS, st.none()),
    st.tuples(st.just("rename"), PATHS, st.sampled_from(["services/moved", "pkg"])),
    st.tuples(st.just("import"), PATHS, PATHS),
    st.tuples(st.just("test"), PATHS, st.none()),
    # A base class with a documented method, and a subclass overriding it in another file: the
    # override is not asked for a docstring while the base has the method (documentation.overrides).
    st.tuples(st.just("base"), PATHS, st.sampled_from(["Base0", "Base1"])),
    st.tuples(st.just("derive"), PATHS, st.sampled_from(["Base0", "Base1"])),
)
# A commit is a few edits, and whether the replica learning it kept the previous state.
_commit = st.tuples(st.lists(_edit, min_size=1, max_size=4), st.booleans())


def _module(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")


def _apply(tree: dict[str, str], edit: tuple[str, str, object], serial: int) -> None:
    kind, path, arg = edit
    text = tree.get(path)
    if text is None:
        return
    if kind == "append" and isinstance(arg, tuple):
        name, documented, annotated = arg
        params = "(value: int) -> int" if annotated else "(value)"
        doc = f'    """Load {serial}."""\n' if documented else ""
        tree[path] = text + f"\n\ndef {name}{serial}{params}:\n{doc}    return value\n"
    elif kind == "copy":
        tree[f"{arg}/copy{serial}_{path.rsplit('/', 1)[-1]}"] = text
    elif kind == "delete":
        del tree[path]
    elif kind == "rename":
        tree[f"{arg}/{path.rsplit('/', 1)[-1]}"] = tree.pop(path)
    elif kind == "import" and isinstance(arg, str) and arg != path:
        tree[path] = f"import {_module(arg)}  # {serial}\n" + text
    elif kind == "base":
        tree[path] = text + f'\n\nclass {arg}:\n    def close(self):\n        """Close it."""\n'
    elif kind == "derive":
        tree[path] = text + f"\n\nclass Impl{serial}({arg}):\n    def close(self):\n        pass\n"
    elif kind == "test":
        name = path.rsplit("/", 1)[-1]
        test = f"from {_module(path)} import *\n\n\ndef test_{serial}():\n    assert True\n"
        tree[f"tests/test_{serial}_{name}"] = test


@cache
def _extracted(path: str, text: str) -> FileFacts:
    return extract(path, text.encode())


def _stream(tree: dict[str, str]) -> list[tuple[str, bytes]]:
    """What the indexer streams: every file's resolved facts, encoded, in path order."""
    facts = resolve_imports([_extracted(path, text) for path, text in sorted(tree.items())])
    return [(f.path, encode(f)) for f in facts]


def _model_bytes(facts: list[FileFacts], commit: str, memo: LearnMemo | None = None) -> bytes:
    return encode_model(learn(facts, repository="repo", commit=commit, memo=memo))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_commit, min_size=1, max_size=5))
def test_models_learned_by_delta_equal_full_relearns(history: list[tuple[list[tuple[str, str, object]], bool]]) -> None:
    tree = dict(BASE)
    state: SnapshotFacts | None = None
    blobs = _stream(tree)
    state, first = update(None, "repo", "c0", blobs)
    assert first.decoded == len(blobs)
    assert first.kept == 0
    serial = 0
    for number, (edits, kept_state) in enumerate(history, start=1):
        for edit in edits:
            serial += 1
            _apply(tree, edit, serial)
        before = dict(blobs)
        blobs = _stream(tree)
        commit = f"c{number}"
        state, delta = update(state if kept_state else None, "repo", commit, blobs)
        if kept_state:
            # Only what differs is decoded: changed or new bytes (an import added elsewhere moves a
            # file's resolved imports though its text is the same).
            assert delta.decoded == sum(1 for path, data in blobs if before.get(path) != data)
            assert delta.removed == len(before.keys() - {path for path, _ in blobs})
        full = [decode(data) for _, data in blobs]
        assert state.facts == full
        # Learned by delta too (state.learned: what each file taught the learners, learn_memo.py).
        assert _model_bytes(state.facts, commit, state.learned) == _model_bytes(full, commit)


def test_an_unchanged_snapshot_decodes_nothing_and_another_repository_everything() -> None:
    blobs = _stream({path: BASE[path] for path in REAL[:5]})
    state, _ = update(None, "repo", "c0", blobs)
    again, delta = update(state, "repo", "c1", blobs)
    assert (delta.decoded, delta.kept, delta.removed) == (0, 5, 0)
    assert all(again.files[p][1] is state.files[p][1] for p in again.files)  # shared, not copied
    _, other = update(state, "other", "c0", blobs)
    assert other.decoded == 5


def test_the_cache_keeps_the_last_learned_repositories_and_hands_each_state_out_once() -> None:
    cache = FactsCache(2)
    for repo in ("a", "b", "c"):
        cache.put(SnapshotFacts(repo, "c0", {}))
    assert cache.take("a") is None  # the oldest went
    taken = cache.take("b")
    assert taken is not None
    assert taken.repository == "b"
    assert cache.take("b") is None  # a learning run owns it until it puts the new state back
    cache.drop("c")
    assert cache.take("c") is None
    FactsCache(0).put(SnapshotFacts("a", "c0", {}))  # capacity 0 keeps nothing


def test_the_cache_holds_at_most_its_file_bound() -> None:
    def state(repo: str, n: int) -> SnapshotFacts:
        return SnapshotFacts(
            repo,
            "c0",
            {f"f{i}.py": (b"", FileFacts(path=f"f{i}.py", language="python", size=1, lines=1)) for i in range(n)},
        )

    cache = FactsCache(3, max_files=10)
    cache.put(state("a", 4))
    cache.put(state("b", 5))
    assert cache.files == 9
    cache.put(state("c", 3))  # 12 > 10: the oldest goes
    assert cache.take("a") is None
    assert cache.files == 8
    cache.put(state("big", 11))  # larger than the bound on its own: not kept, nothing else evicted
    assert cache.take("big") is None
    assert cache.files == 8
