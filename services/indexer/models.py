"""The indexer service's database: repositories, index runs, snapshots and extracted facts.

Facts are stored per blob (``blob_facts``), so content already parsed is never parsed again;
a snapshot is the list of a commit's files pointing at those blobs, plus the documents
computed over the whole tree (structure and history).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from services.kit.db import new_id, now_ms, service_metadata
from services.kit.inbox import define_inbox
from services.kit.outbox import define_outbox


class Base(DeclarativeBase):
    metadata = service_metadata()


outbox = define_outbox(Base.metadata)
inbox = define_inbox(Base.metadata)

ACTIVE_STATES = ("queued", "indexing")


class Repository(Base):
    __tablename__ = "repositories"
    __table_args__ = (
        # One registration per owner and source; hosted ones are also addressed by full_name.
        Index("uq_repositories_owner_kind_source", "owner", "kind", "source", unique=True),
        Index("ix_repositories_full_name", "full_name"),
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(10))  # local | url | hosted
    source: Mapped[str] = mapped_column(Text)  # realpath, clone URL, or owner/repo
    full_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # "user:<id>" | "org:<id>"; "" for a hosted repository registered by an installation event
    # and not yet claimed by anyone (visible to nobody until then).
    owner: Mapped[str] = mapped_column(String(50), index=True)
    installation_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    status: Mapped[str] = mapped_column(String(12), default="active")  # active | retired
    default_branch: Mapped[str] = mapped_column(String(255), default="")
    created_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    head_sha: Mapped[str] = mapped_column(String(64), default="")  # of the last successful index
    snapshot_id: Mapped[str | None] = mapped_column(String(32), nullable=True)  # current snapshot
    # seq of the snapshot whose file list the open file_versions rows are (the last one written).
    files_seq: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    last_run_id: Mapped[str | None] = mapped_column(String(32), nullable=True)


class IndexRun(Base):
    __tablename__ = "index_runs"
    __table_args__ = (
        # At most one queued-or-indexing run per repository: the database decides the 409.
        Index(
            "uq_index_runs_active",
            "repository_id",
            unique=True,
            postgresql_where=text("state IN ('queued', 'indexing')"),
        ),
        Index("ix_index_runs_state_lease", "state", "lease_expires_at"),
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    repository_id: Mapped[str] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"), index=True)
    state: Mapped[str] = mapped_column(String(12))  # queued | indexing | ready | failed
    incremental: Mapped[bool] = mapped_column(Boolean, default=False)
    ref: Mapped[str] = mapped_column(String(255), default="")
    target_sha: Mapped[str] = mapped_column(String(64), default="")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str] = mapped_column(String(100), default="")
    lease_expires_at: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    files_total: Mapped[int] = mapped_column(Integer, default=0)
    files_done: Mapped[int] = mapped_column(Integer, default=0)
    files_parsed: Mapped[int] = mapped_column(Integer, default=0)
    files_skipped: Mapped[int] = mapped_column(Integer, default=0)
    phase: Mapped[str] = mapped_column(String(20), default="")
    error: Mapped[str] = mapped_column(Text, default="")
    error_code: Mapped[str] = mapped_column(String(50), default="")
    timings: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    # What a ready run let through or left out that its user should know (fsck.py, ingestion bounds).
    notes: Mapped[list[str]] = mapped_column(JSONB, default=list)
    queued_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    started_at: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    finished_at: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    updated_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)


class Snapshot(Base):
    """One indexed commit: its files (``snapshot_files``) and the documents over them."""

    __tablename__ = "snapshots"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    repository_id: Mapped[str] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"), index=True)
    run_id: Mapped[str] = mapped_column(String(32))
    commit_sha: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    # From the sequence snapshot_seq: increasing in the order snapshots are written, never reused.
    seq: Mapped[int] = mapped_column(BigInteger, server_default=text("nextval('snapshot_seq')"))
    # Documents over the whole tree, as JSON bytes: written once per index and always read
    # whole, so neither the server's JSONB parse nor its pglz compression is worth paying.
    stats: Mapped[bytes] = mapped_column(LargeBinary)
    domains: Mapped[bytes] = mapped_column(LargeBinary)
    segments: Mapped[bytes] = mapped_column(LargeBinary)
    network: Mapped[bytes] = mapped_column(LargeBinary)
    # The history's counts and hot spots; its per-file rows are ``history_versions``.
    history: Mapped[bytes] = mapped_column(LargeBinary)
    facts_schema: Mapped[int] = mapped_column(Integer)


class FileVersion(Base):
    """One version of one path, in the snapshots whose ``seq`` is in [since_seq, until_seq).

    An index by delta closes the rows of the paths it changed and adds their new versions;
    every other row stays as it is (docs/indexing.md#incremental-indexing)."""

    __tablename__ = "file_versions"
    __table_args__ = (Index("ix_file_versions_repository_until", "repository_id", "until_seq"),)
    repository_id: Mapped[str] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True)
    path: Mapped[str] = mapped_column(Text, primary_key=True)
    since_seq: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    until_seq: Mapped[int] = mapped_column(BigInteger)  # OPEN_SEQ while in the last written snapshot
    blob_sha: Mapped[str] = mapped_column(String(64))
    mode: Mapped[str] = mapped_column(String(6))
    size: Mapped[int] = mapped_column(BigInteger)
    language: Mapped[str] = mapped_column(String(32), default="")
    skipped: Mapped[str] = mapped_column(String(32), default="")
    resolved: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)


class HistoryVersion(Base):
    """One version of one path's history (its ``FileHistory`` and the co-change rules it is the
    source of), in the snapshots whose ``seq`` is in [since_seq, until_seq), like ``FileVersion``:
    an index writes the paths whose history changed (docs/indexing.md#history-by-version-range).
    The snapshot's ``history`` document holds the rest (counts, hot spots)."""

    __tablename__ = "history_versions"
    __table_args__ = (Index("ix_history_versions_repository_until", "repository_id", "until_seq"),)
    repository_id: Mapped[str] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True)
    # Code point order, as Python sorts: the API lists histories in path order.
    path: Mapped[str] = mapped_column(Text(collation="C"), primary_key=True)
    since_seq: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    until_seq: Mapped[int] = mapped_column(BigInteger)
    commits: Mapped[int] = mapped_column(Integer)
    authors: Mapped[int] = mapped_column(Integer)
    added: Mapped[int] = mapped_column(BigInteger)
    deleted: Mapped[int] = mapped_column(BigInteger)
    churn: Mapped[int] = mapped_column(BigInteger)
    fix_commits: Mapped[int] = mapped_column(Integer)
    first_timestamp: Mapped[int] = mapped_column(BigInteger)
    last_timestamp: Mapped[int] = mapped_column(BigInteger)
    last_sha: Mapped[str] = mapped_column(String(64))
    cochanges: Mapped[int] = mapped_column(Integer)  # rules with this path as source
    rules: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)  # JSON [[target, support, confidence]]


OPEN_SEQ = 2**63 - 1


class _Views(DeclarativeBase):
    """Read-only views, kept out of the service's metadata (migrations create them by hand)."""

    metadata = MetaData()


class SnapshotFile(_Views):
    """The files of a snapshot: the view ``snapshot_files`` over ``file_versions``."""

    __tablename__ = "snapshot_files"
    snapshot_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    path: Mapped[str] = mapped_column(Text, primary_key=True)
    blob_sha: Mapped[str] = mapped_column(String(64))
    mode: Mapped[str] = mapped_column(String(6))
    size: Mapped[int] = mapped_column(BigInteger)
    language: Mapped[str] = mapped_column(String(32), default="")
    skipped: Mapped[str] = mapped_column(String(32), default="")
    # Snapshot-level corrections of the blob's facts (imports resolved against this tree,
    # tests_for completed): msgpack {"imports": [...], "tests_for": [...]}, or NULL.
    resolved: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)


class SnapshotHistory(_Views):
    """The file histories of a snapshot: the view ``snapshot_histories`` over ``history_versions``."""

    __tablename__ = "snapshot_histories"
    snapshot_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    path: Mapped[str] = mapped_column(Text(collation="C"), primary_key=True)
    commits: Mapped[int] = mapped_column(Integer)
    authors: Mapped[int] = mapped_column(Integer)
    added: Mapped[int] = mapped_column(BigInteger)
    deleted: Mapped[int] = mapped_column(BigInteger)
    churn: Mapped[int] = mapped_column(BigInteger)
    fix_commits: Mapped[int] = mapped_column(Integer)
    first_timestamp: Mapped[int] = mapped_column(BigInteger)
    last_timestamp: Mapped[int] = mapped_column(BigInteger)
    last_sha: Mapped[str] = mapped_column(String(64))
    cochanges: Mapped[int] = mapped_column(Integer)
    rules: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)


class BlobFacts(Base):
    """Facts of one blob at one path (path-dependent facts: language, module, test-ness)."""

    __tablename__ = "blob_facts"
    repository_id: Mapped[str] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True)
    blob_sha: Mapped[str] = mapped_column(String(64), primary_key=True)
    path: Mapped[str] = mapped_column(Text, primary_key=True)
    schema: Mapped[int] = mapped_column(Integer)
    language: Mapped[str] = mapped_column(String(32), default="")
    skipped: Mapped[str] = mapped_column(String(32), default="")
    facts: Mapped[bytes] = mapped_column(LargeBinary)  # msgpack FileFacts
    summary: Mapped[bytes] = mapped_column(LargeBinary)  # msgpack FileSummary (what structure needs)
