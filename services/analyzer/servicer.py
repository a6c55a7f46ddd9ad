"""gRPC transport of the analyzer service: read the request, call one rule module, convert."""

from __future__ import annotations

from typing import TypeAlias

import grpc

from services.analyzer import analysis, audits, dashboard, preferences, repo_lookup, reports, review_context
from services.analyzer.deps import Deps
from services.contracts.v1 import analyzer_pb2, analyzer_pb2_grpc

Ctx: TypeAlias = grpc.aio.ServicerContext


class AnalyzerServicer(analyzer_pb2_grpc.AnalyzerServiceServicer):
    def __init__(self, deps: Deps) -> None:
        self.deps = deps

    async def AnalyzeFile(self, request: analyzer_pb2.AnalyzeFileRequest, context: Ctx) -> analyzer_pb2.AnalysisResult:
        return await analysis.analyze_file(self.deps, request)

    async def AnalyzePullRequest(
        self, request: analyzer_pb2.AnalyzePullRequestRequest, context: Ctx
    ) -> analyzer_pb2.AnalysisResult:
        return await analysis.analyze_pull_request(self.deps, request)

    async def ReviewChangeset(
        self, request: analyzer_pb2.ReviewChangesetRequest, context: Ctx
    ) -> analyzer_pb2.AnalysisResult:
        return await analysis.review_changeset(self.deps, request)

    async def GetReviewContext(
        self, request: analyzer_pb2.ReviewContextRequest, context: Ctx
    ) -> analyzer_pb2.ReviewContext:
        return await review_context.review_context(self.deps, request.repo, request.path)

    async def GetGlobalContext(self, request: analyzer_pb2.RepoRequest, context: Ctx) -> analyzer_pb2.GlobalContext:
        return await review_context.global_context(self.deps, request.repo)

    async def GetModelStatus(self, request: analyzer_pb2.RepoRequest, context: Ctx) -> analyzer_pb2.ModelStatus:
        return await repo_lookup.model_status(self.deps, request.repo)

    async def ReportFindings(
        self, request: analyzer_pb2.ReportFindingsRequest, context: Ctx
    ) -> analyzer_pb2.ReportFindingsResponse:
        return await reports.report(self.deps, request)

    async def GetDashboard(self, request: analyzer_pb2.RepoRequest, context: Ctx) -> analyzer_pb2.Dashboard:
        return await dashboard.dashboard(self.deps, request.repo)

    async def GetAuditResults(
        self, request: analyzer_pb2.AuditResultsRequest, context: Ctx
    ) -> analyzer_pb2.AuditResults:
        return await audits.audit_results(self.deps, request)

    async def GetAuditPreferences(
        self, request: analyzer_pb2.PreferencesRequest, context: Ctx
    ) -> analyzer_pb2.AuditPreferences:
        return await preferences.get_document(self.deps, request.owner)

    async def UpdateAuditPreferences(
        self, request: analyzer_pb2.UpdatePreferencesRequest, context: Ctx
    ) -> analyzer_pb2.AuditPreferences:
        return await preferences.update_document(self.deps, request.owner, request.patch)
