"""ReportFindings: feedback on our findings and findings from other reviewers, and what they change.

A verdict is kept per finding fingerprint (the latest wins), so a dismissed or false-positive
finding stays quiet on that code while a later "accepted" revives it. Per rule and repository the
verdicts calibrate the rule (engine ``calibrate``: downgraded, then muted, or more confident);
the effective false-positive rate is (dismissed + false positive) / findings judged. External
findings join the file's history and, once a kind recurs, become a convention of its own.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from services.analyzer import feedback, loading, preferences, queries, repo_lookup, views
from services.analyzer.deps import Deps
from services.analyzer.engine import calibrate
from services.analyzer.models import FindingRow, now_ms
from services.analyzer.state import LoadedRepo
from services.contracts.v1 import analyzer_pb2
from services.kit.errors import ServiceError

log = logging.getLogger(__name__)

_MAX_MESSAGE = 5000


def _invalid(field: str, reason: str) -> ServiceError:
    return ServiceError("validation_failed", f"{field}: {reason}", {"field": field, "reason": reason})


def _external_row(repo_id: str, user_id: str, i: int, item: analyzer_pb2.ExternalFinding) -> dict[str, Any]:
    if not item.path.strip():
        raise _invalid(f"findings[{i}].path", "required")
    if not item.message.strip():
        raise _invalid(f"findings[{i}].message", "required")
    if not (item.rule.strip() or item.category.strip()):
        raise _invalid(f"findings[{i}].rule", "a rule or a category is required")
    start = max(item.start_line, 0)
    return {
        "repository_id": repo_id,
        "rule": item.rule.strip()[:160],
        "category": (item.category.strip() or item.rule.strip())[:160],
        "path": item.path.strip().lstrip("/"),
        "start_line": start,
        "end_line": max(item.end_line, start),
        "message": item.message.strip()[:_MAX_MESSAGE],
        "source": item.source.strip()[:200],
        "user_id": user_id,
        "created_at": now_ms(),
    }


def _latest(*rows: FindingRow | None) -> FindingRow | None:
    """The newer of the findings an item's id and fingerprint name (one item may give both)."""
    present = [r for r in rows if r is not None]
    return max(present, key=lambda r: r.created_at) if present else None


async def report(deps: Deps, req: analyzer_pb2.ReportFindingsRequest) -> analyzer_pb2.ReportFindingsResponse:
    entry = await repo_lookup.resolve(deps, req.repo, repo_lookup.WRITE)
    user_id = preferences.caller_id()
    for i, item in enumerate(req.feedback):
        if item.verdict not in feedback.VERDICTS:
            raise _invalid(f"feedback[{i}].verdict", f"expected one of {', '.join(feedback.VERDICTS)}")
        if not (item.finding_id or item.fingerprint):
            raise _invalid(f"feedback[{i}]", "finding_id or fingerprint is required")
    externals = [_external_row(entry.id, user_id, i, x) for i, x in enumerate(req.findings)]
    recorded: Counter[str] = Counter()
    unknown: list[str] = []
    touched: set[str] = set()
    async with deps.db.session() as session:
        by_id, by_fingerprint = await queries.reported(
            session,
            entry.id,
            {x.finding_id for x in req.feedback if x.finding_id},
            {x.fingerprint for x in req.feedback if x.fingerprint},
        )
        verdicts: dict[str, dict[str, Any]] = {}  # by fingerprint: the report's last word on each
        for item in req.feedback:
            found = _latest(by_id.get(item.finding_id), by_fingerprint.get(item.fingerprint))
            if found is None:
                # A finding we never reported here: nothing to calibrate against, say so.
                unknown.append(item.finding_id or item.fingerprint)
                continue
            verdicts.pop(found.fingerprint, None)
            verdicts[found.fingerprint] = {
                "repository_id": entry.id,
                "fingerprint": found.fingerprint,
                "finding_id": found.finding_id,
                "rule": found.rule,
                "path": found.path,
                "verdict": item.verdict,
                "comment": item.comment[:_MAX_MESSAGE],
                "user_id": user_id,
                "created_at": now_ms(),
            }
            touched.add(found.rule)
            recorded[item.verdict] += 1
        await queries.upsert_feedback(session, list(verdicts.values()))
        await queries.insert_external(session, externals)
        counts = await queries.verdict_counts(session, entry.id)
        suppressed = await queries.suppressed_fingerprints(session, entry.id)
        rule_feedback = feedback.rule_feedback(counts)
        calibration = calibrate(rule_feedback, suppressed)
        await queries.replace_calibration(session, entry.id, feedback.calibration_rows(rule_feedback, calibration))
        if recorded.total() or externals:
            await queries.bump_version(session, entry.id)
        row = await queries.repository_by_ref(session, entry.id)
        fresh = await loading.entry_for(session, row) if row is not None else None
    if fresh is not None:
        deps.cache.put(fresh)
    rules = [_rule_view(rule, cal) for rule, cal in sorted(calibration.rules.items()) if rule in touched]
    document = analyzer_pb2.Calibration(
        rules=rules,
        suppressed_fingerprints=len(suppressed),
        unknown_findings=unknown,
        report_conventions=_report_conventions(fresh),
    )
    return analyzer_pb2.ReportFindingsResponse(
        accepted=recorded["accepted"],
        recorded=recorded.total(),
        verdicts=dict(recorded),
        external=len(externals),
        calibration=document,
    )


def _rule_view(rule: str, cal: Any) -> analyzer_pb2.RuleCalibration:
    return analyzer_pb2.RuleCalibration(
        rule=rule,
        state=cal.state,
        reported=cal.reported,
        accepted=cal.accepted,
        rejected=cal.rejected,
        false_positive_rate=cal.false_positive_rate,
        confidence_factor=cal.confidence_factor,
    )


def _report_conventions(entry: LoadedRepo | None) -> list[analyzer_pb2.Convention]:
    if entry is None or entry.model is None:
        return []
    return [views.compact_convention(c) for c in entry.model.conventions if c.source == "reports"]
