"""A chain of incremental indexes equals a full index of the same commit, byte for byte.

Real git histories are generated (hypothesis draws the edits: bodies changed, imports added and
removed, modules added, deleted and renamed, test files, a JavaScript file, a skipped binary)
and every commit is indexed twice with the real pipeline against PostgreSQL: incrementally,
continuing from the previous index (by delta when this process still holds its state, from the
database when the state was lost, as on another replica), and fully into a second repository.
The snapshots must agree on every stored byte: the documents, every file row and every file
history row (whichever way each was written: by delta, copied from the base snapshot, or whole).
The one exception is ``stats.files_parsed``, which counts the work of the run, not the tree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from bench.indexing.harness import switch
from services.indexer.delta import StateCache
from services.indexer.extraction import ExtractorPool
from services.indexer.git import validate_local_repository
from services.indexer.pipeline import Limits, PipelineInput, Progress, SnapshotResult, build_snapshot
from tests.indexer.support import commit, git, init_repo, write

MODULES = ["app/models.py", "app/api.py", "app/services.py", "app/util/text.py", "lib/core.py", "lib/io.py"]
BASE = {
    "app/__init__.py": "",
    "app/util/__init__.py": "",
    "lib/__init__.py": "",
    "app/models.py": "class User:\n    name = ''\n",
    "app/api.py": "from app.models import User\n\n\ndef get(name):\n    return User()\n",
    "app/services.py": "from app import models\nfrom lib.core import run\n",
    "app/util/text.py": "import re\n",
    "lib/core.py": "from .io import read\n\n\ndef run():\n    return read()\n",
    "lib/io.py": "def read():\n    return 1\n",
    "tests/test_api.py": "from app.api import get\n\n\ndef test_get():\n    assert get('a')\n",
    "web/index.js": "import { x } from './lib.js'\n",
    "web/lib.js": "export const x = 1\n",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\0\0\0",
}

_body = st.sampled_from(["    return 1\n", "    return None\n", "    if x:\n        return x\n    return 0\n"])
_edit = st.one_of(
    st.tuples(st.just("body"), st.sampled_from(MODULES), _body),
    st.tuples(st.just("import"), st.sampled_from(MODULES), st.sampled_from(MODULES)),
    st.tuples(st.just("unimport"), st.sampled_from(MODULES), st.none()),
    st.tuples(st.just("add"), st.sampled_from(["app", "lib", "app/util", "pkg"]), st.sampled_from(MODULES)),
    st.tuples(st.just("delete"), st.sampled_from([*MODULES, "web/lib.js"]), st.none()),
    st.tuples(st.just("rename"), st.sampled_from(MODULES), st.sampled_from(["app", "lib", "pkg"])),
    st.tuples(st.just("test"), st.sampled_from(MODULES), st.none()),
    st.tuples(st.just("js"), st.sampled_from(["web/index.js", "web/lib.js"]), st.none()),
)
# A commit is a few edits, and what happened before it was indexed: nothing, this process lost
# its state (another replica), or a run wrote a snapshot of it that never became current (its
# worker lost the run) and was deleted, leaving the file rows it opened and closed behind.
_commit = st.tuples(st.lists(_edit, min_size=1, max_size=4), st.sampled_from(["keep", "lose", "discard"]))


def _module(path: str) -> str:
    return path[:-3].replace("/", ".").removesuffix(".__init__")


def _apply(repo: Path, edit: tuple[str, str, Any], serial: int) -> dict[str, str | bytes]:
    kind, path, arg = edit
    target = repo / path
    text = target.read_text() if target.is_file() else ""
    if kind == "body" and target.is_file():
        return {path: text + f"\n\ndef f{serial}(x=None):\n{arg}"}
    if kind == "import" and target.exists() and arg != path:
        return {path: f"from {_module(arg)} import *  # {serial}\n" + text}
    if kind == "unimport" and target.exists():
        lines = text.splitlines(keepends=True)
        kept = [line for line in lines if not line.startswith(("from ", "import "))][: max(len(lines) - 1, 0)]
        return {path: "".join(kept) or "\n"}
    if kind == "add":
        return {f"{path}/mod{serial}.py": f"from {_module(arg)} import *\n\n\ndef g{serial}():\n    return {serial}\n"}
    if kind == "delete" and target.exists():
        target.unlink()
    elif kind == "rename" and target.exists():
        dest = repo / arg / f"moved{serial}.py"
        dest.parent.mkdir(parents=True, exist_ok=True)
        target.rename(dest)
    elif kind == "test":
        return {f"tests/test_{serial}.py": f"from {_module(path)} import *\n\n\ndef test_{serial}():\n    pass\n"}
    elif kind == "js" and target.exists():
        return {path: text + f"export const v{serial} = {serial}\n"}
    return {}


def _snapshot(dsn: str, repository_id: str) -> dict[str, Any]:
    """Everything the current snapshot stores, minus ids and the run's own work count."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT s.id, s.commit_sha, s.stats, s.domains, s.segments, s.network, s.history, s.facts_schema"
            " FROM snapshots s JOIN repositories r ON r.snapshot_id = s.id WHERE r.id = %s",
            (repository_id,),
        ).fetchone()
        assert row is not None
        files = conn.execute(
            "SELECT path, blob_sha, mode, size, language, skipped, resolved FROM snapshot_files"
            " WHERE snapshot_id = %s ORDER BY path",
            (row[0],),
        ).fetchall()
        histories = conn.execute(
            "SELECT path, commits, authors, added, deleted, churn, fix_commits, first_timestamp, last_timestamp,"
            " last_sha, cochanges, rules FROM snapshot_histories WHERE snapshot_id = %s ORDER BY path",
            (row[0],),
        ).fetchall()
    stats = json.loads(row[2])
    stats.pop("files_parsed")
    return {
        "commit": row[1],
        "stats": stats,
        "domains": bytes(row[3]),
        "segments": bytes(row[4]),
        "network": bytes(row[5]),
        "history": bytes(row[6]),
        "schema": row[7],
        "files": [tuple(bytes(v) if isinstance(v, memoryview) else v for v in f) for f in files],
        "histories": [tuple(bytes(v) if isinstance(v, memoryview) else v for v in h) for h in histories],
    }


class Indexer:
    def __init__(self, dsn: str, repo: Path, work: Path, pool: ExtractorPool) -> None:
        self.dsn = dsn
        self.repo = repo
        self.work = work
        self.pool = pool
        self.states = StateCache()
        with psycopg.connect(dsn, autocommit=True) as conn:
            for repository_id in ("inc", "full"):
                conn.execute(
                    "INSERT INTO repositories (id, name, kind, source, owner, status, default_branch, created_at,"
                    " head_sha) VALUES (%s, %s, 'local', %s, 'user:t', 'active', '', 0, '')",
                    (repository_id, repository_id, f"{repo}#{repository_id}"),
                )

    def index(
        self, repository_id: str, *, incremental: bool, states: StateCache, discard: bool = False
    ) -> SnapshotResult:
        source = validate_local_repository(self.repo, [str(self.repo.parent)])
        mirror = self.work / f"{repository_id}.git"
        inp = PipelineInput(
            repository_id,
            f"run-{repository_id}",
            source,
            mirror,
            self.dsn,
            incremental=incremental,
            history_cache=mirror.with_suffix(".history"),
        )
        result = build_snapshot(inp, Limits(), self.pool, Progress(), states)
        if discard:  # the worker's final transaction when it no longer owns the run
            with psycopg.connect(self.dsn, autocommit=True) as conn:
                conn.execute("DELETE FROM snapshots WHERE id = %s", (result.snapshot_id,))
            return result
        switch(self.dsn, repository_id, result, facts=False)  # the worker's final transaction
        return result


@pytest.fixture(scope="module")
def pool() -> ExtractorPool:
    pool = ExtractorPool(1)
    pool.warm_up()
    yield pool  # type: ignore[misc]
    pool.shutdown()


@pytest.fixture
def dsn_factory(databases):  # type: ignore[no-untyped-def]
    return lambda: databases.create("indexer").replace("postgresql+psycopg://", "postgresql://", 1)


# Each example builds a repository and indexes every commit twice: a few examples, no shrinking
# (a failure prints its whole history instead).
@settings(
    max_examples=6,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(history=st.lists(_commit, min_size=2, max_size=5))
def test_a_chain_of_incremental_indexes_equals_a_full_index(
    history: list[tuple[list[tuple[str, str, Any]], str]], dsn_factory: Any, pool: ExtractorPool, tmp_path_factory: Any
) -> None:
    root = tmp_path_factory.mktemp("equivalence")
    repo = init_repo(root / "repo")
    commit(repo, BASE, "Import the project", at=1_700_000_000)
    indexer = Indexer(dsn_factory(), repo, root, pool)
    indexer.index("inc", incremental=False, states=indexer.states)
    serial = 0
    for step, (edits, before) in enumerate(history, start=1):
        changes: dict[str, str | bytes] = {}
        for edit in edits:
            serial += 1
            changes.update(_apply(repo, edit, serial))
        write(repo, changes)
        git(repo, "add", "-A")
        when, who = 1_700_000_000 + step * 3600, ("alice", "bob")[step % 2]
        git(repo, "commit", "-q", "--allow-empty", "-m", f"Fix step {step}", at=when, who=who)  # empty: history only
        if before == "lose":
            indexer.states = StateCache()  # as if another replica ran it: load from the database
        elif before == "discard":
            indexer.index("inc", incremental=True, states=indexer.states, discard=True)
        indexer.index("inc", incremental=True, states=indexer.states)
        indexer.index("full", incremental=False, states=StateCache(0))
        incremental, full = _snapshot(indexer.dsn, "inc"), _snapshot(indexer.dsn, "full")
        assert incremental["commit"] == git(repo, "rev-parse", "HEAD")
        assert incremental == full, f"step {step}: {edits}"


def test_a_body_change_is_indexed_by_delta(dsn_factory: Any, pool: ExtractorPool, tmp_path: Path) -> None:
    """The delta path is the one taken after a one-file change (not a silent full recompute)."""
    repo = init_repo(tmp_path / "repo")
    commit(repo, BASE, "Import the project")
    indexer = Indexer(dsn_factory(), repo, tmp_path, pool)
    indexer.index("inc", incremental=False, states=indexer.states)
    commit(
        repo, {"lib/io.py": "def read():\n    return 2\n\n\ndef more():\n    return 3\n"}, "Change io", at=1_700_003_600
    )
    result = indexer.index("inc", incremental=True, states=indexer.states)
    assert result.files_parsed == 1
    assert result.by_delta == ["load", "resolve", "structure", "history", "write"]
    with psycopg.connect(indexer.dsn) as conn:  # one file row written, the replaced one pruned
        versions = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE since_seq = s.seq) FROM file_versions v"
            " JOIN snapshots s ON s.id = %s WHERE v.repository_id = 'inc'",
            (result.snapshot_id,),
        ).fetchone()
        histories = conn.execute(  # and one history row: the changed file's
            "SELECT count(*), count(*) FILTER (WHERE since_seq = s.seq) FROM history_versions v"
            " JOIN snapshots s ON s.id = %s WHERE v.repository_id = 'inc'",
            (result.snapshot_id,),
        ).fetchone()
    assert versions == (len(BASE), 1)
    assert histories == (len(BASE), 1)
    indexer.index("full", incremental=False, states=StateCache(0))
    assert _snapshot(indexer.dsn, "inc") == _snapshot(indexer.dsn, "full")


def test_a_restarted_process_writes_only_the_changed_rows(
    dsn_factory: Any, pool: ExtractorPool, tmp_path: Path
) -> None:
    """Without the last state in memory the stored rows are compared: a one-file change still
    writes one file row and one history row, not the whole lists."""
    repo = init_repo(tmp_path / "repo")
    commit(repo, BASE, "Import the project")
    indexer = Indexer(dsn_factory(), repo, tmp_path, pool)
    indexer.index("inc", incremental=False, states=indexer.states)
    commit(repo, {"lib/io.py": "def read():\n    return 2\n"}, "Change io", at=1_700_003_600)
    result = indexer.index("inc", incremental=True, states=StateCache())  # a restarted process
    assert result.files_parsed == 1
    assert "write" in result.by_delta
    with psycopg.connect(indexer.dsn) as conn:
        written = [
            conn.execute(
                f"SELECT count(*) FROM {table} WHERE repository_id = 'inc'"
                " AND since_seq = (SELECT seq FROM snapshots WHERE id = %s)",
                (result.snapshot_id,),
            ).fetchone()
            for table in ("file_versions", "history_versions")
        ]
    assert written == [(1,), (1,)]
    indexer.index("full", incremental=False, states=StateCache(0))
    assert _snapshot(indexer.dsn, "inc") == _snapshot(indexer.dsn, "full")
