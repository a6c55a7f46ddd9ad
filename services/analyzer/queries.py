"""SQL statements of the analyzer service (no rules here)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

import orjson
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.dialects.postgresql import distinct_on, insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from services.analyzer.models import (
    Audit,
    ConventionModelRow,
    ExternalFindingRow,
    FeedbackRow,
    FindingRow,
    Preferences,
    Repository,
    RuleCalibrationRow,
    now_ms,
    outbox,
)

# Statements that run in a unit of work or on a single-statement (autocommit) connection.
Executor = AsyncSession | AsyncConnection
# Feedback rows per INSERT: 11 columns each, PostgreSQL binds at most 32,767 parameters.
_FEEDBACK_CHUNK = 2000

# --- repositories -------------------------------------------------------------------------------


async def repository_by_ref(session: AsyncSession, ref: str) -> Repository | None:
    """By id, or by hosted ``owner/repo`` (case-insensitive)."""
    if "/" in ref:
        stmt = select(Repository).where(func.lower(Repository.full_name) == ref.lower())
    else:
        stmt = select(Repository).where(Repository.id == ref)
    return (await session.execute(stmt.limit(1))).scalar_one_or_none()


async def owners(session: AsyncSession, repo_ids: Sequence[str]) -> dict[str, str]:
    stmt = select(Repository.id, Repository.owner).where(Repository.id.in_(list(repo_ids)))
    return {repo_id: owner for repo_id, owner in (await session.execute(stmt)).all()}


async def repository_version(session: AsyncSession, repo_id: str) -> int | None:
    stmt = select(Repository.version).where(Repository.id == repo_id)
    return (await session.execute(stmt)).scalar_one_or_none()


async def repository_versions(session: AsyncSession, repo_ids: Sequence[str]) -> dict[str, int]:
    stmt = select(Repository.id, Repository.version).where(Repository.id.in_(list(repo_ids)))
    return {repo_id: version for repo_id, version in (await session.execute(stmt)).all()}


async def upsert_repository(session: AsyncSession, repo_id: str, *, owner: str, full_name: str, head_sha: str) -> None:
    values = {"id": repo_id, "owner": owner, "full_name": full_name, "head_sha": head_sha, "updated_at": now_ms()}
    stmt = insert(Repository).values(**values, version=0, state="pending")
    changed: dict[str, Any] = {k: stmt.excluded[k] for k in ("head_sha", "updated_at")}
    # An event without owner or name (an older publisher) must not erase what we know.
    changed["owner"] = func.coalesce(func.nullif(stmt.excluded.owner, ""), Repository.owner)
    changed["full_name"] = func.coalesce(func.nullif(stmt.excluded.full_name, ""), Repository.full_name)
    await session.execute(stmt.on_conflict_do_update(index_elements=[Repository.id], set_=changed))


async def set_model(session: AsyncSession, repo_id: str, model_id: str, commit: str, learned_at: int) -> int:
    stmt = (
        update(Repository)
        .where(Repository.id == repo_id)
        .values(
            model_id=model_id,
            model_commit=commit,
            learned_at=learned_at,
            state="ready",
            error="",
            updated_at=now_ms(),
            version=Repository.version + 1,
        )
        .returning(Repository.version)
    )
    return int((await session.execute(stmt)).scalar_one())


async def mark_failed(session: AsyncSession, repo_id: str, error: str) -> None:
    stmt = update(Repository).where(Repository.id == repo_id).values(state="failed", error=error[:2000])
    await session.execute(stmt)


async def bump_version(session: AsyncSession, repo_id: str) -> int:
    stmt = (
        update(Repository)
        .where(Repository.id == repo_id)
        .values(version=Repository.version + 1, updated_at=now_ms())
        .returning(Repository.version)
    )
    return int((await session.execute(stmt)).scalar_one_or_none() or 0)


async def delete_repository(session: AsyncSession, repo_id: str) -> None:
    for table in (FeedbackRow, ExternalFindingRow, RuleCalibrationRow, ConventionModelRow, Audit):
        column = table.repository_id
        await session.execute(delete(table).where(column == repo_id))
    await session.execute(delete(Repository).where(Repository.id == repo_id))


# --- models -------------------------------------------------------------------------------------


async def model_id_for_commit(session: AsyncSession, repo_id: str, commit: str) -> str | None:
    stmt = select(ConventionModelRow.id).where(
        ConventionModelRow.repository_id == repo_id, ConventionModelRow.commit == commit
    )
    return (await session.execute(stmt)).scalar_one_or_none()


async def save_model(session: AsyncSession, values: dict[str, Any]) -> str:
    """Insert or replace the model of (repository, commit); returns its id."""
    base = insert(ConventionModelRow).values(**values)
    keep = ("created_at", "files", "conventions", "enforced", "learn_ms", "schema", "model", "summary")
    stmt = base.on_conflict_do_update(
        constraint="uq_convention_models_repo_commit", set_={k: base.excluded[k] for k in keep}
    ).returning(ConventionModelRow.id)
    return str((await session.execute(stmt)).scalar_one())


async def model_row(session: AsyncSession, model_id: str) -> ConventionModelRow | None:
    return await session.get(ConventionModelRow, model_id)


async def current_models(session: AsyncSession, repo_ids: Sequence[str]) -> list[Any]:
    """Each repository's current model without its payload (for fleet views)."""
    stmt = (
        select(
            Repository.id,
            Repository.full_name,
            Repository.model_commit,
            Repository.learned_at,
            ConventionModelRow.files,
            ConventionModelRow.conventions,
            ConventionModelRow.enforced,
            ConventionModelRow.summary,
        )
        .join(ConventionModelRow, ConventionModelRow.id == Repository.model_id)
        .where(Repository.id.in_(list(repo_ids)))
    )
    return list((await session.execute(stmt)).all())


# --- audits and findings ------------------------------------------------------------------------


# An audit, its findings and its analysis.completed outbox row in ONE statement: on the path of
# every analysis, one round trip on an autocommit connection instead of BEGIN, three inserts and
# COMMIT. It is still atomic (one statement is one transaction), so the event leaves only with
# its audit. Findings travel as one JSON parameter, so the statement compiles once for any count.
_RECORD_AUDIT = text(
    f"""
    with audit as (
        insert into {Audit.__tablename__} (id, repository_id, owner, user_id, kind, "commit", pr_number, files,
                            findings, duration_ms, created_at, summary)
        values (:id, :repository_id, :owner, :user_id, :kind, :commit, :pr_number, :files,
                :finding_count, :duration_ms, :created_at, cast(:summary as jsonb))
    ), found as (
        insert into {FindingRow.__tablename__} (audit_id, repository_id, finding_id, fingerprint, rule, category,
                              severity, confidence, message, path, start_line, end_line, evidence,
                              suggestion, created_at)
        select :id, :repository_id, f.finding_id, f.fingerprint, f.rule, f.category, f.severity,
               f.confidence, f.message, f.path, f.start_line, f.end_line, f.evidence, f.suggestion,
               :created_at
        from jsonb_to_recordset(cast(:rows as jsonb)) as f(
            finding_id text, fingerprint text, rule text, category text, severity text,
            confidence float8, message text, path text, start_line int, end_line int,
            evidence jsonb, suggestion text)
    )
    insert into {outbox.name} (id, subject, type, payload, created_at)
    values (:event_id, :event_subject, :event_type, :event_payload, :event_created_at)
    """
)


async def record_audit(
    db: Executor, audit: dict[str, Any], findings: list[dict[str, Any]], event: dict[str, Any]
) -> None:
    """Store ``audit`` (``findings`` = its count) with its finding rows and its outbox ``event``."""
    params = {**audit, "finding_count": audit["findings"], "summary": orjson.dumps(audit["summary"]).decode()}
    params["rows"] = orjson.dumps(findings).decode()
    params |= {f"event_{key}": value for key, value in event.items()}
    await db.execute(_RECORD_AUDIT, params)


async def recent_audits(session: AsyncSession, repo_ids: Sequence[str], limit: int) -> list[Audit]:
    stmt = select(Audit).where(Audit.repository_id.in_(list(repo_ids))).order_by(Audit.created_at.desc()).limit(limit)
    return list((await session.execute(stmt)).scalars())


async def audit_counts(session: AsyncSession, repo_ids: Sequence[str], since: int) -> list[tuple[Any, ...]]:
    stmt = (
        select(Audit.repository_id, Audit.kind, func.count(), func.sum(Audit.findings), func.max(Audit.created_at))
        .where(Audit.repository_id.in_(list(repo_ids)), Audit.created_at >= since)
        .group_by(Audit.repository_id, Audit.kind)
    )
    return [tuple(r) for r in (await session.execute(stmt)).all()]


async def reported(
    session: AsyncSession, repo_id: str, finding_ids: Collection[str], fingerprints: Collection[str]
) -> tuple[dict[str, FindingRow], dict[str, FindingRow]]:
    """The latest stored finding per finding id and per fingerprint that a report refers to:
    two queries for a whole report, however many items it holds."""

    async def latest(column: Any, keys: Collection[str]) -> dict[str, FindingRow]:
        if not keys:
            return {}
        stmt = (
            select(FindingRow)
            .where(FindingRow.repository_id == repo_id, column.in_(sorted(keys)))
            .ext(distinct_on(column))
            .order_by(column, FindingRow.created_at.desc())
        )
        return {getattr(row, column.key): row for row in (await session.execute(stmt)).scalars()}

    return await latest(FindingRow.finding_id, finding_ids), await latest(FindingRow.fingerprint, fingerprints)


async def findings_for_path(session: AsyncSession, repo_id: str, path: str, limit: int) -> list[FindingRow]:
    """The most recent finding per fingerprint on one path."""
    stmt = (
        select(FindingRow)
        .where(FindingRow.repository_id == repo_id, FindingRow.path == path)
        .ext(distinct_on(FindingRow.fingerprint))
        .order_by(FindingRow.fingerprint, FindingRow.created_at.desc())
    )
    rows = list((await session.execute(stmt)).scalars())
    rows.sort(key=lambda r: (-r.created_at, r.start_line))
    return rows[:limit]


async def findings_by_day(session: AsyncSession, repo_id: str, since: int) -> list[tuple[Any, ...]]:
    day = func.to_char(func.to_timestamp(FindingRow.created_at / 1000.0).op("AT TIME ZONE")("UTC"), "YYYY-MM-DD")
    stmt = (
        select(day.label("day"), FindingRow.rule, FindingRow.severity, func.count())
        .where(FindingRow.repository_id == repo_id, FindingRow.created_at >= since)
        .group_by(day, FindingRow.rule, FindingRow.severity)
        .order_by(day)
    )
    return [tuple(r) for r in (await session.execute(stmt)).all()]


async def finding_totals(session: AsyncSession, repo_ids: Sequence[str], since: int) -> list[tuple[Any, ...]]:
    stmt = (
        select(FindingRow.repository_id, FindingRow.severity, func.count())
        .where(FindingRow.repository_id.in_(list(repo_ids)), FindingRow.created_at >= since)
        .group_by(FindingRow.repository_id, FindingRow.severity)
    )
    return [tuple(r) for r in (await session.execute(stmt)).all()]


# --- feedback, external findings, calibration ---------------------------------------------------


async def upsert_feedback(session: AsyncSession, rows: Sequence[dict[str, Any]]) -> None:
    """One verdict per fingerprint (the caller keeps the last of a report's duplicates: one
    statement cannot update a row twice), in chunks that stay under PostgreSQL's parameter limit."""
    for start in range(0, len(rows), _FEEDBACK_CHUNK):
        stmt = insert(FeedbackRow).values(list(rows[start : start + _FEEDBACK_CHUNK]))
        changed = {k: stmt.excluded[k] for k in ("finding_id", "rule", "path", "verdict", "comment", "user_id")}
        changed["updated_at"] = stmt.excluded.created_at
        key = [FeedbackRow.repository_id, FeedbackRow.fingerprint]
        await session.execute(stmt.on_conflict_do_update(index_elements=key, set_=changed))


async def verdict_counts(session: AsyncSession, repo_id: str) -> list[tuple[Any, ...]]:
    stmt = (
        select(FeedbackRow.rule, FeedbackRow.verdict, func.count())
        .where(FeedbackRow.repository_id == repo_id)
        .group_by(FeedbackRow.rule, FeedbackRow.verdict)
    )
    return [tuple(r) for r in (await session.execute(stmt)).all()]


async def suppressed_fingerprints(session: AsyncSession, repo_id: str) -> list[str]:
    stmt = select(FeedbackRow.fingerprint).where(
        FeedbackRow.repository_id == repo_id, FeedbackRow.verdict.in_(("dismissed", "false_positive"))
    )
    return list((await session.execute(stmt)).scalars())


async def feedback_for_path(session: AsyncSession, repo_id: str, path: str, limit: int) -> list[FeedbackRow]:
    stmt = (
        select(FeedbackRow)
        .where(FeedbackRow.repository_id == repo_id, FeedbackRow.path == path)
        .order_by(FeedbackRow.updated_at.desc())
        .limit(limit)
    )
    return list((await session.execute(stmt)).scalars())


async def insert_external(session: AsyncSession, rows: list[dict[str, Any]]) -> None:
    if rows:
        await session.execute(insert(ExternalFindingRow), rows)


async def external_findings(
    session: AsyncSession, repo_id: str, *, path: str | None = None, limit: int = 5000
) -> list[ExternalFindingRow]:
    stmt = select(ExternalFindingRow).where(ExternalFindingRow.repository_id == repo_id)
    if path is not None:
        stmt = stmt.where(ExternalFindingRow.path == path)
    stmt = stmt.order_by(ExternalFindingRow.created_at.desc()).limit(limit)
    return list((await session.execute(stmt)).scalars())


async def replace_calibration(session: AsyncSession, repo_id: str, rows: Iterable[dict[str, Any]]) -> None:
    await session.execute(delete(RuleCalibrationRow).where(RuleCalibrationRow.repository_id == repo_id))
    values = [{**r, "repository_id": repo_id, "updated_at": now_ms()} for r in rows]
    if values:
        await session.execute(insert(RuleCalibrationRow), values)


async def calibration_rows(session: AsyncSession, repo_ids: Sequence[str]) -> list[RuleCalibrationRow]:
    stmt = (
        select(RuleCalibrationRow)
        .where(RuleCalibrationRow.repository_id.in_(list(repo_ids)))
        .order_by(RuleCalibrationRow.repository_id, RuleCalibrationRow.rule)
    )
    return list((await session.execute(stmt)).scalars())


# --- preferences --------------------------------------------------------------------------------


async def preferences(session: AsyncSession, owner: str) -> Preferences | None:
    return await session.get(Preferences, owner)


async def preferences_of(session: AsyncSession, owners: Sequence[str]) -> dict[str, Preferences]:
    stmt = select(Preferences).where(Preferences.owner.in_(list(owners)))
    return {row.owner: row for row in (await session.execute(stmt)).scalars()}


async def save_preferences(session: AsyncSession, owner: str, document: dict[str, Any], user_id: str) -> int:
    at = now_ms()
    stmt = insert(Preferences).values(owner=owner, document=document, updated_by=user_id, updated_at=at)
    stmt = stmt.on_conflict_do_update(
        index_elements=[Preferences.owner],
        set_={"document": stmt.excluded.document, "updated_by": stmt.excluded.updated_by, "updated_at": at},
    )
    await session.execute(stmt)
    return at


async def outdated_models(session: AsyncSession, schema: int, limit: int, *, exclude: Iterable[str] = ()) -> list[Any]:
    """Repositories whose current model an older engine learned, most recently learned first."""
    stmt = (
        select(Repository.id, Repository.owner, Repository.full_name)
        .join(ConventionModelRow, ConventionModelRow.id == Repository.model_id)
        .where(ConventionModelRow.schema < schema, Repository.id.not_in(list(exclude)))
        .order_by(Repository.learned_at.desc())
        .limit(limit)
    )
    return list((await session.execute(stmt)).all())


async def current_model_schema(session: AsyncSession, repo_id: str) -> int | None:
    stmt = (
        select(ConventionModelRow.schema)
        .join(Repository, ConventionModelRow.id == Repository.model_id)
        .where(Repository.id == repo_id)
    )
    return (await session.execute(stmt)).scalar_one_or_none()
