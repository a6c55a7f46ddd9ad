"""Analysis, review context, reports and the analyzer's read endpoints."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from services.api import analysis as a
from services.api.schemas import AnalyzeFile, AnalyzePr, ReportFindings, ReviewChangeset, ReviewContext
from services.contracts.v1 import analyzer_pb2
from services.gateway import analyzer_bodies
from services.gateway.deps import ClientsDep, PrincipalDep
from services.gateway.errors import OrjsonResponse
from services.gateway.routes.repositories import repo_ref
from services.kit.grpc_client import call

router = APIRouter(prefix="/repositories", tags=["analysis"])


# An analysis answers an AnalysisResult, or a SARIF 2.1.0 log with "format": "sarif".
AnalysisAnswer = a.AnalysisResult | a.SarifLog


def render(result: analyzer_pb2.AnalysisResult, fmt: str) -> OrjsonResponse:
    """The result as a response, so FastAPI does not walk the body again (jsonable_encoder)."""
    if fmt == "sarif":
        return OrjsonResponse(analyzer_bodies.sarif(result.sarif))
    return OrjsonResponse(analyzer_bodies.analysis(result).model_dump(mode="json"))


@router.post(
    "/{repo_id}/analyze",
    response_model=AnalysisAnswer,
    summary="Analyze one file (indexed snapshot or unsaved content)",
)
async def analyze(repo_id: str, body: AnalyzeFile, principal: PrincipalDep, clients: ClientsDep) -> Any:
    request = analyzer_pb2.AnalyzeFileRequest(
        repo=repo_ref(repo_id),
        path=body.path,
        content=(body.content or "").encode(),
        has_content=body.content is not None,
        format=body.format,
    )
    return render(await call(clients.analyzer.AnalyzeFile, request, principal=principal, timeout=30), body.format)


@router.post(
    "/{repo_id}/analyze_pr",
    response_model=AnalysisAnswer,
    summary="Analyze a pull request (commits, or changed files with patches)",
)
async def analyze_pr(repo_id: str, body: AnalyzePr, principal: PrincipalDep, clients: ClientsDep) -> Any:
    request = analyzer_pb2.AnalyzePullRequestRequest(
        repo=repo_ref(repo_id),
        base=body.base or "",
        head=body.head or "",
        pr_number=body.pr_number or 0,
        format=body.format,
        files=[
            analyzer_pb2.FilePatch(
                path=f.path,
                status=f.status,
                patch=f.patch,
                content=(f.content or "").encode(),
                base_content=None if f.base_content is None else f.base_content.encode(),
            )
            for f in body.files
        ],
    )
    result = await call(clients.analyzer.AnalyzePullRequest, request, principal=principal, timeout=120)
    return render(result, body.format)


@router.post(
    "/{repo_id}/review_changeset",
    response_model=AnalysisAnswer,
    summary="Review a local changeset (file paths, a staged diff, or staged)",
)
async def review_changeset(repo_id: str, body: ReviewChangeset, principal: PrincipalDep, clients: ClientsDep) -> Any:
    request = analyzer_pb2.ReviewChangesetRequest(
        repo=repo_ref(repo_id),
        file_paths=body.file_paths,
        diff=body.diff or "",
        staged=body.staged,
        format=body.format,
    )
    result = await call(clients.analyzer.ReviewChangeset, request, principal=principal, timeout=120)
    return render(result, body.format)


@router.post(
    "/{repo_id}/review_context",
    response_model=a.ReviewContext,
    response_model_exclude_unset=True,  # the body sets every field but those of History's other view
    summary="Domain, segment, conventions and history for a path",
)
async def review_context(
    repo_id: str, body: ReviewContext, principal: PrincipalDep, clients: ClientsDep
) -> a.ReviewContext:
    request = analyzer_pb2.ReviewContextRequest(repo=repo_ref(repo_id), path=body.path)
    return analyzer_bodies.review_context(await call(clients.analyzer.GetReviewContext, request, principal=principal))


@router.post(
    "/{repo_id}/report_findings",
    response_model=a.ReportResult,
    summary="Feedback on findings and findings from other reviewers",
)
async def report_findings(repo_id: str, body: ReportFindings, principal: PrincipalDep, clients: ClientsDep) -> Any:
    request = analyzer_pb2.ReportFindingsRequest(
        repo=repo_ref(repo_id),
        feedback=[analyzer_pb2.FeedbackItem(**f.model_dump(exclude_none=True)) for f in body.feedback],
        findings=[
            analyzer_pb2.ExternalFinding(**{**f.model_dump(exclude_none=True), "end_line": f.end_line or f.start_line})
            for f in body.findings
        ],
    )
    response = await call(clients.analyzer.ReportFindings, request, principal=principal)
    return OrjsonResponse(analyzer_bodies.body(a.ReportResult, response).model_dump(mode="json"))


@router.get(
    "/{repo_id}/dashboard",
    response_model=a.Dashboard,
    summary="Index state, findings over time, acceptance rates, conventions",
)
async def dashboard(repo_id: str, principal: PrincipalDep, clients: ClientsDep) -> a.Dashboard:
    request = analyzer_pb2.RepoRequest(repo=repo_ref(repo_id))
    return analyzer_bodies.body(a.Dashboard, await call(clients.analyzer.GetDashboard, request, principal=principal))


@router.get(
    "/{repo_id}/global_context",
    response_model=a.GlobalContext,
    summary="Repository-wide summary: languages, domains, conventions, hot spots",
)
async def global_context(repo_id: str, principal: PrincipalDep, clients: ClientsDep) -> a.GlobalContext:
    request = analyzer_pb2.RepoRequest(repo=repo_ref(repo_id))
    reply = await call(clients.analyzer.GetGlobalContext, request, principal=principal)
    return analyzer_bodies.body(a.GlobalContext, reply)
