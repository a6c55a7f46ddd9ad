"""Messages and JSON shapes shared by the answers (documented in docs/review.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from services.analyzer.engine import Convention, ConventionModel
from services.analyzer.engine.conventions import FILE, Scope
from services.analyzer.engine.file_check import index_of
from services.analyzer.models import Audit, ExternalFindingRow, FindingRow
from services.contracts.v1 import analyzer_pb2
from services.kit.messages import timestamp_of_ms

_RANK = {"strict": 2, "loose": 1, "off": 0}


def scope(s: Scope) -> analyzer_pb2.ConventionScope:
    return analyzer_pb2.ConventionScope(kind=s.kind, value=s.value)


def param(value: Any) -> analyzer_pb2.Param:
    """An engine Param (str | int | float | bool); bool first, as it is also an int."""
    if isinstance(value, bool):
        return analyzer_pb2.Param(flag=value)
    if isinstance(value, int):
        return analyzer_pb2.Param(integer=value)
    if isinstance(value, float):
        return analyzer_pb2.Param(number=value)
    return analyzer_pb2.Param(text=str(value))


def convention(c: Convention) -> analyzer_pb2.Convention:
    view = analyzer_pb2.Convention(
        id=c.id,
        rule=c.rule,
        family=c.family,
        scope=scope(c.scope),
        language=c.language,
        choice=c.choice,
        share=c.share,
        count=c.count,
        support=c.support,
        level=c.level,
        confidence=c.confidence,
        description=c.description,
        examples=c.examples,
        source=c.source,
        alternatives=c.alternatives,
    )
    if c.source == "declared":
        # Where the tools declare it, and whether the code agrees or the declaration overrides it.
        learned = c.params.get("learned")
        view.declared.CopyFrom(
            analyzer_pb2.DeclaredSetting(
                file=str(c.params.get("declared_in", "")),
                setting=str(c.params.get("setting", "")),
                learned=None if learned is None else str(learned),
                agreement=str(c.params.get("agreement", "declared")),
            )
        )
    return view


def compact_convention(c: Convention) -> analyzer_pb2.Convention:
    """The fields a report's answer lists (docs/review.md, "Reports")."""
    return analyzer_pb2.Convention(
        id=c.id,
        rule=c.rule,
        choice=c.choice,
        scope=scope(c.scope),
        count=c.count,
        level=c.level,
        description=c.description,
    )


def strongest(conventions: Iterable[Convention], n: int) -> list[Convention]:
    """The most certain enforced conventions, one per rule and language (its broadest such scope)."""
    best: dict[tuple[str, str], Convention] = {}
    for c in conventions:
        if c.level != "strict" or c.scope.kind == FILE or c.source == "reports":
            continue
        key = (c.rule, c.language)
        cur = best.get(key)
        if cur is None or (c.count, c.confidence) > (cur.count, cur.confidence):
            best[key] = c
    return sorted(best.values(), key=lambda c: (-c.confidence, -c.count, c.rule))[:n]


def weakest(conventions: Iterable[Convention], n: int) -> list[Convention]:
    """Conventions the repository only loosely keeps: the least certain of those still reported."""
    kept = [c for c in conventions if c.level in ("strict", "loose") and c.scope.kind != FILE and c.source == "learned"]
    return sorted(kept, key=lambda c: (c.confidence, -c.count, c.rule))[:n]


def applicable(model: ConventionModel, path: str, language: str) -> list[Convention]:
    """Every convention that governs ``path``: the most specific scope of each rule, plus its own."""
    idx = index_of(model)
    chain = idx.chain(path, language)
    rules = sorted({rule for rule, lang in idx.by_rule if lang in (language, "")})
    out: list[Convention] = []
    for rule in rules:
        conv = idx.find(rule, language, chain)
        if conv is not None and conv.level != "off":
            out.append(conv)
    out.extend(c for c in model.conventions if c.scope.kind == FILE and c.scope.value == path and c.level != "off")
    return sorted(out, key=lambda c: (c.family, c.rule, -_RANK.get(c.level, 0)))


def finding(row: FindingRow, verdict: str | None = None) -> analyzer_pb2.PastFinding:
    return analyzer_pb2.PastFinding(
        id=row.finding_id,
        fingerprint=row.fingerprint,
        rule=row.rule,
        category=row.category,
        severity=row.severity,
        confidence=row.confidence,
        message=row.message,
        path=row.path,
        start_line=row.start_line,
        end_line=row.end_line,
        suggestion=row.suggestion or "",
        audit_id=row.audit_id,
        created_at=timestamp_of_ms(row.created_at),
        verdict=verdict,
    )


def external(row: ExternalFindingRow) -> analyzer_pb2.ExternalReport:
    return analyzer_pb2.ExternalReport(
        rule=row.rule,
        category=row.category,
        path=row.path,
        start_line=row.start_line,
        end_line=row.end_line,
        message=row.message,
        source=row.source,
        created_at=timestamp_of_ms(row.created_at),
    )


def audit(row: Audit) -> analyzer_pb2.AuditSummary:
    summary = row.summary or {}
    return analyzer_pb2.AuditSummary(
        id=row.id,
        repository_id=row.repository_id,
        kind=row.kind,
        commit=row.commit,
        pr_number=row.pr_number or None,
        files=row.files,
        findings=row.findings,
        by_severity=summary.get("by_severity", {}),
        duration_ms=row.duration_ms,
        user_id=row.user_id,
        created_at=timestamp_of_ms(row.created_at),
    )
