"""Bulk SQL of the indexing pipeline, on plain psycopg connections.

Extraction workers are separate processes and the pipeline runs in a thread, so they use
synchronous connections and ``COPY`` rather than the service's async session: thousands of
rows per index are written at COPY speed, not statement by statement.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import orjson
import psycopg

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


def current_summaries(conn: psycopg.Connection[Any], repository_id: str, schema: int) -> bytes | None:
    """The summaries of the repository's current snapshot, when extracted with ``schema``."""
    with conn.cursor(binary=True) as cur:
        cur.execute(
            "SELECT s.summaries FROM snapshots s JOIN repositories r ON r.snapshot_id = s.id"
            " WHERE r.id = %s AND s.facts_schema = %s",
            (repository_id, schema),
        )
        row = cur.fetchone()
    return bytes(row[0]) if row else None


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
    summaries: bytes,
    base: tuple[str, Sequence[str]] | None = None,
) -> None:
    """The snapshot row, its documents and its file list, in one transaction (not yet current).

    ``base`` = (snapshot id, paths): the rows of that snapshot, except those paths, are copied
    inside the server; ``files`` then holds only the rows that differ from it (an incremental
    index sends what changed, not the whole tree). Documents may come encoded already."""
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(
            """
            INSERT INTO snapshots (id, repository_id, run_id, commit_sha, created_at,
                                   stats, domains, segments, network, history, facts_schema, summaries)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
            """,
            (
                snapshot_id,
                repository_id,
                run_id,
                commit_sha,
                created_at,
                *(_json(documents[k]) for k in ("stats", "domains", "segments", "network", "history")),
                facts_schema,
                summaries,
            ),
        )
        with cur.copy(
            "COPY snapshot_files (snapshot_id, path, blob_sha, mode, size, language, skipped, resolved)"
            " FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["varchar", "text", "varchar", "varchar", "int8", "varchar", "varchar", "bytea"])
            for row in files:
                copy.write_row((snapshot_id, *row))
        if base is not None:
            cur.execute(
                """
                INSERT INTO snapshot_files (snapshot_id, path, blob_sha, mode, size, language, skipped, resolved)
                SELECT %s, path, blob_sha, mode, size, language, skipped, resolved FROM snapshot_files
                WHERE snapshot_id = %s AND NOT (path = ANY(%s))
                """,
                (snapshot_id, base[0], list(base[1])),
            )


def delete_snapshot(conn: psycopg.Connection[Any], snapshot_id: str) -> None:
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("DELETE FROM snapshots WHERE id = %s", (snapshot_id,))


def _json(value: Any) -> bytes:
    return value if isinstance(value, bytes) else orjson.dumps(value)


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
