"""Building a repository's in-memory entry from the database: model, calibration, report conventions."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from services.analyzer import feedback, queries
from services.analyzer.engine import ConventionModel, decode_model, with_conventions
from services.analyzer.models import Repository
from services.analyzer.state import LoadedRepo


async def entry_for(
    session: AsyncSession,
    row: Repository,
    model: ConventionModel | None = None,
    summary: dict[str, Any] | None = None,
) -> LoadedRepo:
    """The entry for ``row``; pass ``model``/``summary`` when they were just learned (no decode)."""
    entry = LoadedRepo(
        id=row.id,
        full_name=row.full_name,
        owner=row.owner,
        head_sha=row.head_sha,
        version=row.version,
        model_id=row.model_id or "",
        commit=row.model_commit,
        learned_at=row.learned_at,
    )
    if not row.model_id:
        return entry
    if model is None:
        stored = await queries.model_row(session, row.model_id)
        if stored is None:
            return entry
        model = decode_model(stored.model)
        summary = stored.summary
    entry.summary = dict(summary or {})
    counts = await queries.verdict_counts(session, row.id)
    suppressed = await queries.suppressed_fingerprints(session, row.id)
    entry.calibration = feedback.build_calibration(counts, suppressed)
    external = await queries.external_findings(session, row.id)
    extra = feedback.report_conventions(external, model.thresholds)
    entry.model = with_conventions(model, extra) if extra else model
    return entry
