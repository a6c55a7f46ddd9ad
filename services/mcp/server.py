"""The MCP server: each tool wraps one REST operation through ``services.client.AsyncClient``.

Tool results carry structured content with an output schema (the models of ``services.api``);
a failure is an ``is_error`` result whose structured content is the spec's error body, so the
agent reads the same ``code`` the REST surface gives. Over streamable HTTP a request's own
``Authorization: Bearer`` token is used when present, else the server's configured token.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from pydantic import BaseModel, Field, ValidationError

from services.api import analysis as a
from services.api import repositories as rp
from services.api.schemas import ExternalFinding, Feedback
from services.client import ApiError, AsyncClient, ConfigError, api, workspace
from services.client.results import merge_results
from services.mcp.shapes import IndexResult, ReviewResult

M = TypeVar("M", bound=BaseModel)

TOOLS = (
    "service_index",
    "service_review",
    "service_review_changeset",
    "service_report_findings",
    "service_get_domains",
    "service_get_segments",
    "service_get_network",
    "service_get_history",
    "service_get_dashboard",
    "service_get_global_context",
)

RepositoryArg = Annotated[
    str | None,
    Field(description="Repository id or owner/repo; default: the registered repository of `directory`"),
]
DirectoryArg = Annotated[
    str | None,
    Field(description="A directory inside the local git work tree; default: the server's working directory"),
]
LimitArg = Annotated[int | None, Field(description="Page size (server default when omitted)", ge=1)]
CursorArg = Annotated[str, Field(description="Cursor from the previous page's page.next_cursor")]


def ok(result: BaseModel) -> CallToolResult:
    body = result.model_dump(mode="json")
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(body))], structured_content=body)


def failed(error: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(error))], structured_content=error, is_error=True
    )


class ReviewServer(MCPServer):
    """Arguments the tool's schema refuses answer like every other failure: the spec's error
    body with ``code`` ``validation_failed`` (the SDK's default is pydantic's text)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__, ValidationError):
                raise
            return failed(ApiError.invalid(exc.__cause__).body())


def build(make_client: Callable[[str | None], AsyncClient]) -> MCPServer:
    """The server; ``make_client(token)`` gives a client (``token`` from the HTTP request, if any)."""
    server = ReviewServer(
        "codereview",
        log_level="WARNING",  # stderr is the editor's log: no line per HTTP request
        instructions=(
            "Review code against the conventions this repository follows. Index a repository with "
            "service_index, then review a file with service_review or staged changes with "
            "service_review_changeset; read context with the service_get_* tools."
        ),
    )

    async def run(ctx: Context, work: Callable[[AsyncClient], Awaitable[BaseModel]]) -> CallToolResult:
        try:
            async with make_client(bearer(ctx)) as client:
                client.config.require_token()
                return ok(await work(client))
        except ApiError as exc:
            return failed(exc.body())
        except ConfigError as exc:
            return failed({"error": str(exc), "code": "not_authenticated", "details": {}})
        except ValidationError as exc:
            return failed(ApiError.invalid(exc).body())

    async def review_files(
        client: AsyncClient, repo_id: str, file_paths: list[str], directory: str | None
    ) -> a.AnalysisResult:
        """Each file as it is on disk, with its unsaved and uncommitted edits, as the CLI reviews
        files: the server's copy is its last index, which an editor's user has already changed. A
        path the work tree does not hold (or no work tree here) is the indexed snapshot's."""
        root = local_tree(directory)
        on_disk = [p for p in dict.fromkeys(file_paths) if root is not None and inside(root, root / p)]
        calls = [analyzed(client, repo_id, p, root / p) for p in on_disk if root is not None]
        if elsewhere := [p for p in file_paths if p not in on_disk]:
            calls.append(client.send(api.review_changeset(repo_id, file_paths=elsewhere)))
        return merge_results(await asyncio.gather(*calls))

    async def resolve(client: AsyncClient, repository: str | None, directory: str | Path | None) -> str:
        if repository:
            return repository
        root = workspace.toplevel(directory or ".")
        cursor = ""
        while True:
            page = await client.send(api.list_repositories(limit=500, cursor=cursor))
            found = workspace.match(page.repositories, root)
            if found:
                return found.id
            if not page.page.next_cursor:
                raise workspace.not_registered(root)
            cursor = page.page.next_cursor

    @server.tool(name="service_index", structured_output=True)
    async def service_index(
        ctx: Context,
        directory: DirectoryArg = None,
        repository: RepositoryArg = None,
        incremental: Annotated[bool, Field(description="Re-read only files whose content changed")] = False,
    ) -> Annotated[CallToolResult, IndexResult]:
        """Index a repository: registers the local work tree first if it is new, then indexes it and
        waits, reporting progress (files done of files total). Call before the first review."""

        async def work(client: AsyncClient) -> IndexResult:
            created = False
            if repository:
                repo = await client.send(api.get_repository(repository))
            else:
                root = workspace.toplevel(directory or ".")
                try:
                    repo = await client.send(api.get_repository(await resolve(client, None, root)))
                except ApiError as exc:
                    if exc.code != "repo_not_found":
                        raise
                    repo, created = await client.send(api.create_repository(path=str(root))), True

            async def progress(status: rp.IndexStatus) -> None:
                total = float(status.files_total) if status.files_total else None
                await ctx.report_progress(float(status.files_done), total, status.phase or status.state)

            status = await client.wait_for_index(repo.id, trigger=True, incremental=incremental, on_progress=progress)
            if status.state == "failed":
                raise ApiError(409, "index_failed", status.error or "the index failed", status.model_dump(mode="json"))
            return IndexResult(repository=repo, created=created, status=status)

        return await run(ctx, work)

    @server.tool(name="service_review", structured_output=True)
    async def service_review(
        ctx: Context,
        path: Annotated[str, Field(description="The file: absolute, or relative to the work tree")],
        content: Annotated[
            str | None, Field(description="Unsaved text of the file; default: the file as it is on disk")
        ] = None,
        repository: RepositoryArg = None,
        directory: DirectoryArg = None,
    ) -> Annotated[CallToolResult, ReviewResult]:
        """Review one file against the repository's conventions: the file's review context (domain,
        segment, conventions, history) with the findings of analyzing it."""

        async def work(client: AsyncClient) -> ReviewResult:
            where = Path(directory or ".")
            file = Path(path) if Path(path).is_absolute() else where / path
            if repository and not file.exists():
                relative, text = path, content
            else:
                root = workspace.toplevel(file if file.exists() else where)
                relative = workspace.relative(root, file)
                text = content if content is not None else read_text(file)
            repo_id = await resolve(client, repository, where)
            analysis = await client.send(api.analyze(repo_id, relative, text))
            context = await client.send(api.review_context(repo_id, relative))
            return ReviewResult.of(context, analysis)

        return await run(ctx, work)

    @server.tool(name="service_review_changeset", structured_output=True)
    async def service_review_changeset(
        ctx: Context,
        file_paths: Annotated[
            list[str], Field(description="Files to review (relative to the work tree); empty = the staged changes")
        ] = [],  # noqa: B006 - pydantic copies defaults
        repository: RepositoryArg = None,
        directory: DirectoryArg = None,
    ) -> Annotated[CallToolResult, a.AnalysisResult]:
        """Review a changeset: the given files as they are on disk, or (without file_paths) the staged
        changes of the local work tree (each staged file's content, its changed lines from
        `git diff --cached`)."""

        async def work(client: AsyncClient) -> a.AnalysisResult:
            repo_id = await resolve(client, repository, directory)
            if file_paths:
                return await review_files(client, repo_id, file_paths, directory)
            # The staged files travel with their content: the server may hold an older snapshot
            # than the local HEAD, against which a bare patch would not apply.
            staged = workspace.staged_changes(workspace.toplevel(directory or "."))
            if not staged:
                raise ApiError(400, "no_files", "nothing is staged and no file_paths were given")
            return await client.send(api.analyze_pr(repo_id, staged))

        return await run(ctx, work)

    @server.tool(name="service_report_findings", structured_output=True)
    async def service_report_findings(
        ctx: Context,
        feedback: Annotated[
            list[Feedback], Field(description="Verdicts on findings, by finding_id or fingerprint")
        ] = [],  # noqa: B006
        findings: Annotated[
            list[ExternalFinding], Field(description="Findings from other reviewers, for learning")
        ] = [],  # noqa: B006
        repository: RepositoryArg = None,
        directory: DirectoryArg = None,
    ) -> Annotated[CallToolResult, a.ReportResult]:
        """Report verdicts (accepted, fixed, dismissed, false_positive) and outside findings; dismissed
        findings stay quiet in this repository from then on."""

        async def work(client: AsyncClient) -> a.ReportResult:
            repo_id = await resolve(client, repository, directory)
            return await client.send(api.report_findings(repo_id, feedback, findings))

        return await run(ctx, work)

    def reader(name: str, call: Callable[..., api.Call[M]], model: type[M], doc: str, paged: bool = False) -> None:
        """The read tools: the same document as the REST read endpoint."""
        if paged:

            async def paged_tool(
                ctx: Context,
                repository: RepositoryArg = None,
                directory: DirectoryArg = None,
                limit: LimitArg = None,
                cursor: CursorArg = "",
            ) -> CallToolResult:
                async def work(client: AsyncClient) -> BaseModel:
                    return await client.send(call(await resolve(client, repository, directory), limit, cursor))

                return await run(ctx, work)

            # Set as an object: the model is a local, which a string annotation could not name.
            paged_tool.__annotations__["return"] = Annotated[CallToolResult, model]
            server.add_tool(paged_tool, name=name, description=doc, structured_output=True)
        else:

            async def tool(
                ctx: Context, repository: RepositoryArg = None, directory: DirectoryArg = None
            ) -> CallToolResult:
                async def work(client: AsyncClient) -> BaseModel:
                    return await client.send(call(await resolve(client, repository, directory)))

                return await run(ctx, work)

            tool.__annotations__["return"] = Annotated[CallToolResult, model]
            server.add_tool(tool, name=name, description=doc, structured_output=True)

    reader("service_get_domains", api.domains, rp.Domains, "The repository's major areas (GET domains).")
    reader("service_get_segments", api.segments, rp.Segments, "Finer groups inside domains (GET segments).", paged=True)
    reader("service_get_network", api.network, rp.Network, "Module import graph and cycles (GET network).", paged=True)
    reader("service_get_dashboard", api.dashboard, a.Dashboard, "Findings over time, acceptance (GET dashboard).")
    reader(
        "service_get_global_context",
        api.global_context,
        a.GlobalContext,
        "Repository-wide summary: languages, domains, strongest conventions, hot spots (GET global_context).",
    )

    @server.tool(name="service_get_history", structured_output=True)
    async def service_get_history(
        ctx: Context,
        path: Annotated[str, Field(description="One file's history (relative path); empty = the repository's")] = "",
        repository: RepositoryArg = None,
        directory: DirectoryArg = None,
        limit: LimitArg = None,
        cursor: CursorArg = "",
    ) -> Annotated[CallToolResult, rp.History]:
        """Change history (GET history): hot spots and per-file statistics, or one file's history with
        its co-changing files."""

        async def work(client: AsyncClient) -> rp.History:
            repo_id = await resolve(client, repository, directory)
            return await client.send(api.history(repo_id, path, limit, cursor))

        return await run(ctx, work)

    return server


def read_text(file: Path) -> str:
    try:
        return workspace.read_text(file)
    except OSError as exc:
        raise ApiError(404, "file_not_found", f"cannot read {file}: {exc.strerror}", {"field": "path"}) from None


def bearer(ctx: Context) -> str | None:
    request = getattr(ctx.request_context, "request", None)
    headers = getattr(request, "headers", None)
    header = headers.get("authorization", "") if headers is not None else ""
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def local_tree(directory: str | None) -> Path | None:
    try:
        return workspace.toplevel(directory or ".")
    except ApiError:
        return None


def inside(root: Path, file: Path) -> bool:
    """A regular file of the work tree (a path with ``..`` or a link out of it is not)."""
    resolved = file.resolve()
    return resolved.is_file() and resolved.is_relative_to(root)


async def analyzed(client: AsyncClient, repo_id: str, path: str, file: Path) -> a.AnalysisResult:
    """One file reviewed with its content; a file the server cannot analyze (binary, oversized, a
    language it does not read) is answered as skipped, as a changeset skips it."""
    try:
        return await client.send(api.analyze(repo_id, path, workspace.read_text(file)))
    except ApiError as exc:
        if exc.code != "unsupported_file_type":
            raise
        reason = str(exc.details.get("reason") or exc.code)
        return a.AnalysisResult(
            audit_id="",
            repository_id=repo_id,
            commit="",
            findings=[],
            files_analyzed=0,
            duration_ms=0,
            skipped=[a.Skipped(path=path, reason=reason)],
        )


def run(
    url: str | None = None,
    token: str | None = None,
    profile: str | None = None,
    http: bool = False,
    host: str = "127.0.0.1",
    port: int = 8765,
) -> None:
    def make_client(request_token: str | None) -> AsyncClient:
        return AsyncClient(url, request_token or token, profile=profile)

    logging.getLogger("httpx").setLevel(logging.WARNING)
    server = build(make_client)
    if http:
        server.run("streamable-http", host=host, port=port)
    else:
        server.run("stdio")
