"""Response bodies of the analyzer's routes: analyses, findings, reports, review and global
context, dashboard, audit results and audit preferences (shapes in docs/review.md).

Each model is the REST form of one analyzer message (``analyzer.proto``); the gateway renders the
message through it, the client and the MCP server read the answer with it. Counts are JSON
integers and times RFC 3339 UTC strings (``services.api.types``). Extra fields are kept
(``extra="allow"``) so a field the server adds later reaches an older client instead of failing
validation. Every field is always sent, so the response schema marks every field required (a
client generator then types none of them optional; null stays allowed where the type says so).
Fastapi-free: the client imports this module.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from services.api.repositories import Domain, History, HotSpot, Segment
from services.api.types import Count, Timestamp

Severity = Literal["info", "warning", "error"]
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")
Param = str | int | float | bool


class Body(BaseModel):
    model_config = ConfigDict(extra="allow", json_schema_serialization_defaults_required=True)


# --- findings and analyses ---------------------------------------------------------------------


class Scope(Body):
    kind: str = Field("", description="repository, language, domain, directory or file")
    value: str = Field("", description="The language, domain, directory or file; '' for the repository")


class Evidence(Body):
    """Why the finding was raised; the convention fields are null for a finding that rests on none."""

    level: str = Field("", description="strict (reported in pull requests) or loose")
    symbol: str = Field("", description="The flagged identifier, '' when none")
    convention: str | None = Field(None, description="Convention id")
    scope: Scope | None = None
    choice: str | None = Field(None, description="What the repository does, e.g. snake_case")
    share: float | None = Field(None, description="Share of the observations that agree with the choice")
    count: Count | None = Field(None, description="Observations the convention rests on")
    support: Count | None = Field(None, description="Observations that agree with the choice")
    description: str = ""
    examples: list[str] = Field(default_factory=list)
    detail: dict[str, Param] = Field(default_factory=dict, description="Rule-specific values")


class FindingFields(Body):
    """What a finding says, whether in an analysis or in a path's past (review context)."""

    id: str
    fingerprint: str
    rule: str
    category: str = ""
    severity: Severity
    confidence: float = 0.0
    message: str
    path: str
    start_line: Count = 0
    end_line: Count = 0


class Finding(FindingFields):
    evidence: Evidence = Field(default_factory=Evidence)
    suggestion: str = ""
    preexisting: bool = Field(False, description="The change's base already had it (listed under preexisting)")
    more: Count = Field(
        0, description="Findings of this rule left out after this one (a few of one rule are listed per change)"
    )


class Skipped(Body):
    path: str
    reason: str


class AnalysisResult(Body):
    audit_id: str = ""
    repository_id: str = ""
    commit: str = Field("", description="The commit of the model the analysis used")
    findings: list[Finding] = Field(
        default_factory=list, description="What the change introduced (for one file: all of its findings)"
    )
    files_analyzed: Count = 0
    duration_ms: float = 0.0
    skipped: list[Skipped] = Field(default_factory=list)
    preexisting: list[Finding] = Field(
        default_factory=list,
        description="Findings on the changed lines that the change's base already had ('already there'); "
        "never in findings; empty for a single file",
    )
    preexisting_count: Count = Field(0, description="How many pre-existing findings, before the findings cap")


# --- conventions and reports -------------------------------------------------------------------


class DeclaredSetting(Body):
    file: str = ""
    setting: str = ""
    learned: str | None = Field(None, description="The learned choice it agrees with or overrides")
    agreement: str = Field("", description="agrees, overrides or declared")


class Convention(Body):
    id: str = ""
    rule: str = ""
    family: str = ""
    scope: Scope | None = None
    language: str = ""
    choice: str = ""
    share: float = 0.0
    count: Count = 0
    support: Count = 0
    level: str = Field("", description="strict, loose or off")
    confidence: float = 0.0
    description: str = ""
    examples: list[str] = Field(default_factory=list)
    source: str = Field("", description="learned, declared, config or reports")
    alternatives: dict[str, Count] = Field(default_factory=dict)
    declared: DeclaredSetting | None = Field(None, description="Set for a declared convention")


class ReportConvention(Body):
    """A convention learned from reports, as a report's answer lists it."""

    id: str = ""
    rule: str = ""
    choice: str = ""
    scope: Scope | None = None
    count: Count = 0
    level: str = ""
    description: str = ""


class RuleCalibration(Body):
    rule: str
    state: str = Field("", description="normal, downgraded or muted")
    reported: Count = 0
    accepted: Count = 0
    rejected: Count = 0
    false_positive_rate: float = 0.0
    confidence_factor: float = 1.0


class Calibration(Body):
    rules: list[RuleCalibration] = Field(default_factory=list)
    suppressed_fingerprints: Count = 0
    unknown_findings: list[str] = Field(default_factory=list)
    report_conventions: list[ReportConvention] = Field(default_factory=list)


class SarifLog(Body):
    """A SARIF 2.1.0 log (https://json.schemastore.org/sarif-2.1.0.json), carried as the analyzer wrote it."""

    version: Literal["2.1.0"]
    runs: list[dict[str, Any]]


class ReportResult(Body):
    recorded: Count = Field(0, description="Feedback items recorded, whatever their verdict")
    verdicts: dict[str, Count] = Field(default_factory=dict, description="Recorded feedback items per verdict")
    accepted: Count = Field(0, description="Recorded feedback items whose verdict is accepted")
    external: Count = Field(0, description="External findings stored")
    calibration: Calibration = Field(default_factory=Calibration)


# --- dashboards --------------------------------------------------------------------------------


class LevelCounts(Body):
    strict: Count = 0
    loose: Count = 0
    off: Count = 0


class ConventionCounts(Body):
    total: Count = 0
    strict: Count = 0
    loose: Count = 0
    by_family: dict[str, LevelCounts] = Field(default_factory=dict)


class DashboardIndex(Body):
    state: str = Field("", description="queued, indexing, ready or failed; '' when the indexer could not be asked")
    head_sha: str = ""
    files_done: Count = 0
    files_total: Count = 0
    error: str | None = None
    finished_at: Timestamp | None = None


class DashboardModel(Body):
    commit: str = ""
    learned_at: Timestamp | None = None
    files: Count = 0
    conventions: ConventionCounts = Field(default_factory=ConventionCounts)


class AuditCounts(Body):
    total: Count = 0
    by_kind: dict[str, Count] = Field(default_factory=dict, description="file, pull_request, changeset")
    last_at: Timestamp | None = None


class RuleCount(Body):
    rule: str
    count: Count = 0


class DayCounts(Body):
    date: str = Field(description="YYYY-MM-DD (UTC)")
    total: Count = 0
    by_severity: dict[str, Count] = Field(default_factory=dict)
    by_rule: dict[str, Count] = Field(default_factory=dict)


class FindingCounts(Body):
    total: Count = 0
    by_severity: dict[str, Count] = Field(default_factory=dict)
    by_rule: list[RuleCount] = Field(default_factory=list, description="Most frequent first")
    over_time: list[DayCounts] = Field(default_factory=list, description="Oldest day first")


class RuleAcceptance(Body):
    rule: str
    state: str = Field("", description="normal, downgraded or muted")
    reported: Count = 0
    accepted: Count = 0
    fixed: Count = 0
    dismissed: Count = 0
    false_positive: Count = 0
    false_positive_rate: float = 0.0
    acceptance_rate: float | None = Field(None, description="null before any verdict")
    confidence_factor: float = 1.0


class Dashboard(Body):
    repository_id: str = ""
    index: DashboardIndex = Field(default_factory=DashboardIndex)
    model: DashboardModel = Field(default_factory=DashboardModel)
    window_days: Count = 0
    audits: AuditCounts = Field(default_factory=AuditCounts)
    findings: FindingCounts = Field(default_factory=FindingCounts)
    acceptance: list[RuleAcceptance] = Field(default_factory=list)
    false_positive_rate: float | None = Field(None, description="null before any verdict")
    strongest_conventions: list[Convention] = Field(default_factory=list)
    weakest_conventions: list[Convention] = Field(default_factory=list)


# --- audit results and preferences -------------------------------------------------------------


class AuditSummary(Body):
    id: str
    repository_id: str = ""
    kind: str = Field("", description="file, pull_request or changeset")
    commit: str = ""
    pr_number: Count | None = Field(None, description="Set for a pull request's audit")
    files: Count = 0
    findings: Count = 0
    by_severity: dict[str, Count] = Field(default_factory=dict)
    duration_ms: float = 0.0
    user_id: str = ""
    created_at: Timestamp | None = None


class FleetConvention(Body):
    rule: str
    family: str = ""
    language: str = ""
    repositories: Count = Field(0, description="Repositories that enforce the rule")
    majority: str = ""
    agreement: float = Field(0.0, description="Share of those repositories that make the majority choice")
    choices: dict[str, Count] = Field(default_factory=dict, description="Repositories per choice")


class FleetRepository(Body):
    repository_id: str
    full_name: str | None = None
    commit: str = ""
    learned_at: Timestamp | None = None
    files: Count = 0
    conventions: Count = 0
    enforced: Count = 0
    audits: Count = 0
    findings: Count = 0


class Fleet(Body):
    repositories: Count = 0
    learned: Count = 0
    window_days: Count = 0
    audits: Count = 0
    findings_by_severity: dict[str, Count] = Field(default_factory=dict)
    false_positive_rate: float | None = None
    conventions: list[FleetConvention] = Field(default_factory=list)
    by_repository: list[FleetRepository] = Field(default_factory=list)


class AuditResults(Body):
    audits: list[AuditSummary] = Field(default_factory=list, description="Newest first")
    fleet: Fleet = Field(default_factory=Fleet)


class AuditPreferences(Body):
    owner: str = Field(description="user:<id> or org:<id>")
    enabled_families: list[str] = Field(default_factory=list)
    min_severity: Severity = "info"
    min_confidence: float = 0.0
    ignored_paths: list[str] = Field(default_factory=list, description="gitignore-like globs")
    disabled_rules: list[str] = Field(default_factory=list)
    updated_at: Timestamp | None = Field(None, description="null while the defaults apply")
    updated_by: str = ""


# --- review and global context -----------------------------------------------------------------


class CoChangePartner(Body):
    path: str = Field(description="The file that usually changes with this one")
    rule: str = ""
    share: float = 0.0
    support: Count = 0
    commits: Count = 0
    description: str = ""


class PastFinding(FindingFields):
    suggestion: str = ""
    audit_id: str = ""
    created_at: Timestamp | None = None
    verdict: str | None = Field(None, description="The latest verdict on it; null before any")


class FeedbackRecord(Body):
    finding_id: str = ""
    fingerprint: str = ""
    rule: str = ""
    verdict: str = Field("", description="accepted, fixed, dismissed or false_positive")
    comment: str = ""
    at: Timestamp | None = None


class ExternalReport(Body):
    rule: str = ""
    category: str = ""
    path: str
    start_line: Count = 0
    end_line: Count = 0
    message: str
    source: str = Field("", description="The reviewer or tool that reported it")
    created_at: Timestamp | None = None


class ReviewReports(Body):
    feedback: list[FeedbackRecord] = Field(default_factory=list)
    external: list[ExternalReport] = Field(default_factory=list)


class ReviewHistory(Body):
    file: History | None = Field(None, description="The indexer's history of the path (GET .../history?path=)")
    co_changes: list[CoChangePartner] = Field(default_factory=list)
    findings: list[PastFinding] = Field(default_factory=list, description="Earlier analyses' findings on the path")
    reports: ReviewReports = Field(default_factory=ReviewReports)


class ReviewContext(Body):
    """Dump it with ``exclude_unset=True``, as GET .../history is: ``history.file`` holds one view of
    a History (the path's), and the other view's fields are left out rather than null."""

    repository_id: str = ""
    commit: str = ""
    path: str = ""
    language: str | None = Field(None, description="null for a language the analyzer does not know")
    domain: Domain | None = None
    segment: Segment | None = None
    conventions: list[Convention] = Field(default_factory=list, description="Those that govern the path")
    history: ReviewHistory = Field(default_factory=ReviewHistory)


class LanguageStats(Body):
    language: str
    files: Count = 0
    lines: Count = 0


class DeclaredConfig(Body):
    files: list[str] = Field(default_factory=list, description="Tools' configuration files read")
    notes: list[str] = Field(default_factory=list, description="Those not read, and why")


class ConfigInfo(Body):
    file: str = ""
    present: bool = False
    errors: list[str] = Field(default_factory=list, description="Why the file was ignored")
    declared: DeclaredConfig = Field(default_factory=DeclaredConfig)


class RepositoryActivity(Body):
    commits: Count = Field(0, description="Commits the history read")


class GlobalContext(Body):
    repository_id: str = ""
    full_name: str | None = Field(None, description="owner/repo of a hosted repository")
    commit: str = ""
    head_sha: str = ""
    learned_at: Timestamp | None = None
    files: Count = 0
    lines: Count | None = None
    test_files: Count | None = None
    languages: list[LanguageStats] = Field(default_factory=list)
    domains: list[Domain] = Field(default_factory=list)
    conventions: ConventionCounts = Field(default_factory=ConventionCounts)
    strongest_conventions: list[Convention] = Field(default_factory=list)
    report_conventions: list[Convention] = Field(default_factory=list)
    hot_spots: list[HotSpot] = Field(default_factory=list)
    history: RepositoryActivity = Field(default_factory=RepositoryActivity)
    config: ConfigInfo = Field(default_factory=ConfigInfo)
