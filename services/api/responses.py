"""Response bodies of the repository, index, analysis and read routes, and the error body.

The routes render these documents from protobuf today (docs/indexing.md, docs/review.md), so the
models name the fields clients rely on and let the rest through (``extra="allow"``): a field the
server adds later reaches the caller instead of failing validation. 64-bit integers may arrive as
JSON strings (the protobuf JSON mapping); pydantic's lax mode reads them as integers.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ErrorBody(BaseModel):
    error: str = Field(description="Human-readable message")
    code: str = Field(description="Machine code from the spec's error table")
    details: dict[str, Any] = Field(default_factory=dict, description="Error-specific detail, e.g. the field")


class Page(Open):
    next_cursor: str = ""
    total: int = 0


class IndexStatus(Open):
    repository_id: str = ""
    state: str = Field("", description="'' (never indexed), queued, indexing, ready or failed")
    head_sha: str = Field("", description="Commit of the last successful index")
    run_id: str = ""
    phase: str = ""
    files_done: int = 0
    files_total: int = 0
    error: str = ""
    error_code: str = ""

    @property
    def finished(self) -> bool:
        return self.state in ("ready", "failed")


class Repository(Open):
    id: str
    name: str = ""
    kind: str = Field("", description="local, url or hosted")
    source: str = Field("", description="The local path, git URL or owner/repo it was registered with")
    owner: str = ""
    default_branch: str = ""
    status: str = ""
    index: IndexStatus | None = None


class RepositoryList(Open):
    repositories: list[Repository]
    page: Page = Field(default_factory=Page)


class Domain(Open):
    name: str
    path_prefix: str = ""
    file_count: int = 0


class Domains(Open):
    repository_id: str = ""
    commit: str = ""
    domains: list[Domain] = Field(default_factory=list)


class Segments(Open):
    repository_id: str = ""
    commit: str = ""
    segments: list[dict[str, Any]] = Field(default_factory=list)
    page: Page = Field(default_factory=Page)


class Network(Open):
    repository_id: str = ""
    commit: str = ""
    nodes: list[dict[str, Any]] = Field(default_factory=list)
    edges: list[dict[str, Any]] = Field(default_factory=list)
    cycles: list[list[str]] = Field(default_factory=list)
    page: Page = Field(default_factory=Page)


class History(Open):
    repository_id: str = ""
    commit: str = ""
    path: str | None = Field(None, description="Set when one file's history was asked for")
    hot_spots: list[dict[str, Any]] = Field(default_factory=list)
    files: list[dict[str, Any]] = Field(default_factory=list)
