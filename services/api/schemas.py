"""Request bodies of the /v1 routes and the auth responses (responses: repositories.py, account.py, responses.py)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, model_validator

from services.api.types import Timestamp
from services.kit.paths import MAX_PATH_LENGTH, repo_path

# Line and pull-request numbers travel as int32 in the contracts: a larger one is the client's error (422),
# not a failure to encode it (500).
INT32_MAX = 2**31 - 1


# Text is stored in PostgreSQL, which holds no NUL character: no request string carries one.
NO_NUL = r"^[^\x00]*$"
# Text the services do not read as empty: they strip with Python's ``str.strip()``, so a value needs
# one character outside Python's whitespace (and not NUL). The pattern is the schema's and the model's.
_NON_BLANK_CHAR = r"[^\x00\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
NOT_BLANK = rf"^[^\x00]*{_NON_BLANK_CHAR}[^\x00]*$"
_NOT_BLANK = re.compile(NOT_BLANK)
Plain = Annotated[str, Field(pattern=NO_NUL)]
Text = Annotated[str, Field(pattern=NOT_BLANK)]
# A repository-relative path in a request body: the one rule of every route and service.
RepoPath = Annotated[
    str,
    Field(
        min_length=1,
        pattern=NOT_BLANK,
        max_length=MAX_PATH_LENGTH,
        description="Repository-relative file path (no leading '/', no '..', nothing under .git)",
    ),
    AfterValidator(repo_path),
]
# A hosted repository's owner/repo, as the indexer reads it (services/indexer/access.py FULL_NAME).
FULL_NAME = r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$"
# A local repository is named by its absolute path (services/indexer/git/paths.py); whether it is a
# repository under the indexer's allowed roots is that server's disk and configuration (422).
LOCAL_PATH = r"^/[^\x00]*$"
# A clone URL's shape as the indexer checks it before any lookup (services/indexer/git/urls.py):
# scheme://host/path, one of the schemes git may clone over, no whitespace, control character,
# backslash, query or fragment, a path with one character besides '/'. Which schemes, hosts and
# ports this deployment allows is its configuration, and whether the host answers is the network's:
# those stay 422 ``validation_failed`` with ``details.field = "url"``.
_URL_CHAR = r"[^\x00-\x20\x7f\\?#]"
CLONE_URL = rf"^(https?|ssh|git)://[^\x00-\x20\x7f\\?#/]+/{_URL_CHAR}*[^\x00-\x20\x7f\\?#/]{_URL_CHAR}*$"


def one_of(*branches: dict[str, Any]) -> dict[str, Any]:
    """``json_schema_extra`` for a body that must name one of several alternatives."""
    return {"oneOf": list(branches)}


def examples(*bodies: dict[str, Any]) -> dict[str, Any]:
    """``json_schema_extra`` with whole-body examples: bodies the route accepts as they stand."""
    return {"examples": list(bodies)}


def _json_number(value: object) -> object:
    # JSON true is not the number 1 and "1" is not a number; an integral 3.0 is the integer 3, as in
    # JSON Schema. Booleans are StrictBool for the same reason: 0 is not false.
    if isinstance(value, bool | str):
        raise ValueError("expected a JSON number")
    return value


JsonNumber = BeforeValidator(_json_number)
# Bounds inside the type and before the validator: only there does pydantic render them as JSON
# Schema (not on a field of a wrapped or an ``X | None`` type).
LineNumber = Annotated[int, Field(ge=1, le=INT32_MAX), JsonNumber]
PrNumber = Annotated[int, Field(ge=0, le=INT32_MAX), JsonNumber]
Seats = Annotated[int, Field(ge=1, le=100000), JsonNumber]
Days = Annotated[int, Field(ge=0, le=3650), JsonNumber]
Confidence = Annotated[float, Field(ge=0, le=1), JsonNumber]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateRepository(Strict):
    """Exactly one source: ``path`` | ``url`` | ``full_name`` (the others absent or null)."""

    model_config = ConfigDict(
        # A local path is absolute (under the indexer's allowed roots): the example says so.
        json_schema_extra=examples({"path": "/home/me/src/shop", "name": "shop"})
        | one_of(
            *(
                {"title": title, "required": [field], "properties": {field: {"type": "string", "pattern": pattern}}}
                for field, title, pattern in (
                    ("path", "Local", LOCAL_PATH),
                    ("url", "Git URL", CLONE_URL),
                    ("full_name", "Hosted", FULL_NAME),
                )
            )
        )
    )
    path: Annotated[str, Field(pattern=LOCAL_PATH, max_length=4096)] | None = Field(
        None, description="Absolute path of a repository under the indexer's allowed roots"
    )
    url: Annotated[str, Field(pattern=CLONE_URL, max_length=2048)] | None = Field(
        None, description="Git URL, scheme://host/path (the deployment allows https unless configured otherwise)"
    )
    full_name: Annotated[str, Field(pattern=FULL_NAME)] | None = Field(None, description="Hosted owner/repo")
    org_id: str | None = Field(None, description="Own the repository by this organization", max_length=64)
    name: Annotated[Plain, Field(max_length=200)] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> CreateRepository:
        given = [f for f in ("path", "url", "full_name") if getattr(self, f) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of path, url or full_name")
        return self


class HostIndex(Strict):
    full_name: str = Field(..., min_length=3, max_length=201, pattern=FULL_NAME)
    org_id: str | None = Field(None, max_length=64)
    incremental: StrictBool = False


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
    base_content: str | None = Field(
        None,
        description="The file before the change (for a rename, at its old path), when the client knows it; "
        "omitted = the base commit's file, else the indexed snapshot's. Findings it already had are "
        "answered under preexisting",
    )


class AnalyzePr(Strict):
    """The changed files (``files``, at least one), or the ``base`` and ``head`` commits."""

    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"title": "Files", "required": ["files"], "properties": {"files": {"minItems": 1}}},
                {
                    "title": "Commits",
                    "required": ["base", "head"],
                    "properties": {field: {"type": "string", "minLength": 1} for field in ("base", "head")},
                },
            ]
        }
    )
    base: str | None = Field(None, max_length=64)
    head: str | None = Field(None, max_length=64)
    files: list[FilePatch] = Field(default_factory=list, max_length=3000)
    pr_number: PrNumber | None = None
    format: Format = "json"

    @model_validator(mode="after")
    def _files_or_commits(self) -> AnalyzePr:
        if not self.files and not (self.base and self.head):
            raise ValueError("send the changed files, or base and head commits")
        return self


class ReviewChangeset(Strict):
    """``diff`` when given; else ``file_paths``; else (``staged``) the server-side work tree's staged changes."""

    model_config = ConfigDict(json_schema_extra=examples({"file_paths": ["src/shop/orders.py"]}))
    file_paths: list[RepoPath] = Field(default_factory=list, max_length=3000)
    diff: str | None = Field(None, description="Unified diff of staged changes")
    staged: StrictBool = Field(False, description="Read staged changes from the local worktree")
    format: Format = "json"


class ReviewContext(Strict):
    path: RepoPath


Verdict = Literal["accepted", "fixed", "dismissed", "false_positive"]


class Feedback(Strict):
    """A verdict on a finding this service reported, named by ``finding_id`` or ``fingerprint``."""

    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": [field], "properties": {field: {"type": "string", "minLength": 1}}}
                for field in ("finding_id", "fingerprint")
            ]
        }
    )
    finding_id: Annotated[Plain, Field(max_length=200)] | None = None
    fingerprint: Annotated[Plain, Field(max_length=200)] | None = None
    verdict: Verdict
    comment: Plain = ""

    @model_validator(mode="after")
    def _named(self) -> Feedback:
        if not (self.finding_id or self.fingerprint):
            raise ValueError("finding_id or fingerprint is required")
        return self


class ExternalFinding(Strict):
    """A finding from another reviewer: a ``rule`` or a ``category`` (or both) names it."""

    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": [field], "properties": {field: {"type": "string", "pattern": NOT_BLANK}}}
                for field in ("rule", "category")
            ]
        }
    )
    rule: Plain = Field("", max_length=1000)
    category: Plain = Field("", max_length=1000)
    path: RepoPath
    start_line: LineNumber = 1
    end_line: LineNumber | None = None
    message: Text = Field(..., min_length=1, max_length=5000)
    source: Plain = Field("", max_length=1000)

    @model_validator(mode="after")
    def _named(self) -> ExternalFinding:
        if not (_NOT_BLANK.search(self.rule) or _NOT_BLANK.search(self.category)):
            raise ValueError("a rule or a category is required")
        return self


class ReportFindings(Strict):
    feedback: list[Feedback] = Field(default_factory=list, max_length=5000)
    findings: list[ExternalFinding] = Field(default_factory=list, max_length=5000)


class HostSignIn(Strict):
    code: Plain = Field(
        ...,
        min_length=1,
        max_length=512,
        examples=["4f3a9c1e2b7d5a60"],
        description="The code the host sent to the redirect URI",
    )
    state: Plain = Field(
        ...,
        min_length=1,
        max_length=512,
        examples=["wV9m2kQ1pZ7xR4tB"],
        description="The state from GET /v1/auth/host/authorize",
    )


class CreateToken(Strict):
    name: Text = Field(..., max_length=100)
    expires_in_days: Days = Field(0, description="0 = never expires")


Role = Literal["viewer", "member", "team-admin"]


class Invite(Strict):
    login: Text = Field(..., max_length=100, description="The invitee's code-host login")
    email: Annotated[Plain, Field(max_length=320)] | None = None
    role: Role = "member"


class ChangeRole(Strict):
    role: Role


class ChangeSeats(Strict):
    seats: Seats


class OrgScoped(Strict):
    org_id: str | None = Field(None, max_length=64, description="Organization id; omitted = your personal account")


# A plan id of the deployment's catalogue (services/billing/plans.py PlanConfig.id).
# The catalogue is the billing service's configuration (CR_BILLING_PLANS), so the document states only
# the id's shape: another deployment's plan, or free, is 422 ``validation_failed``, ``details.field = "plan"``.
PlanId = Annotated[
    str,
    Field(
        pattern=r"^[a-z0-9][a-z0-9_-]{0,39}$",
        description="A paid plan's id from GET /v1/account/plans; any other is 422 `validation_failed` "
        "(`details.field`: `plan`)",
    ),
]


class Checkout(OrgScoped):
    plan: PlanId
    trial: StrictBool = Field(False, description="Start with the plan's trial (once per user)")
    seats: Seats = Field(1, description="Organization checkouts: at least the current members")
    success_url: str = Field("", max_length=2048)
    cancel_url: str = Field("", max_length=2048)


class SwitchPlan(OrgScoped):
    plan: PlanId


Family = Literal[
    "naming", "vocabulary", "formatting", "dependencies", "structure", "documentation", "idioms", "cochange", "external"
]
Severity = Literal["info", "warning", "error"]
# The analyzer's rule for a list of globs or rule ids: non-empty strings, at most 500.
Names = Annotated[list[Text], Field(max_length=500)]


class AuditPreferencesPatch(Strict):
    """A JSON merge patch (RFC 7386) of the audit preferences: ``null`` returns a field to its default.
    The analyzer applies it (services/analyzer/preferences.py)."""

    enabled_families: Annotated[list[Family], Field(max_length=500)] | None = None
    min_severity: Severity | None = None
    min_confidence: Confidence | None = None
    ignored_paths: Names | None = None
    disabled_rules: Names | None = None


class PaymentEvent(BaseModel):
    """A payment-provider event, as signed (only ``id`` and ``type`` are read at the edge)."""

    model_config = ConfigDict(extra="allow")
    id: str = Field(..., min_length=1, max_length=255)
    type: str = Field(..., min_length=1, max_length=255)


class CodeHostEvent(BaseModel):
    """A code-host app event (``X-GitHub-Event`` names its kind); the hostapp reads it."""

    model_config = ConfigDict(extra="allow")


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
    expires_at: Timestamp | None = Field(description="When the session token stops working")
    principal: PrincipalInfo


class CodeHostReceived(BaseModel):
    """A code-host delivery, acknowledged (recorded under its delivery id before any work)."""

    ok: bool = True
    duplicate: bool = Field(description="The delivery id was seen before: nothing was done again")
    handled: bool = Field(description="Recorded now; its effect is applied after this answer (false for a duplicate)")
    job_id: str = Field(description="Always '': a job, if the delivery makes one, is made after this answer")


class PaymentReceived(BaseModel):
    """A payment-provider event, acknowledged (recorded under its event id before any work)."""

    received: bool = True
    duplicate: bool = Field(description="The event id was seen before: nothing was done again")
    handled: bool = Field(description="One of the four event types the service acts on")


class ChatMessage(BaseModel):
    role: str
    content: str | list | None = None


class Chat(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str | None = None
    messages: list[ChatMessage] = Field(..., min_length=1)
    stream: StrictBool = False


class ChatChoice(BaseModel):
    model_config = ConfigDict(extra="allow")
    index: int = 0
    message: ChatMessage | None = None
    finish_reason: str | None = None


class ChatUsage(BaseModel):
    model_config = ConfigDict(extra="allow")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class ChatCompletion(BaseModel):
    """The upstream's answer (an OpenAI-compatible chat completion), relayed as it came."""

    model_config = ConfigDict(extra="allow")
    id: str = ""
    object: str = "chat.completion"
    created: int = 0
    model: str = ""
    choices: list[ChatChoice] = Field(default_factory=list)
    usage: ChatUsage | None = None
