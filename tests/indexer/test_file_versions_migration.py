"""The migration to file rows by version range keeps every existing snapshot's file list, and
its downgrade gives the per-snapshot table back with the same rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
from alembic import command

from services.kit import migrations

SERVICE = Path(__file__).resolve().parents[2] / "services" / "indexer"
BEFORE = "20261126_1030"
LISTING = (
    "SELECT snapshot_id, path, blob_sha, mode, size, language, skipped, resolved FROM snapshot_files ORDER BY 1, 2"
)


def test_existing_snapshots_keep_their_files_both_ways(databases: Any) -> None:
    url = databases.create("indexer").replace("postgresql+psycopg://", "postgresql://", 1)
    command.downgrade(migrations.alembic_config(SERVICE, url), BEFORE)
    with psycopg.connect(url, autocommit=True) as conn:
        for repo in ("r1", "r2"):
            conn.execute(
                "INSERT INTO repositories (id, name, kind, source, owner, status, default_branch, created_at,"
                " head_sha) VALUES (%s, %s, 'local', %s, 'user:t', 'active', '', 0, '')",
                (repo, repo, f"/src/{repo}"),
            )
        for snapshot, repo in (("s1", "r1"), ("s2", "r1"), ("s3", "r2")):
            conn.execute(
                "INSERT INTO snapshots (id, repository_id, run_id, commit_sha, created_at, stats, domains, segments,"
                " network, history, facts_schema, summaries) VALUES (%s, %s, 'run', 'c', 0, '{}', '[]', '[]', '{}',"
                " '{}', 1, '')",
                (snapshot, repo),
            )
        rows = [
            ("s1", "a.py", "b1", "100644", 3, "python", "", b"\x90"),
            ("s1", "b.py", "b2", "100644", 4, "python", "", None),
            ("s2", "a.py", "b3", "100644", 5, "python", "", None),
            ("s2", "c.bin", "b4", "100644", 6, "", "binary", None),
            ("s3", "a.py", "b1", "100644", 3, "python", "", None),
        ]
        for row in rows:
            conn.execute("INSERT INTO snapshot_files VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", row)
        before = conn.execute(LISTING).fetchall()
    assert len(before) == len(rows)

    migrations.upgrade(SERVICE, url)
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute(LISTING).fetchall() == before
        conn.execute("DELETE FROM snapshots WHERE id = 's1'")  # its rows leave the listing with it
        assert conn.execute(LISTING).fetchall() == before[2:]

    command.downgrade(migrations.alembic_config(SERVICE, url), BEFORE)
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute(LISTING).fetchall() == before[2:]
