"""Findings out: the spec's JSON (protobuf ``Finding``), SARIF, and the audit that records them.

Every analysis is an audit: its row, its findings and an ``analysis.completed`` event for usage
are written in one transaction (the event leaves through the outbox only if that commits).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from services.analyzer import queries, views
from services.analyzer.deps import Deps
from services.analyzer.engine import Finding, to_sarif
from services.analyzer.models import new_id, now_ms
from services.analyzer.state import LoadedRepo
from services.contracts.v1 import analyzer_pb2, events_pb2
from services.kit.bus import SUBJECT_ANALYSIS_COMPLETED
from services.kit.errors import ServiceError
from services.kit.outbox import event_row

FORMATS = ("json", "sarif")
EVENT_TYPE = "analysis.completed"


def check_format(fmt: str) -> str:
    fmt = fmt or "json"
    if fmt not in FORMATS:
        raise ServiceError("validation_failed", "format must be json or sarif", {"field": "format"})
    return fmt


def evidence(f: Finding) -> dict[str, Any]:
    """The evidence stored with a finding's row: the convention's numbers, scope and examples."""
    doc: dict[str, Any] = {"level": f.level}
    if f.symbol:
        doc["symbol"] = f.symbol
    ev = f.evidence
    if ev is not None:
        doc.update(
            {
                "convention": ev.convention,
                "scope": {"kind": ev.scope.kind, "value": ev.scope.value},
                "choice": ev.choice,
                "share": ev.share,
                "count": ev.count,
                "support": ev.support,
                "description": ev.description,
                "examples": list(ev.examples),
            }
        )
        if ev.detail:
            doc["detail"] = dict(ev.detail)
    return doc


def evidence_message(f: Finding) -> analyzer_pb2.Evidence:
    """The evidence of the API: the level, and the convention's numbers, scope and examples."""
    out = analyzer_pb2.Evidence(level=f.level, symbol=f.symbol)
    ev = f.evidence
    if ev is not None:
        out.convention = ev.convention
        out.scope.CopyFrom(views.scope(ev.scope))
        out.choice = ev.choice
        out.share = ev.share
        out.count = ev.count
        out.support = ev.support
        out.description = ev.description
        out.examples.extend(ev.examples)
        for key, value in ev.detail.items():
            out.detail[key].CopyFrom(views.param(value))
    return out


def to_proto(f: Finding) -> analyzer_pb2.Finding:
    return analyzer_pb2.Finding(
        id=f.id,
        fingerprint=f.fingerprint,
        rule=f.rule,
        category=f.family,
        severity=f.severity,
        confidence=f.confidence,
        message=f.message,
        path=f.path,
        start_line=f.start_line,
        end_line=f.end_line,
        evidence=evidence_message(f),
        suggestion=f.suggestion or "",
        preexisting=f.preexisting,
        more=f.more,
    )


def build_result(
    deps: Deps,
    entry: LoadedRepo,
    audit_id: str,
    findings: Sequence[Finding],
    *,
    files: int,
    skipped: dict[str, str],
    duration_ms: float,
    fmt: str,
    preexisting: Sequence[Finding] = (),
    preexisting_count: int = 0,
    baseline: bool = False,
) -> analyzer_pb2.AnalysisResult:
    """The answer; SARIF carries the pre-existing findings too, marked by ``baselineState``."""
    result = analyzer_pb2.AnalysisResult(
        audit_id=audit_id,
        repository_id=entry.id,
        commit=entry.commit,
        findings=[to_proto(f) for f in findings],
        preexisting=[to_proto(f) for f in preexisting],
        preexisting_count=preexisting_count,
        files_analyzed=files,
        duration_ms=round(duration_ms, 3),
        skipped=[analyzer_pb2.SkippedFile(path=p, reason=r) for p, r in sorted(skipped.items())],
    )
    if fmt == "sarif":
        sarif = to_sarif([*findings, *preexisting], tool_name=deps.settings.sarif_tool_name, baseline=baseline)
        sarif["runs"][0]["properties"] = {"auditId": audit_id, "repositoryId": entry.id, "commit": entry.commit}
        result.sarif.update(sarif)
    return result


async def record(
    deps: Deps,
    db: queries.Executor,
    entry: LoadedRepo,
    *,
    kind: str,
    user_id: str,
    findings: Sequence[Finding],
    evidences: Sequence[dict[str, Any]],
    files: int,
    paths: Sequence[str],
    skipped: dict[str, str],
    duration_ms: float,
    pr_number: int = 0,
    preexisting: int = 0,
) -> str:
    """Store the audit and its findings with ``analysis.completed`` atomically; the audit id.

    Only what the change introduced is stored as its findings; the pre-existing ones are counted.
    """
    audit_id = new_id()
    at = now_ms()
    keep = deps.settings.max_stored_findings_per_audit
    rows = [
        {
            "finding_id": f.id,
            "fingerprint": f.fingerprint,
            "rule": f.rule,
            "category": f.family,
            "severity": f.severity,
            "confidence": f.confidence,
            "message": f.message,
            "path": f.path,
            "start_line": f.start_line,
            "end_line": f.end_line,
            "evidence": ev,
            "suggestion": f.suggestion,
        }
        for f, ev in zip(findings[:keep], evidences[:keep], strict=True)
    ]
    summary = {
        "paths": list(paths[:200]),
        "paths_total": len(paths),
        "by_severity": dict(Counter(f.severity for f in findings)),
        "by_rule": dict(Counter(f.rule for f in findings)),
        "skipped": dict(list(skipped.items())[:200]),
        "preexisting": preexisting,
    }
    audit = {
        "id": audit_id,
        "repository_id": entry.id,
        "owner": entry.owner,
        "user_id": user_id,
        "kind": kind,
        "commit": entry.commit,
        "pr_number": pr_number,
        "files": files,
        "findings": len(findings),
        "duration_ms": round(duration_ms, 3),
        "created_at": at,
        "summary": summary,
    }
    event = events_pb2.AnalysisCompleted(
        audit_id=audit_id,
        repository_id=entry.id,
        owner=entry.owner,
        kind=kind,
        files=files,
        findings=len(findings),
        user_id=user_id,
    )
    await queries.record_audit(db, audit, rows, event_row(SUBJECT_ANALYSIS_COMPLETED, EVENT_TYPE, event))
    return audit_id
