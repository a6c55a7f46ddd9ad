"""SQL statements of the indexer service (no rules here)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from sqlalchemy import Select, and_, delete, exists, func, or_, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession

from services.indexer.models import (
    ACTIVE_STATES,
    BlobFacts,
    FileVersion,
    HistoryVersion,
    IndexRun,
    Repository,
    Snapshot,
    SnapshotFile,
    SnapshotHistory,
    now_ms,
)

# ---- repositories


async def repository_by_id(session: AsyncSession, repo_id: str, *, lock: bool = False) -> Repository | None:
    stmt = select(Repository).where(Repository.id == repo_id)
    if lock:
        stmt = stmt.with_for_update()
    return (await session.execute(stmt)).scalar_one_or_none()


async def repositories_by_full_name(session: AsyncSession, full_name: str) -> list[Repository]:
    stmt = (
        select(Repository)
        .where(func.lower(Repository.full_name) == full_name.lower())
        .order_by(Repository.created_at, Repository.id)
    )
    return list((await session.execute(stmt)).scalars())


async def repository_by_source(session: AsyncSession, owner: str, kind: str, source: str) -> Repository | None:
    stmt = select(Repository).where(Repository.owner == owner, Repository.kind == kind, Repository.source == source)
    return (await session.execute(stmt)).scalar_one_or_none()


async def local_repositories_overlapping(session: AsyncSession, paths: Sequence[str]) -> list[Repository]:
    """Local repositories whose path is one of ``paths``, inside one, or around one."""
    clauses: list[Any] = []
    for path in paths:
        clauses += [
            Repository.source == path,
            func.starts_with(Repository.source, path + "/"),
            func.starts_with(path, Repository.source + "/"),
        ]
    stmt = select(Repository).where(Repository.kind == "local", or_(*clauses))
    return list((await session.execute(stmt)).scalars())


async def list_repositories(
    session: AsyncSession, owners: Sequence[str], limit: int, after: tuple[int, str] | None
) -> tuple[list[Repository], int]:
    """Newest first, keyset-paginated on (created_at, id)."""
    where: list[Any] = [Repository.owner.in_(list(owners))]
    total = (await session.execute(select(func.count()).select_from(Repository).where(*where))).scalar_one()
    if after is not None:
        created, rid = after
        where.append(or_(Repository.created_at < created, and_(Repository.created_at == created, Repository.id < rid)))
    stmt = select(Repository).where(*where).order_by(Repository.created_at.desc(), Repository.id.desc()).limit(limit)
    return list((await session.execute(stmt)).scalars()), int(total)


async def count_repositories(session: AsyncSession, owner: str) -> int:
    stmt = select(func.count()).select_from(Repository).where(Repository.owner == owner)
    return int((await session.execute(stmt)).scalar_one())


async def delete_repository(session: AsyncSession, repo_id: str) -> None:
    # Children go by ON DELETE CASCADE: runs, snapshots (and their files), blob facts.
    await session.execute(delete(Repository).where(Repository.id == repo_id))


async def set_status_by_full_name(session: AsyncSession, full_name: str, status: str, installation_id: int) -> int:
    values: dict[str, Any] = {"status": status}
    if installation_id:
        values["installation_id"] = installation_id
    result = await session.execute(
        update(Repository).where(func.lower(Repository.full_name) == full_name.lower()).values(**values)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


# ---- runs


async def run_by_id(session: AsyncSession, run_id: str) -> IndexRun | None:
    return await session.get(IndexRun, run_id)


async def runs_by_id(session: AsyncSession, run_ids: Sequence[str]) -> dict[str, IndexRun]:
    if not run_ids:
        return {}
    rows = (await session.execute(select(IndexRun).where(IndexRun.id.in_(list(run_ids))))).scalars()
    return {r.id: r for r in rows}


async def active_run(session: AsyncSession, repo_id: str) -> IndexRun | None:
    stmt = select(IndexRun).where(IndexRun.repository_id == repo_id, IndexRun.state.in_(ACTIVE_STATES))
    return (await session.execute(stmt)).scalar_one_or_none()


async def claim_run(session: AsyncSession, run_id: str, worker: str, lease_ms: int) -> IndexRun | None:
    """Take a queued run, one whose holder's lease expired, or one this worker held on an
    attempt it abandoned (its database went away mid-run: a worker runs one job at a time, so
    a redelivered run in its own name is not running); None when none of these."""
    now = now_ms()
    stmt = (
        update(IndexRun)
        .where(
            IndexRun.id == run_id,
            or_(
                IndexRun.state == "queued",
                and_(IndexRun.state == "indexing", or_(IndexRun.lease_expires_at < now, IndexRun.worker == worker)),
            ),
        )
        .values(
            state="indexing",
            attempts=IndexRun.attempts + 1,
            worker=worker,
            lease_expires_at=now + lease_ms,
            started_at=func.coalesce(IndexRun.started_at, now),
            updated_at=now,
            phase="starting",
            error="",
            error_code="",
        )
        .returning(IndexRun)
    )
    return (await session.execute(stmt)).scalar_one_or_none()


async def renew_lease(
    session: AsyncSession, run_id: str, worker: str, lease_ms: int, progress: dict[str, int | str]
) -> bool:
    """Extend our lease and record progress; False when the run is no longer ours."""
    now = now_ms()
    result = await session.execute(
        update(IndexRun)
        .where(IndexRun.id == run_id, IndexRun.worker == worker, IndexRun.state == "indexing")
        .values(lease_expires_at=now + lease_ms, updated_at=now, **progress)
        .returning(IndexRun.id)
    )
    return result.first() is not None


async def owned_run(session: AsyncSession, run_id: str, worker: str) -> IndexRun | None:
    """Our indexing run, locked for the final transition."""
    stmt = (
        select(IndexRun)
        .where(IndexRun.id == run_id, IndexRun.worker == worker, IndexRun.state == "indexing")
        .with_for_update()
    )
    return (await session.execute(stmt)).scalar_one_or_none()


async def oldest_active_run_ms(session: AsyncSession) -> int | None:
    """When the oldest queued or running index run was queued (None: none is)."""
    oldest = await session.execute(select(func.min(IndexRun.queued_at)).where(IndexRun.state.in_(ACTIVE_STATES)))
    return oldest.scalar()


async def expired_runs(session: AsyncSession, now: int, limit: int = 50) -> list[IndexRun]:
    stmt = (
        select(IndexRun)
        .where(IndexRun.state == "indexing", IndexRun.lease_expires_at < now)
        .order_by(IndexRun.lease_expires_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list((await session.execute(stmt)).scalars())


async def stale_queued_runs(session: AsyncSession, older_than: int, limit: int = 50) -> list[IndexRun]:
    stmt = (
        select(IndexRun)
        .where(IndexRun.state == "queued", IndexRun.updated_at < older_than)
        .order_by(IndexRun.updated_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list((await session.execute(stmt)).scalars())


# ---- snapshots


async def snapshot_by_id(session: AsyncSession, snapshot_id: str) -> Snapshot | None:
    return await session.get(Snapshot, snapshot_id)


async def snapshot_document(session: AsyncSession, snapshot_id: str, column: str) -> Any:
    stmt = select(getattr(Snapshot, column)).where(Snapshot.id == snapshot_id)
    return (await session.execute(stmt)).scalar_one_or_none()


async def delete_other_snapshots(session: AsyncSession, repo_id: str, keep: str) -> list[tuple[str, str]]:
    """Every snapshot but ``keep``, and the file and history rows no remaining snapshot sees:
    those closed at or before the oldest left. After a switch these are the rows the last index
    replaced, so this costs the change, not the tree (``bulk.write_snapshot``). Returns the
    pruned file rows' (path, blob)."""
    await session.execute(delete(Snapshot).where(Snapshot.repository_id == repo_id, Snapshot.id != keep))
    oldest = select(func.min(Snapshot.seq)).where(Snapshot.repository_id == repo_id).scalar_subquery()
    await session.execute(
        delete(HistoryVersion).where(HistoryVersion.repository_id == repo_id, HistoryVersion.until_seq <= oldest)
    )
    pruned = await session.execute(
        delete(FileVersion)
        .where(FileVersion.repository_id == repo_id, FileVersion.until_seq <= oldest)
        .returning(FileVersion.path, FileVersion.blob_sha)
    )
    return [(path, sha) for path, sha in pruned]


async def snapshot_histories(
    session: AsyncSession, snapshot_id: str, *, offset: int = 0, limit: int | None = None
) -> list[SnapshotHistory]:
    """A snapshot's file histories in path order (the column's collation is "C": code points, as
    Python sorts), a page of them when ``limit`` is given."""
    stmt = (
        select(SnapshotHistory)
        .where(SnapshotHistory.snapshot_id == snapshot_id)
        .order_by(SnapshotHistory.path)
        .offset(offset)
    )
    if limit is not None:
        stmt = stmt.limit(limit)
    return list((await session.execute(stmt)).scalars())


async def snapshot_history(session: AsyncSession, snapshot_id: str, path: str) -> SnapshotHistory | None:
    stmt = select(SnapshotHistory).where(SnapshotHistory.snapshot_id == snapshot_id, SnapshotHistory.path == path)
    return (await session.execute(stmt)).scalar_one_or_none()


async def snapshot_cochanges(session: AsyncSession, snapshot_id: str) -> list[tuple[str, int, bytes | None]]:
    """(path, commits, rules) of every file history of a snapshot, in path order."""
    stmt = (
        select(SnapshotHistory.path, SnapshotHistory.commits, SnapshotHistory.rules)
        .where(SnapshotHistory.snapshot_id == snapshot_id)
        .order_by(SnapshotHistory.path)
    )
    return [(path, commits, rules) for path, commits, rules in (await session.execute(stmt)).all()]


async def delete_snapshot(session: AsyncSession, snapshot_id: str) -> None:
    await session.execute(delete(Snapshot).where(Snapshot.id == snapshot_id))


async def delete_unreferenced_facts(
    session: AsyncSession, repo_id: str, candidates: Sequence[tuple[str, str]] | None = None
) -> None:
    """Facts of blobs no file row points at any more (older versions, failed runs): among the
    (path, blob) ``candidates`` (the rows a switch pruned), or all of the repository's."""
    if candidates is not None and not candidates:
        return
    referenced = exists().where(
        FileVersion.repository_id == repo_id,
        FileVersion.path == BlobFacts.path,
        FileVersion.blob_sha == BlobFacts.blob_sha,
    )
    stmt = delete(BlobFacts).where(BlobFacts.repository_id == repo_id, ~referenced)
    if candidates is not None:
        stmt = stmt.where(tuple_(BlobFacts.path, BlobFacts.blob_sha).in_(list(candidates)))
    await session.execute(stmt)


def _with_facts(repo_id: str, snapshot_id: str) -> Select[SnapshotFile, bytes]:
    """A snapshot's file rows, each with its blob's facts (None when none were extracted)."""
    facts_of_blob = and_(
        BlobFacts.repository_id == repo_id,
        BlobFacts.blob_sha == SnapshotFile.blob_sha,
        BlobFacts.path == SnapshotFile.path,
    )
    return (
        select(SnapshotFile, BlobFacts.facts)
        .outerjoin(BlobFacts, facts_of_blob)
        .where(SnapshotFile.snapshot_id == snapshot_id)
    )


async def snapshot_file(
    session: AsyncSession, repo_id: str, snapshot_id: str, path: str
) -> tuple[SnapshotFile, bytes | None] | None:
    stmt = _with_facts(repo_id, snapshot_id).where(SnapshotFile.path == path).limit(1)
    row = (await session.execute(stmt)).first()
    return (row[0], row[1]) if row else None


async def snapshot_files(
    session: AsyncSession, repo_id: str, snapshot_id: str, paths: list[str]
) -> dict[str, tuple[SnapshotFile, bytes | None]]:
    """``snapshot_file`` for many paths in one statement; a path the snapshot lacks is absent."""
    found: dict[str, tuple[SnapshotFile, bytes | None]] = {}
    stmt = _with_facts(repo_id, snapshot_id).where(SnapshotFile.path.in_(paths))
    for row, facts in (await session.execute(stmt)).all():
        found.setdefault(row.path, (row, facts))
    return found


async def stream_snapshot_facts(
    session: AsyncSession, repo_id: str, snapshot_id: str, batch: int = 500
) -> AsyncIterator[tuple[SnapshotFile, bytes | None]]:
    stmt = _with_facts(repo_id, snapshot_id).order_by(SnapshotFile.path).execution_options(yield_per=batch)
    result = await session.stream(stmt)
    async for row in result:
        yield row[0], row[1]
