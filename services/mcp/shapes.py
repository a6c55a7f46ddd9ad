"""The tools' result shapes, built from the REST models (services.api) so no shape is written twice."""

from __future__ import annotations

from pydantic import Field

from services.api.analysis import AnalysisResult, Finding, ReviewContext, Skipped
from services.api.repositories import IndexStatus, Repository
from services.api.responses import Open


class IndexResult(Open):
    repository: Repository
    created: bool = Field(description="True when this call registered the repository")
    status: IndexStatus


class ReviewResult(ReviewContext):
    """``review_context`` for the file, plus the analysis of it."""

    findings: list[Finding] = Field(default_factory=list)
    audit_id: str = ""
    files_analyzed: int = 0
    skipped: list[Skipped] = Field(default_factory=list)

    @classmethod
    def of(cls, context: ReviewContext, analysis: AnalysisResult) -> ReviewResult:
        return cls.model_validate(
            {
                **context.model_dump(mode="json"),
                "findings": [f.model_dump(mode="json") for f in analysis.findings],
                "audit_id": analysis.audit_id,
                "files_analyzed": analysis.files_analyzed,
                "skipped": [s.model_dump(mode="json") for s in analysis.skipped],
            }
        )
