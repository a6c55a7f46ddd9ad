"""Bulk SQL of the indexing pipeline, on plain psycopg connections.

Extraction workers are separate processes and the pipeline runs in a thread, so they use
synchronous connections and ``COPY`` rather than the service's async session: thousands of
rows per index are written at COPY speed, not statement by statement.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
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


def write_snapshot(
    conn: psycopg.Connection[Any],
    *,
    snapshot_id: str,
    repository_id: str,
    run_id: str,
    commit_sha: str,
    created_at: int,
    files: Iterable[FileRow],
    documents: dict[str, Any],
    facts_schema: int,
    base: tuple[str, Sequence[str]] | None = None,
    same_as_base: Collection[str] = (),
) -> bool:
    """The snapshot row, its documents and its file list, in one transaction (not yet current).

    File lists are stored by version range (``file_versions``): a row belongs to the snapshots
    whose ``seq`` is in [since_seq, until_seq), and the open rows (``until_seq = OPEN_SEQ``) are
    the list of the last snapshot written (``repositories.files_seq``). ``base`` = (snapshot id,
    paths): the new list is that snapshot's except those paths, plus ``files``. When the base is
    the last written, only the open rows of those paths are closed: the write costs the change,
    not the tree. Otherwise (no base, or another snapshot was written after it) every open row
    is closed and the list written whole. Closing at the new, highest ``seq`` never changes what
    an older snapshot sees. True when written by delta. Documents may come encoded already; those
    named in ``same_as_base`` are copied from the base snapshot's row by the server."""
    with conn.transaction(), conn.cursor() as cur:
        # Writers of one repository's file list take turns (the open rows are shared state).
        cur.execute("SELECT files_seq FROM repositories WHERE id = %s FOR UPDATE", (repository_id,))
        locked = cur.fetchone()
        files_seq = locked[0] if locked else None
        base_seq = None
        if base is not None:
            cur.execute("SELECT seq FROM snapshots WHERE id = %s", (base[0],))
            found = cur.fetchone()
            base_seq = found[0] if found else None
        # A document equal to the base snapshot's is copied inside the server (already compressed)
        # instead of travelling again.
        values: list[str] = []
        params: list[Any] = [snapshot_id, repository_id, run_id, commit_sha, created_at]
        for name in _DOCUMENTS:
            if base_seq is not None and name in same_as_base:
                values.append(f"(SELECT {name} FROM snapshots WHERE id = %s)")
                params.append(base[0] if base is not None else None)
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
        if by_delta and base is not None:
            cur.execute(
                "UPDATE file_versions SET until_seq = %s"
                " WHERE repository_id = %s AND path = ANY(%s) AND until_seq = %s",
                (seq, repository_id, list(base[1]), OPEN_SEQ),
            )
        else:
            cur.execute(
                "UPDATE file_versions SET until_seq = %s WHERE repository_id = %s AND until_seq = %s",
                (seq, repository_id, OPEN_SEQ),
            )
            if base is not None:
                cur.execute(
                    f"""
                    INSERT INTO file_versions ({_VERSION_COLUMNS})
                    SELECT %s, path, %s, %s, blob_sha, mode, size, language, skipped, resolved
                    FROM snapshot_files WHERE snapshot_id = %s AND NOT (path = ANY(%s))
                    """,
                    (repository_id, seq, OPEN_SEQ, base[0], list(base[1])),
                )
        with cur.copy(f"COPY file_versions ({_VERSION_COLUMNS}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(
                ["varchar", "text", "int8", "int8", "varchar", "varchar", "int8", "varchar", "varchar", "bytea"]
            )
            for row in files:
                copy.write_row((repository_id, row[0], seq, OPEN_SEQ, *row[1:]))
        cur.execute("UPDATE repositories SET files_seq = %s WHERE id = %s", (seq, repository_id))
    return by_delta


_DOCUMENTS = ("stats", "domains", "segments", "network", "history")
_VERSION_COLUMNS = "repository_id, path, since_seq, until_seq, blob_sha, mode, size, language, skipped, resolved"


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
