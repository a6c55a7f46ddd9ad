"""Request bodies of the /v1 routes (responses are documented in docs/api.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateRepository(Strict):
    path: str | None = Field(None, description="Server-side local path (under the allowed roots)", max_length=4096)
    url: str | None = Field(None, description="Git URL (https by default)", max_length=2048)
    full_name: str | None = Field(None, description="Hosted owner/repo", max_length=200)
    org_id: str | None = Field(None, description="Own the repository by this organization")
    name: str | None = Field(None, max_length=200)


class HostIndex(Strict):
    full_name: str = Field(..., min_length=3, max_length=200, pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    org_id: str | None = None
    incremental: bool = False


Format = Literal["json", "sarif"]


class AnalyzeFile(Strict):
    path: str = Field(..., min_length=1, max_length=4096)
    content: str | None = Field(None, description="Unsaved content; omitted = the indexed snapshot's file")
    format: Format = "json"


class FilePatch(Strict):
    path: str = Field(..., min_length=1, max_length=4096)
    status: str = "modified"
    patch: str = ""
    content: str | None = None


class AnalyzePr(Strict):
    base: str | None = Field(None, max_length=64)
    head: str | None = Field(None, max_length=64)
    files: list[FilePatch] = Field(default_factory=list, max_length=3000)
    pr_number: int | None = None
    format: Format = "json"


class ReviewChangeset(Strict):
    file_paths: list[str] = Field(default_factory=list, max_length=3000)
    diff: str | None = Field(None, description="Unified diff of staged changes")
    staged: bool = Field(False, description="Read staged changes from the local worktree")
    format: Format = "json"


class ReviewContext(Strict):
    path: str = Field(..., min_length=1, max_length=4096)


Verdict = Literal["accepted", "fixed", "dismissed", "false_positive"]


class Feedback(Strict):
    finding_id: str | None = None
    fingerprint: str | None = None
    verdict: Verdict
    comment: str = ""


class ExternalFinding(Strict):
    rule: str = ""
    category: str = ""
    path: str = Field(..., min_length=1, max_length=4096)
    start_line: int = Field(1, ge=1)
    end_line: int | None = Field(None, ge=1)
    message: str = Field(..., min_length=1, max_length=5000)
    source: str = ""


class ReportFindings(Strict):
    feedback: list[Feedback] = Field(default_factory=list, max_length=5000)
    findings: list[ExternalFinding] = Field(default_factory=list, max_length=5000)


class HostSignIn(Strict):
    code: str = Field(..., min_length=1, max_length=512)
    state: str = Field(..., min_length=1, max_length=512)


class CreateToken(Strict):
    name: str = Field(..., min_length=1, max_length=100)
    expires_in_days: int = Field(0, ge=0, le=3650)


class Invite(Strict):
    login: str | None = Field(None, max_length=100)
    email: str | None = Field(None, max_length=320)
    role: str = "member"


class ChangeRole(Strict):
    role: str


class ChangeSeats(Strict):
    seats: int = Field(..., ge=1, le=100000)


class OrgScoped(Strict):
    org_id: str | None = None


class Checkout(OrgScoped):
    plan: str
    trial: bool = False
    seats: int = Field(1, ge=1, le=100000)
    success_url: str = ""
    cancel_url: str = ""


class SwitchPlan(OrgScoped):
    plan: str


class ChatMessage(BaseModel):
    role: str
    content: str | list | None = None


class Chat(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str | None = None
    messages: list[ChatMessage] = Field(..., min_length=1)
    stream: bool = False
