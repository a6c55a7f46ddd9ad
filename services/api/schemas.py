"""Request bodies of the /v1 routes and the auth responses (responses: repositories.py, account.py, responses.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from services.kit.paths import MAX_PATH_LENGTH, repo_path

# A repository-relative path in a request body: the one rule of every route and service.
RepoPath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_PATH_LENGTH,
        description="Repository-relative file path (no leading '/', no '..', nothing under .git)",
    ),
    AfterValidator(repo_path),
]
# Line and pull-request numbers travel as int32 in the contracts: a larger one is the client's error (422),
# not a failure to encode it (500).
INT32_MAX = 2**31 - 1


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
    path: RepoPath
    content: str | None = Field(None, description="Unsaved content; omitted = the indexed snapshot's file")
    format: Format = "json"


class FilePatch(Strict):
    path: RepoPath
    status: str = "modified"
    patch: str = ""
    content: str | None = None


class AnalyzePr(Strict):
    base: str | None = Field(None, max_length=64)
    head: str | None = Field(None, max_length=64)
    files: list[FilePatch] = Field(default_factory=list, max_length=3000)
    pr_number: int | None = Field(None, ge=0, le=INT32_MAX)
    format: Format = "json"


class ReviewChangeset(Strict):
    file_paths: list[RepoPath] = Field(default_factory=list, max_length=3000)
    diff: str | None = Field(None, description="Unified diff of staged changes")
    staged: bool = Field(False, description="Read staged changes from the local worktree")
    format: Format = "json"


class ReviewContext(Strict):
    path: RepoPath


Verdict = Literal["accepted", "fixed", "dismissed", "false_positive"]


class Feedback(Strict):
    finding_id: str | None = None
    fingerprint: str | None = None
    verdict: Verdict
    comment: str = ""


class ExternalFinding(Strict):
    rule: str = ""
    category: str = ""
    path: RepoPath
    start_line: int = Field(1, ge=1, le=INT32_MAX)
    end_line: int | None = Field(None, ge=1, le=INT32_MAX)
    message: str = Field(..., min_length=1, max_length=5000)
    source: str = ""


class ReportFindings(Strict):
    feedback: list[Feedback] = Field(default_factory=list, max_length=5000)
    findings: list[ExternalFinding] = Field(default_factory=list, max_length=5000)


class HostSignIn(Strict):
    code: str = Field(..., min_length=1, max_length=512, description="The code the host sent to the redirect URI")
    state: str = Field(..., min_length=1, max_length=512, description="The state from GET /v1/auth/host/authorize")


class CreateToken(Strict):
    name: str = Field(..., min_length=1, max_length=100)
    expires_in_days: int = Field(0, ge=0, le=3650, description="0 = never expires")


Role = Literal["viewer", "member", "team-admin"]


class Invite(Strict):
    login: str = Field(..., min_length=1, max_length=100, description="The invitee's code-host login")
    email: str | None = Field(None, max_length=320)
    role: Role = "member"


class ChangeRole(Strict):
    role: Role


class ChangeSeats(Strict):
    seats: int = Field(..., ge=1, le=100000)


class OrgScoped(Strict):
    org_id: str | None = Field(None, max_length=64, description="Organization id; omitted = your personal account")


class Checkout(OrgScoped):
    plan: str = Field(..., min_length=1, max_length=40)
    trial: bool = Field(False, description="Start with the plan's trial (once per user)")
    seats: int = Field(1, ge=1, le=100000, description="Organization checkouts: at least the current members")
    success_url: str = Field("", max_length=2048)
    cancel_url: str = Field("", max_length=2048)


class SwitchPlan(OrgScoped):
    plan: str = Field(..., min_length=1, max_length=40)


# --- responses of the auth routes ---------------------------------------------


class MembershipInfo(BaseModel):
    org_id: str
    org_name: str
    role: Role


class PrincipalInfo(BaseModel):
    user_id: str
    login: str
    memberships: list[MembershipInfo]
    token_id: str
    token_kind: str = Field(description="session | pat")
    plan: str = Field(description="The plan behind the caller's own limits")


class UserRef(BaseModel):
    id: str
    login: str


class Validated(PrincipalInfo):
    valid: bool
    user: UserRef


class AuthorizeStart(BaseModel):
    authorize_url: str = Field(description="Send the user here")
    state: str = Field(description="Echoed back by the host; single use, expires in minutes")


class SignedIn(BaseModel):
    access_token: str = Field(description="A session token (crs_...)")
    token_type: str = "bearer"
    expires_at: int
    principal: PrincipalInfo


class ChatMessage(BaseModel):
    role: str
    content: str | list | None = None


class Chat(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str | None = None
    messages: list[ChatMessage] = Field(..., min_length=1)
    stream: bool = False
