"""file histories stored by version range (history_versions), the history document only its head

Revision ID: 20261126_1700
Revises: 20261126_1400
Create Date: 2026-11-26 17:00:00

A snapshot's history was one JSON document with an entry per file (about 240 bytes each, 14 MB at
58k files), written whole at every index. Now each path's entry and the co-change rules it is the
source of are a row of ``history_versions``, by version range like ``file_versions``: an index
writes the paths whose history changed (docs/indexing.md#history-by-version-range). The
document keeps the window's counts and the hot spots. ``snapshot_histories`` lists a snapshot's
rows. Existing snapshots keep their histories, each row visible to its own snapshot only; every
repository's next index writes its whole lists once (``files_seq`` reset).
"""

from typing import Any

import orjson
import sqlalchemy as sa
from alembic import op

revision = "20261126_1700"
down_revision = "20261126_1400"
branch_labels = None
depends_on = None

VIEW = """
CREATE VIEW snapshot_histories AS
SELECT s.id AS snapshot_id, v.path, v.commits, v.authors, v.added, v.deleted, v.churn, v.fix_commits,
       v.first_timestamp, v.last_timestamp, v.last_sha, v.cochanges, v.rules
FROM snapshots s
JOIN history_versions v ON v.repository_id = s.repository_id AND v.since_seq <= s.seq AND v.until_seq > s.seq
"""
_ENTRY = (
    "path",
    "commits",
    "authors",
    "added",
    "deleted",
    "churn",
    "fix_commits",
    "first_timestamp",
    "last_timestamp",
    "last_sha",
)
_INSERT = sa.text(
    "INSERT INTO history_versions (repository_id, path, since_seq, until_seq, commits, authors, added, deleted,"
    " churn, fix_commits, first_timestamp, last_timestamp, last_sha, cochanges, rules) VALUES (:repository_id,"
    " :path, :seq, :seq + 1, :commits, :authors, :added, :deleted, :churn, :fix_commits, :first_timestamp,"
    " :last_timestamp, :last_sha, :cochanges, :rules)"
)


def upgrade() -> None:
    op.create_table(
        "history_versions",
        sa.Column("repository_id", sa.String(length=32), nullable=False),
        sa.Column("path", sa.Text(collation="C"), nullable=False),  # code point order, as Python sorts
        sa.Column("since_seq", sa.BigInteger(), nullable=False),
        sa.Column("until_seq", sa.BigInteger(), nullable=False),
        sa.Column("commits", sa.Integer(), nullable=False),
        sa.Column("authors", sa.Integer(), nullable=False),
        sa.Column("added", sa.BigInteger(), nullable=False),
        sa.Column("deleted", sa.BigInteger(), nullable=False),
        sa.Column("churn", sa.BigInteger(), nullable=False),
        sa.Column("fix_commits", sa.Integer(), nullable=False),
        sa.Column("first_timestamp", sa.BigInteger(), nullable=False),
        sa.Column("last_timestamp", sa.BigInteger(), nullable=False),
        sa.Column("last_sha", sa.String(length=64), nullable=False),
        sa.Column("cochanges", sa.Integer(), nullable=False),
        sa.Column("rules", sa.LargeBinary(), nullable=True),
        sa.ForeignKeyConstraint(
            ["repository_id"],
            ["repositories.id"],
            name=op.f("fk_history_versions_repository_id_repositories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("repository_id", "path", "since_seq", name=op.f("pk_history_versions")),
    )
    op.create_index("ix_history_versions_repository_until", "history_versions", ["repository_id", "until_seq"])
    conn = op.get_bind()
    snapshots = conn.execute(sa.text("SELECT id, repository_id, seq, history FROM snapshots")).fetchall()
    for snapshot_id, repository_id, seq, history in snapshots:
        document: dict[str, Any] = orjson.loads(bytes(history) or b"{}") or {}
        files = document.get("files", [])
        cochanges = document.get("cochanges", [])
        rules: dict[str, list[list[Any]]] = {}
        for rule in cochanges:
            rules.setdefault(rule["source"], []).append([rule["target"], rule["support"], rule["confidence"]])
        rows = [
            {
                "repository_id": repository_id,
                "seq": seq,
                **{name: entry[name] for name in _ENTRY},
                "cochanges": len(rules.get(entry["path"], [])),
                "rules": orjson.dumps(rules[entry["path"]]) if rules.get(entry["path"]) else None,
            }
            for entry in files
        ]
        if rows:
            conn.execute(_INSERT, rows)
        head = {
            "commits": document.get("commits", 0),
            "huge_commits": document.get("huge_commits", 0),
            "file_count": len(files),
            "cochange_pairs": len(cochanges),
            "hot_spots": document.get("hot_spots", []),
            "depth": document.get("depth", 0),
        }
        conn.execute(
            sa.text("UPDATE snapshots SET history = :head WHERE id = :id"),
            {"head": orjson.dumps(head), "id": snapshot_id},
        )
    # No open history rows yet: the next index of each repository writes its lists whole.
    op.execute("UPDATE repositories SET files_seq = NULL")
    op.execute(VIEW)


def downgrade() -> None:
    conn = op.get_bind()
    snapshots = conn.execute(sa.text("SELECT id, history FROM snapshots")).fetchall()
    for snapshot_id, history in snapshots:
        head: dict[str, Any] = orjson.loads(bytes(history) or b"{}") or {}
        rows = conn.execute(
            sa.text(f"SELECT {', '.join(_ENTRY)}, rules FROM snapshot_histories WHERE snapshot_id = :id ORDER BY path"),
            {"id": snapshot_id},
        ).fetchall()
        document = {
            "commits": head.get("commits", 0),
            "huge_commits": head.get("huge_commits", 0),
            "files": [dict(zip(_ENTRY, row[:10], strict=True)) for row in rows],
            "cochanges": [
                {"source": row[0], "target": target, "support": support, "confidence": confidence}
                for row in rows
                for target, support, confidence in (orjson.loads(row[10]) if row[10] else [])
            ],
            "hot_spots": head.get("hot_spots", []),
            "depth": head.get("depth", 0),
        }
        conn.execute(
            sa.text("UPDATE snapshots SET history = :document WHERE id = :id"),
            {"document": orjson.dumps(document), "id": snapshot_id},
        )
    op.execute("DROP VIEW snapshot_histories")
    op.drop_index("ix_history_versions_repository_until", table_name="history_versions")
    op.drop_table("history_versions")
