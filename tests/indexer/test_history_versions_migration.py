"""The migration to file histories by version range keeps every existing snapshot's history (its
rows listed by ``snapshot_histories``, reassembled the same as the document was), and its
downgrade gives the whole documents back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import psycopg
from alembic import command

from services.indexer.history_delta import assemble
from services.kit import migrations

SERVICE = Path(__file__).resolve().parents[2] / "services" / "indexer"
BEFORE = "20261126_1400"


def _entry(path: str, commits: int) -> dict[str, Any]:
    return {
        "path": path,
        "commits": commits,
        "authors": 1,
        "added": 3,
        "deleted": 1,
        "churn": 4,
        "fix_commits": 0,
        "first_timestamp": 1_700_000_000,
        "last_timestamp": 1_700_003_600,
        "last_sha": "a" * 40,
    }


DOCUMENTS = {
    "s1": {
        "commits": 4,
        "huge_commits": 1,
        "files": [_entry("a.py", 3), _entry("b.py", 2), _entry("Z.py", 1)],
        "cochanges": [
            {"source": "a.py", "target": "b.py", "support": 2, "confidence": 0.6667},
            {"source": "b.py", "target": "a.py", "support": 2, "confidence": 1.0},
        ],
        "hot_spots": [{"path": "a.py", "score": 9.2877, "commits": 3, "churn": 4, "fix_commits": 0}],
        "depth": 2000,
    },
    "s2": {"commits": 1, "huge_commits": 0, "files": [_entry("a.py", 1)], "cochanges": [], "hot_spots": [], "depth": 5},
}


def _documents(conn: psycopg.Connection[Any]) -> dict[str, Any]:
    return {sid: orjson.loads(bytes(doc)) for sid, doc in conn.execute("SELECT id, history FROM snapshots")}


def test_existing_snapshots_keep_their_histories_both_ways(databases: Any) -> None:
    url = databases.create("indexer").replace("postgresql+psycopg://", "postgresql://", 1)
    command.downgrade(migrations.alembic_config(SERVICE, url), BEFORE)
    with psycopg.connect(url, autocommit=True) as conn:
        for repo in ("r1", "r2"):
            conn.execute(
                "INSERT INTO repositories (id, name, kind, source, owner, status, default_branch, created_at,"
                " head_sha, files_seq) VALUES (%s, %s, 'local', %s, 'user:t', 'active', '', 0, '', 1)",
                (repo, repo, f"/src/{repo}"),
            )
        for snapshot, repo in (("s1", "r1"), ("s2", "r1"), ("s3", "r2")):
            document = orjson.dumps(DOCUMENTS.get(snapshot, {}))
            conn.execute(
                "INSERT INTO snapshots (id, repository_id, run_id, commit_sha, created_at, stats, domains, segments,"
                " network, history, facts_schema) VALUES (%s, %s, 'run', 'c', 0, '{}', '[]', '[]', '{}', %s, 1)",
                (snapshot, repo, document),
            )

    migrations.upgrade(SERVICE, url)
    with psycopg.connect(url, autocommit=True) as conn:
        heads = _documents(conn)
        assert heads["s1"] == {
            "commits": 4,
            "huge_commits": 1,
            "file_count": 3,
            "cochange_pairs": 2,
            "hot_spots": DOCUMENTS["s1"]["hot_spots"],
            "depth": 2000,
        }
        for snapshot, document in DOCUMENTS.items():
            rows = conn.execute(
                "SELECT path, commits, authors, added, deleted, churn, fix_commits, first_timestamp,"
                " last_timestamp, last_sha, cochanges, rules FROM snapshot_histories WHERE snapshot_id = %s"
                " ORDER BY path",
                (snapshot,),
            ).fetchall()
            expected = dict(document, files=sorted(document["files"], key=lambda f: f["path"]))
            assert assemble(orjson.dumps(heads[snapshot]), rows) == expected
        assert [
            p for (p,) in conn.execute("SELECT path FROM snapshot_histories WHERE snapshot_id = 's1' ORDER BY path")
        ] == [
            "Z.py",
            "a.py",
            "b.py",
        ]  # code point order, as Python sorts
        # No open rows were made: every repository's next index writes its lists whole.
        assert conn.execute("SELECT count(*) FROM repositories WHERE files_seq IS NOT NULL").fetchone() == (0,)
        conn.execute("DELETE FROM snapshots WHERE id = 's1'")  # its rows leave the listing with it
        assert conn.execute("SELECT DISTINCT snapshot_id FROM snapshot_histories").fetchall() == [("s2",)]

    command.downgrade(migrations.alembic_config(SERVICE, url), BEFORE)
    with psycopg.connect(url, autocommit=True) as conn:
        after = _documents(conn)
    assert after["s2"] == DOCUMENTS["s2"]
    assert after["s3"] == {"commits": 0, "huge_commits": 0, "files": [], "cochanges": [], "hot_spots": [], "depth": 0}
