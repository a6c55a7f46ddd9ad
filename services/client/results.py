"""Several analyses answered as one: the CLI and the MCP server review files one call each."""

from __future__ import annotations

from collections.abc import Sequence

from services.api.analysis import AnalysisResult


def merge_results(results: Sequence[AnalysisResult]) -> AnalysisResult:
    """Several analyses (one per file) as one result, findings in path and line order."""
    if len(results) == 1:
        return results[0]
    findings = sorted((f for r in results for f in r.findings), key=lambda f: (f.path, f.start_line, f.rule))
    return AnalysisResult(
        audit_id=",".join(r.audit_id for r in results),
        repository_id=results[0].repository_id if results else "",
        commit=results[0].commit if results else "",
        findings=findings,
        files_analyzed=sum(r.files_analyzed for r in results),
        duration_ms=sum(r.duration_ms for r in results),
        skipped=[s for r in results for s in r.skipped],
        preexisting=[f for r in results for f in r.preexisting],
        preexisting_count=sum(r.preexisting_count for r in results),
    )
