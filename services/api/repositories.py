"""Response bodies of the repository, index and read routes (docs/indexing.md).

Counts are JSON integers and times RFC 3339 UTC strings (``services.api.types``); a time the
server does not have (a run not started yet) is ``null``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from services.api.types import Count, Timestamp

IndexState = Literal["", "queued", "indexing", "ready", "failed"]


class Page(BaseModel):
    next_cursor: str = Field("", description="Pass as `cursor` for the next page; '' on the last page")
    total: Count = Field(0, description="Items in the whole list")


class IndexStatus(BaseModel):
    repository_id: str = ""
    state: IndexState = Field("", description="'' (never indexed), queued, indexing, ready or failed")
    head_sha: str = Field("", description="Commit of the last successful index")
    run_id: str = Field("", description="The latest run")
    run_state: str = ""
    phase: str = Field("", description="While indexing: starting, fetching, listing, extracting, analyzing, writing")
    files_done: Count = 0
    files_total: Count = 0
    files_parsed: Count = Field(0, description="Read and parsed by this run (an incremental run reuses the rest)")
    files_skipped: Count = 0
    attempts: Count = 0
    error: str = ""
    error_code: str = Field("", description="Machine code of a failed run (empty_repository, timeout, ...)")
    queued_at: Timestamp | None = None
    started_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    incremental: bool = False
    target_sha: str = ""
    timings: dict[str, float] = Field(default_factory=dict, description="Phase -> seconds (when ready)")
    notes: list[str] = Field(
        default_factory=list,
        description="Of a ready run: what it accepted or left out (malformed git history, unaddressable paths)",
    )

    @property
    def finished(self) -> bool:
        return self.state in ("ready", "failed")


class IndexStatusWithModel(IndexStatus):
    """``GET index/status``: the run, and the commit of the model analyses use."""

    model_commit: str | None = Field(
        None, description="Commit of the analyzer's model ('' before its first; null when the analyzer cannot say now)"
    )


class Repository(BaseModel):
    id: str
    name: str = ""
    kind: str = Field("", description="local, url or hosted")
    source: str = Field("", description="The local path, git URL or owner/repo it was registered with")
    owner: str = Field("", description="user:<id> or org:<id>")
    default_branch: str = ""
    created_at: Timestamp | None = None
    index: IndexStatus | None = None
    installation_id: int = Field(0, description="The host app installation of a hosted repository; 0 = none")
    status: str = Field("", description="active, or retired (removed from its installation)")


class RepositoryList(BaseModel):
    repositories: list[Repository]
    page: Page = Field(default_factory=Page)


# --- the read endpoints ------------------------------------------------------------------------


class Domain(BaseModel):
    name: str
    path_prefix: str = Field(description="'' for the (root) domain, else a directory ending in '/'")
    file_count: Count
    test_file_count: Count
    line_count: Count
    languages: list[str] = Field(description="Most files first")


class Domains(BaseModel):
    repository_id: str
    commit: str
    total: Count
    domains: list[Domain]


class Segment(BaseModel):
    domain: str
    name: str = Field(description="Directory or module name; '.' for the files directly in the domain")
    path_prefix: str
    kind: str = Field(description="A layer (api, models, services, repository, ...) or package / module")
    file_count: Count


class Segments(BaseModel):
    repository_id: str
    commit: str
    segments: list[Segment]
    page: Page


class NetworkNode(BaseModel):
    path: str
    domain: str
    in_degree: Count = Field(description="Distinct files importing this one")
    out_degree: Count = Field(description="Distinct files this one imports")


class NetworkEdge(BaseModel):
    source: str
    target: str
    weight: Count = Field(description="Import statements")


class GroupEdge(NetworkEdge):
    reverse: bool = Field(description="The target group also imports the source group")


class NetworkCounts(BaseModel):
    nodes: Count
    edges: Count
    cycles: Count


class Network(BaseModel):
    repository_id: str
    commit: str
    nodes: list[NetworkNode] = Field(description="Paged together with edges")
    edges: list[NetworkEdge]
    cycles: list[list[str]] = Field(description="Import cycles: each the sorted paths of one")
    domain_edges: list[GroupEdge]
    layer_edges: list[GroupEdge]
    counts: NetworkCounts
    page: Page


class FileHistory(BaseModel):
    path: str
    commits: Count
    authors: Count = Field(description="Distinct author emails")
    added: Count
    deleted: Count
    churn: Count = Field(description="added + deleted")
    fix_commits: Count
    first_timestamp: Timestamp | None = Field(description="Author time of the oldest commit read")
    last_timestamp: Timestamp | None
    last_sha: str


class HotSpot(BaseModel):
    path: str
    score: float = Field(description="(commits + fix_commits) * log2(1 + churn)")
    commits: Count
    churn: Count
    fix_commits: Count


class CoChangeRule(BaseModel):
    source: str
    target: str = Field(description="Changed in `support` of the commits that changed `source`")
    support: Count
    confidence: float


class History(BaseModel):
    """The repository's history, or one file's (``?path=``): the fields of the other view are absent."""

    repository_id: str
    commit: str
    depth: Count = Field(description="Commits read at most")
    commits: Count = Field(description="Commits read")
    # The repository (no path asked)
    huge_commits: Count | None = Field(None, description="Left out of co-change: too many files, releases, sweeps")
    hot_spots: list[HotSpot] | None = None
    cochange_pairs: Count | None = None
    files: list[FileHistory] | None = None
    page: Page | None = None
    # One file (?path=)
    path: str | None = None
    file: FileHistory | None = Field(None, description="null: in the snapshot, but not changed in the history read")
    cochanges: list[CoChangeRule] | None = None
    hot_spot_rank: Count | None = Field(None, description="0 = not a hot spot")


class FileContent(BaseModel):
    """One file of the indexed snapshot, as text (the dashboard's file page)."""

    repository_id: str
    path: str
    commit: str = Field(description="The snapshot's commit")
    blob_sha: str
    content: str = Field(description="UTF-8 text; undecodable bytes replaced by U+FFFD")
