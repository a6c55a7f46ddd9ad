"""snapshot files stored by version range (file_versions), snapshot_files a view over it

Revision ID: 20261126_1400
Revises: 20261126_1030
Create Date: 2026-11-26 14:00:00

A snapshot's file list was one row per file per snapshot, so every index wrote (and every switch
deleted) as many rows as the tree has files. Now a row holds one version of one path and the
range of snapshot sequence numbers it belongs to: an index by delta closes the changed paths'
rows and inserts their new ones (docs/indexing.md#incremental-indexing). ``snapshot_files``
stays as a view with the same columns, so every read is unchanged. The per-snapshot copy of
every summary goes too (``snapshots.summaries``).
"""

import sqlalchemy as sa
from alembic import op

revision = "20261126_1400"
down_revision = "20261126_1030"
branch_labels = None
depends_on = None

OPEN = 9223372036854775807  # until_seq of a version still in the newest written snapshot

VIEW = """
CREATE VIEW snapshot_files AS
SELECT s.id AS snapshot_id, v.path, v.blob_sha, v.mode, v.size, v.language, v.skipped, v.resolved
FROM snapshots s
JOIN file_versions v ON v.repository_id = s.repository_id AND v.since_seq <= s.seq AND v.until_seq > s.seq
"""


def upgrade() -> None:
    op.execute("CREATE SEQUENCE snapshot_seq")
    op.add_column("snapshots", sa.Column("seq", sa.BigInteger(), server_default=sa.text("nextval('snapshot_seq')")))
    op.execute("UPDATE snapshots SET seq = nextval('snapshot_seq') WHERE seq IS NULL")
    op.alter_column("snapshots", "seq", nullable=False)
    op.add_column("repositories", sa.Column("files_seq", sa.BigInteger(), nullable=True))
    op.create_table(
        "file_versions",
        sa.Column("repository_id", sa.String(length=32), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("since_seq", sa.BigInteger(), nullable=False),
        sa.Column("until_seq", sa.BigInteger(), nullable=False),
        sa.Column("blob_sha", sa.String(length=64), nullable=False),
        sa.Column("mode", sa.String(length=6), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("language", sa.String(length=32), nullable=False),
        sa.Column("skipped", sa.String(length=32), nullable=False),
        sa.Column("resolved", sa.LargeBinary(), nullable=True),
        sa.ForeignKeyConstraint(
            ["repository_id"],
            ["repositories.id"],
            name=op.f("fk_file_versions_repository_id_repositories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("repository_id", "path", "since_seq", name=op.f("pk_file_versions")),
    )
    # Closing a changed path's open row and pruning closed rows both look rows up by until_seq.
    op.create_index("ix_file_versions_repository_until", "file_versions", ["repository_id", "until_seq"])
    # Existing snapshots keep their rows, each visible to its own snapshot only ([seq, seq + 1));
    # files_seq stays NULL, so each repository's next index writes its whole list once.
    op.execute(
        "INSERT INTO file_versions (repository_id, path, since_seq, until_seq, blob_sha, mode, size, language,"
        " skipped, resolved) SELECT s.repository_id, f.path, s.seq, s.seq + 1, f.blob_sha, f.mode, f.size,"
        " f.language, f.skipped, f.resolved FROM snapshot_files f JOIN snapshots s ON s.id = f.snapshot_id"
    )
    op.drop_table("snapshot_files")
    op.execute(VIEW)
    # Every file's summary as one value per snapshot: an index without its last state in memory
    # now reads them from blob_facts through the current snapshot's file rows instead.
    op.drop_column("snapshots", "summaries")


def downgrade() -> None:
    op.add_column(
        "snapshots", sa.Column("summaries", sa.LargeBinary(), server_default=sa.text("''::bytea"), nullable=False)
    )
    op.execute("CREATE TABLE snapshot_files_data AS SELECT * FROM snapshot_files")
    op.execute("DROP VIEW snapshot_files")
    op.execute("ALTER TABLE snapshot_files_data RENAME TO snapshot_files")
    op.create_primary_key("pk_snapshot_files", "snapshot_files", ["snapshot_id", "path"])
    op.create_foreign_key(
        "fk_snapshot_files_snapshot_id_snapshots",
        "snapshot_files",
        "snapshots",
        ["snapshot_id"],
        ["id"],
        ondelete="CASCADE",
    )
    op.drop_index("ix_file_versions_repository_until", table_name="file_versions")
    op.drop_table("file_versions")
    op.drop_column("repositories", "files_seq")
    op.drop_column("snapshots", "seq")
    op.execute("DROP SEQUENCE snapshot_seq")
