"""Bulk SQL of the indexing pipeline, on plain psycopg connections.

Extraction workers are separate processes and the pipeline runs in a thread, so they use
synchronous connections and ``COPY`` rather than the service's async session: thousands of
rows per index are written at COPY speed, not statement by statement.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import psycopg

from services.indexer.models import OPEN_SEQ

BlobRow = tuple[str, str, int, str, str, bytes, bytes]  # sha, path, schema, language, skipped, facts, summary
FileRow = tuple[str, str, str, int, str, str, bytes | None]  # path, sha, mode, size, language, skipped, resolved

_STAGE = """
CREATE TEMP TABLE IF NOT EXISTS blob_facts_stage (
    blob_sha varchar(64), path text, schema integer, language varchar(32), skipped varchar(32),
    facts bytea, summary bytea
) ON COMMIT DELETE ROWS
"""


def connect(dsn: str) -> psycopg.Connection[Any]:
    return psycopg.connect(dsn, autocommit=False, application_name="indexer-pipeline")


def write_blob_facts(conn: psycopg.Connection[Any], repository_id: str, rows: Sequence[BlobRow]) -> None:
    """Upsert facts per (blob, path): COPY into a staging table, then one INSERT ... SELECT."""
    if not rows:
        return
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(_STAGE)
        with cur.copy(
            "COPY blob_facts_stage (blob_sha, path, schema, language, skipped, facts, summary)"
            " FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["varchar", "text", "int4", "varchar", "varchar", "bytea", "bytea"])
            for row in rows:
                copy.write_row(row)
        cur.execute(
            """
            INSERT INTO blob_facts (repository_id, blob_sha, path, schema, language, skipped, facts, summary)
            SELECT %s, blob_sha, path, schema, language, skipped, facts, summary FROM blob_facts_stage
            ON CONFLICT (repository_id, blob_sha, path) DO UPDATE SET
                schema = EXCLUDED.schema, language = EXCLUDED.language, skipped = EXCLUDED.skipped,
                facts = EXCLUDED.facts, summary = EXCLUDED.summary
            """,
            (repository_id,),
        )


def current_summaries(
    conn: psycopg.Connection[Any], repository_id: str, schema: int
) -> dict[tuple[str, str], bytes] | None:
    """The summaries of the files of the repository's current snapshot extracted with
    ``schema``, by (blob sha, path); None when it has no snapshot."""
    with conn.cursor(binary=True) as cur:
        cur.execute("SELECT snapshot_id FROM repositories WHERE id = %s AND snapshot_id IS NOT NULL", (repository_id,))
        if cur.fetchone() is None:
            return None
        cur.execute(
            "SELECT b.blob_sha, b.path, b.summary FROM repositories r"
            " JOIN snapshot_files f ON f.snapshot_id = r.snapshot_id"
            " JOIN blob_facts b ON b.repository_id = r.id AND b.blob_sha = f.blob_sha AND b.path = f.path"
            " WHERE r.id = %s AND b.schema = %s",
            (repository_id, schema),
        )
        return {(sha, path): bytes(summary) for sha, path, summary in cur}


@dataclass
class StoredLists:
    """The lists of a stored snapshot as rows (what ``write_snapshot`` wrote for it), so that an
    index without its last state in memory still sends only the rows that differ."""

    snapshot_id: str
    files: dict[str, FileRow]
    histories: dict[str, tuple[Any, ...]]


def stored_lists(conn: psycopg.Connection[Any], snapshot_id: str, history_columns: Sequence[str]) -> StoredLists:
    with conn.cursor(binary=True) as cur:
        cur.execute(f"SELECT {', '.join(FILE_COLUMNS)} FROM snapshot_files WHERE snapshot_id = %s", (snapshot_id,))
        files = {row[0]: row for row in cur}
        cur.execute(
            f"SELECT {', '.join(history_columns)} FROM snapshot_histories WHERE snapshot_id = %s", (snapshot_id,)
        )
        histories = {row[0]: row for row in cur}
    return StoredLists(snapshot_id, files, histories)


def current_snapshot_id(conn: psycopg.Connection[Any], repository_id: str) -> str | None:
    with conn.cursor() as cur:
        cur.execute("SELECT snapshot_id FROM repositories WHERE id = %s", (repository_id,))
        row = cur.fetchone()
    return row[0] if row else None


def known_summaries(conn: psycopg.Connection[Any], repository_id: str, schema: int) -> dict[tuple[str, str], bytes]:
    """Every summary extracted for this repository, by (blob sha, path): the fallback when
    there is no current snapshot to start from (first index, after failures)."""
    with conn.cursor(binary=True) as cur:
        cur.execute(
            "SELECT blob_sha, path, summary FROM blob_facts WHERE repository_id = %s AND schema = %s",
            (repository_id, schema),
        )
        return {(sha, path): bytes(summary) for sha, path, summary in cur}


@dataclass
class Versions:
    """One list of rows stored by version range (``file_versions``, ``history_versions``) that a
    snapshot write brings up to date: ``rows`` are the new versions to add, ``replaced`` the paths
    of the base snapshot's rows they replace or that left the list (None: the list is ``rows``
    alone, whatever the base had)."""

    table: str
    view: str
    columns: tuple[str, ...]
    types: tuple[str, ...]
    rows: Iterable[tuple[Any, ...]]
    replaced: Sequence[str] | None


FILE_COLUMNS = ("path", "blob_sha", "mode", "size", "language", "skipped", "resolved")
FILE_TYPES = ("text", "varchar", "varchar", "int8", "varchar", "varchar", "bytea")


def file_versions(rows: Iterable[FileRow], replaced: Sequence[str] | None) -> Versions:
    return Versions("file_versions", "snapshot_files", FILE_COLUMNS, FILE_TYPES, rows, replaced)


def write_snapshot(
    conn: psycopg.Connection[Any],
    *,
    snapshot_id: str,
    repository_id: str,
    run_id: str,
    commit_sha: str,
    created_at: int,
    lists: Sequence[Versions],
    documents: dict[str, Any],
    facts_schema: int,
    base: str | None = None,
    same_as_base: Collection[str] = (),
) -> set[str]:
    """The snapshot row, its documents and its lists (files, histories), in one transaction (not
    yet current).

    Lists are stored by version range: a row belongs to the snapshots whose ``seq`` is in
    [since_seq, until_seq), and the open rows (``until_seq = OPEN_SEQ``) are the lists of the last
    snapshot written (``repositories.files_seq``). ``base`` is the snapshot the lists' ``replaced``
    paths are relative to. When it is the last written, only the open rows of those paths are
    closed: the write costs the change, not the tree. Otherwise (no base, or another snapshot was
    written after it) every open row is closed and each list written whole (the base's rows but
    the replaced ones copied inside the server). Closing at the new, highest ``seq`` never changes
    what an older snapshot sees. Returns the tables written by delta. Documents may come encoded already;
    those named in ``same_as_base`` are copied from the base snapshot's row by the server."""
    with conn.transaction(), conn.cursor() as cur:
        # Writers of one repository's lists take turns (the open rows are shared state).
        cur.execute("SELECT files_seq FROM repositories WHERE id = %s FOR UPDATE", (repository_id,))
        locked = cur.fetchone()
        files_seq = locked[0] if locked else None
        base_seq = None
        if base is not None:
            cur.execute("SELECT seq FROM snapshots WHERE id = %s", (base,))
            found = cur.fetchone()
            base_seq = found[0] if found else None
        # A document equal to the base snapshot's is copied inside the server (already compressed)
        # instead of travelling again.
        values: list[str] = []
        params: list[Any] = [snapshot_id, repository_id, run_id, commit_sha, created_at]
        for name in _DOCUMENTS:
            if base_seq is not None and name in same_as_base:
                values.append(f"(SELECT {name} FROM snapshots WHERE id = %s)")
                params.append(base)
            else:
                values.append("%b")  # binary: a bytea in text format travels hex-encoded, twice its size
                params.append(_json(documents[name]))
        cur.execute(
            f"""
            INSERT INTO snapshots (id, repository_id, run_id, commit_sha, created_at, {", ".join(_DOCUMENTS)},
                                   facts_schema)
            VALUES (%s, %s, %s, %s, %s, {", ".join(values)}, %s) RETURNING seq
            """,
            (*params, facts_schema),
        )
        seq = _one(cur)
        by_delta = base_seq is not None and base_seq == files_seq
        for versions in lists:
            _write_versions(cur, repository_id, seq, base if base_seq is not None else None, by_delta, versions)
        cur.execute("UPDATE repositories SET files_seq = %s WHERE id = %s", (seq, repository_id))
    return {v.table for v in lists if by_delta and v.replaced is not None}


def _write_versions(
    cur: psycopg.Cursor[Any], repository_id: str, seq: int, base: str | None, by_delta: bool, versions: Versions
) -> None:
    table, replaced = versions.table, versions.replaced
    if by_delta and replaced is not None:
        cur.execute(
            f"UPDATE {table} SET until_seq = %s WHERE repository_id = %s AND path = ANY(%s) AND until_seq = %s",
            (seq, repository_id, list(replaced), OPEN_SEQ),
        )
    else:
        cur.execute(
            f"UPDATE {table} SET until_seq = %s WHERE repository_id = %s AND until_seq = %s",
            (seq, repository_id, OPEN_SEQ),
        )
        if base is not None and replaced is not None:
            columns = ", ".join(versions.columns)
            cur.execute(
                f"""
                INSERT INTO {table} (repository_id, since_seq, until_seq, {columns})
                SELECT %s, %s, %s, {columns} FROM {versions.view} WHERE snapshot_id = %s AND NOT (path = ANY(%s))
                """,
                (repository_id, seq, OPEN_SEQ, base, list(replaced)),
            )
    columns = ", ".join(versions.columns)
    with cur.copy(f"COPY {table} (repository_id, since_seq, until_seq, {columns}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(["varchar", "int8", "int8", *versions.types])
        for row in versions.rows:
            copy.write_row((repository_id, seq, OPEN_SEQ, *row))


_DOCUMENTS = ("stats", "domains", "segments", "network", "history")


def _one(cur: psycopg.Cursor[Any]) -> Any:
    row = cur.fetchone()
    assert row is not None
    return row[0]


def delete_snapshot(conn: psycopg.Connection[Any], snapshot_id: str) -> None:
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("DELETE FROM snapshots WHERE id = %s", (snapshot_id,))


def _json(value: Any) -> bytes:
    return value if isinstance(value, bytes) else orjson.dumps(value)


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
