"""GetDashboard: index state, findings by rule and severity over time, acceptance from reports,
strongest and weakest conventions (shape in docs/review.md)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from services.analyzer import queries, repo_lookup, views
from services.analyzer.deps import Deps
from services.analyzer.models import RuleCalibrationRow
from services.contracts.v1 import analyzer_pb2
from services.kit.db import now_ms
from services.kit.messages import timestamp_of_ms

WINDOW_DAYS = 30
_DAY_MS = 86_400_000


def acceptance(row: RuleCalibrationRow) -> analyzer_pb2.RuleAcceptance:
    judged = row.accepted + row.fixed + row.dismissed + row.false_positive
    return analyzer_pb2.RuleAcceptance(
        rule=row.rule,
        state=row.state,
        reported=row.reported,
        accepted=row.accepted,
        fixed=row.fixed,
        dismissed=row.dismissed,
        false_positive=row.false_positive,
        false_positive_rate=row.false_positive_rate,
        acceptance_rate=round((row.accepted + row.fixed) / judged, 4) if judged else None,
        confidence_factor=row.confidence_factor,
    )


def overall_fp_rate(rows: list[RuleCalibrationRow]) -> float | None:
    reported = sum(r.reported for r in rows)
    return round(sum(r.dismissed + r.false_positive for r in rows) / reported, 4) if reported else None


def convention_counts(summary: dict[str, Any]) -> analyzer_pb2.ConventionCounts:
    """The model summary's counts of conventions by level (model_store.summarize)."""
    counts = summary.get("conventions") or {}
    return analyzer_pb2.ConventionCounts(
        total=counts.get("total", 0),
        strict=counts.get("strict", 0),
        loose=counts.get("loose", 0),
        by_family={
            family: analyzer_pb2.LevelCounts(**levels) for family, levels in counts.get("by_family", {}).items()
        },
    )


async def dashboard(deps: Deps, ref: str) -> analyzer_pb2.Dashboard:
    entry = await repo_lookup.resolve(deps, ref, repo_lookup.VIEW)
    assert entry.model is not None
    status = await repo_lookup.index_status(deps, entry)
    since = now_ms() - WINDOW_DAYS * _DAY_MS
    async with deps.db.session() as session:
        by_day = await queries.findings_by_day(session, entry.id, since)
        audits = await queries.audit_counts(session, [entry.id], since)
        calibration = await queries.calibration_rows(session, [entry.id])
    days: dict[str, analyzer_pb2.DayCounts] = {}
    by_rule: Counter[str] = Counter()
    by_severity: Counter[str] = Counter()
    for day, rule, severity, n in by_day:
        point = days.setdefault(day, analyzer_pb2.DayCounts(date=day))
        point.total += n
        point.by_severity[severity] += n
        point.by_rule[rule] += n
        by_rule[rule] += n
        by_severity[severity] += n
    index = analyzer_pb2.DashboardIndex(head_sha=entry.head_sha)
    if status is not None:
        index = analyzer_pb2.DashboardIndex(
            state=status.state,
            head_sha=status.head_sha,
            files_done=status.files_done,
            files_total=status.files_total,
            error=status.error or None,
            finished_at=timestamp_of_ms(status.finished_at),
        )
    conventions = entry.model.conventions
    return analyzer_pb2.Dashboard(
        repository_id=entry.id,
        index=index,
        model=analyzer_pb2.DashboardModel(
            commit=entry.commit,
            learned_at=timestamp_of_ms(entry.learned_at),
            files=entry.summary.get("files", entry.model.files),
            conventions=convention_counts(entry.summary),
        ),
        window_days=WINDOW_DAYS,
        audits=analyzer_pb2.AuditCounts(
            total=sum(n for _r, _k, n, _f, _a in audits),
            by_kind={kind: n for _r, kind, n, _f, _a in audits},
            last_at=timestamp_of_ms(max((a for *_x, a in audits), default=0)),
        ),
        findings=analyzer_pb2.FindingCounts(
            total=sum(by_severity.values()),
            by_severity=dict(by_severity),
            by_rule=[analyzer_pb2.RuleCount(rule=r, count=n) for r, n in by_rule.most_common()],
            over_time=[days[d] for d in sorted(days)],
        ),
        acceptance=[acceptance(r) for r in calibration],
        false_positive_rate=overall_fp_rate(calibration),
        strongest_conventions=[views.convention(c) for c in views.strongest(conventions, 10)],
        weakest_conventions=[views.convention(c) for c in views.weakest(conventions, 10)],
    )
