"""Every ``/v1`` operation as a ``Call``: what to send and how to read the answer, no I/O.

``Client.send`` and ``AsyncClient.send`` perform a call, so each operation is written once and
both clients stay typed: ``client.send(api.analyze(repo, "app/x.py", content))`` is an
``AnalysisResult``. ``as_sarif`` turns an analysis call into one answering a SARIF 2.1.0 log.

A repository is named by its id, or ``owner/repo`` for a hosted one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from pydantic import BaseModel

from services.api import account as acc
from services.api import analysis as a
from services.api import repositories as rp
from services.api import schemas as s

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    parse: Callable[[Any], T]
    body: Any = None
    params: Mapping[str, Any] | None = None


def model(cls: type[M]) -> Callable[[Any], M]:
    return cls.model_validate


def document(body: Any) -> dict[str, Any]:
    return body if isinstance(body, dict) else {"value": body}


def nothing(_: Any) -> None:
    return None


def dump(body: BaseModel) -> dict[str, Any]:
    return body.model_dump(exclude_none=True)


def repo_path(repo: str, *tail: str) -> str:
    # owner/repo is spelled owner:repo in a path (the gateway reads both).
    return "/".join(["/repositories", quote(repo.replace("/", ":", 1), safe=":"), *tail])


def org_params(org_id: str | None) -> dict[str, str]:
    return {"org_id": org_id} if org_id else {}


# --- repositories and indexing ---------------------------------------------------------------


def list_repositories(limit: int = 50, cursor: str = "") -> Call[rp.RepositoryList]:
    params: dict[str, Any] = {"limit": limit, **({"cursor": cursor} if cursor else {})}
    return Call("GET", "/repositories", model(rp.RepositoryList), params=params)


def create_repository(
    path: str | None = None,
    url: str | None = None,
    full_name: str | None = None,
    org_id: str | None = None,
    name: str | None = None,
) -> Call[rp.Repository]:
    body = s.CreateRepository(path=path, url=url, full_name=full_name, org_id=org_id, name=name)
    return Call("POST", "/repositories", model(rp.Repository), dump(body))


def get_repository(repo: str) -> Call[rp.Repository]:
    return Call("GET", repo_path(repo), model(rp.Repository))


def delete_repository(repo: str) -> Call[None]:
    return Call("DELETE", repo_path(repo), nothing)


def index_repo(repo: str, incremental: bool = False) -> Call[rp.IndexStatus]:
    params = {"incremental": "true"} if incremental else None
    return Call("POST", repo_path(repo, "index_repo"), model(rp.IndexStatus), params=params)


def index_status(repo: str) -> Call[rp.IndexStatusWithModel]:
    return Call("GET", repo_path(repo, "index", "status"), model(rp.IndexStatusWithModel))


def host_index(full_name: str, org_id: str | None = None, incremental: bool = False) -> Call[rp.IndexStatus]:
    body = s.HostIndex(full_name=full_name, org_id=org_id, incremental=incremental)
    return Call("POST", "/repositories/host_index", model(rp.IndexStatus), dump(body))


# --- analysis ------------------------------------------------------------------------------------


def analyze(repo: str, path: str, content: str | None = None) -> Call[a.AnalysisResult]:
    """One file: ``content`` is the unsaved text; None = the indexed snapshot's file."""
    body = s.AnalyzeFile(path=path, content=content)
    return Call("POST", repo_path(repo, "analyze"), model(a.AnalysisResult), dump(body))


def analyze_pr(
    repo: str,
    files: Sequence[s.FilePatch] = (),
    base: str | None = None,
    head: str | None = None,
    pr_number: int | None = None,
) -> Call[a.AnalysisResult]:
    body = s.AnalyzePr(base=base, head=head, files=list(files), pr_number=pr_number)
    return Call("POST", repo_path(repo, "analyze_pr"), model(a.AnalysisResult), dump(body))


def review_changeset(
    repo: str, file_paths: Sequence[str] = (), diff: str | None = None, staged: bool = False
) -> Call[a.AnalysisResult]:
    body = s.ReviewChangeset(file_paths=list(file_paths), diff=diff, staged=staged)
    return Call("POST", repo_path(repo, "review_changeset"), model(a.AnalysisResult), dump(body))


def as_sarif(call: Call[a.AnalysisResult]) -> Call[dict[str, Any]]:
    """The same analysis answered as a SARIF 2.1.0 log (for code scanning)."""
    return Call(call.method, call.path, document, {**call.body, "format": "sarif"}, call.params)


def review_context(repo: str, path: str) -> Call[a.ReviewContext]:
    body = s.ReviewContext(path=path)
    return Call("POST", repo_path(repo, "review_context"), model(a.ReviewContext), dump(body))


def report_findings(
    repo: str, feedback: Sequence[s.Feedback] = (), findings: Sequence[s.ExternalFinding] = ()
) -> Call[a.ReportResult]:
    body = s.ReportFindings(feedback=list(feedback), findings=list(findings))
    return Call("POST", repo_path(repo, "report_findings"), model(a.ReportResult), dump(body))


# --- read endpoints ------------------------------------------------------------------------------


def paged(limit: int | None, cursor: str) -> dict[str, Any]:
    return {**({"limit": limit} if limit else {}), **({"cursor": cursor} if cursor else {})}


def domains(repo: str) -> Call[rp.Domains]:
    return Call("GET", repo_path(repo, "domains"), model(rp.Domains))


def segments(repo: str, limit: int | None = None, cursor: str = "") -> Call[rp.Segments]:
    return Call("GET", repo_path(repo, "segments"), model(rp.Segments), params=paged(limit, cursor))


def network(repo: str, limit: int | None = None, cursor: str = "") -> Call[rp.Network]:
    return Call("GET", repo_path(repo, "network"), model(rp.Network), params=paged(limit, cursor))


def history(repo: str, path: str = "", limit: int | None = None, cursor: str = "") -> Call[rp.History]:
    params = {**paged(limit, cursor), **({"path": path} if path else {})}
    return Call("GET", repo_path(repo, "history"), model(rp.History), params=params)


def dashboard(repo: str) -> Call[a.Dashboard]:
    return Call("GET", repo_path(repo, "dashboard"), model(a.Dashboard))


def global_context(repo: str) -> Call[a.GlobalContext]:
    return Call("GET", repo_path(repo, "global_context"), model(a.GlobalContext))


# --- auth ----------------------------------------------------------------------------------------


def validate() -> Call[s.Validated]:
    return Call("GET", "/auth/validate", model(s.Validated))


def signout() -> Call[None]:
    return Call("DELETE", "/auth/signout", nothing)


def host_authorize(redirect_uri: str = "") -> Call[s.AuthorizeStart]:
    params = {"redirect_uri": redirect_uri} if redirect_uri else None
    return Call("GET", "/auth/host/authorize", model(s.AuthorizeStart), params=params)


def host_sign_in(code: str, state: str) -> Call[s.SignedIn]:
    return Call("POST", "/auth/host", model(s.SignedIn), dump(s.HostSignIn(code=code, state=state)))


# --- account -------------------------------------------------------------------------------------


def account_status(org_id: str | None = None) -> Call[acc.AccountStatus]:
    return Call("GET", "/account/status", model(acc.AccountStatus), params=org_params(org_id))


def account_usage(org_id: str | None = None) -> Call[acc.Usage]:
    return Call("GET", "/account/usage", model(acc.Usage), params=org_params(org_id))


def plans() -> Call[acc.PlanList]:
    return Call("GET", "/account/plans", model(acc.PlanList))


def checkout(body: s.Checkout) -> Call[acc.CheckoutStarted]:
    return Call("POST", "/account/checkout", model(acc.CheckoutStarted), dump(body))


def billing_portal(org_id: str | None = None) -> Call[acc.PortalSession]:
    return Call("POST", "/account/billing-portal", model(acc.PortalSession), dump(s.OrgScoped(org_id=org_id)))


def switch_plan(plan: str, org_id: str | None = None) -> Call[acc.SubscriptionResult]:
    body = s.SwitchPlan(plan=plan, org_id=org_id)
    return Call("POST", "/account/switch-plan", model(acc.SubscriptionResult), dump(body))


def cancel(org_id: str | None = None) -> Call[acc.SubscriptionResult]:
    return Call("POST", "/account/cancel", model(acc.SubscriptionResult), dump(s.OrgScoped(org_id=org_id)))


def reactivate(org_id: str | None = None) -> Call[acc.SubscriptionResult]:
    return Call("POST", "/account/reactivate", model(acc.SubscriptionResult), dump(s.OrgScoped(org_id=org_id)))


def list_tokens() -> Call[acc.TokenList]:
    return Call("GET", "/account/tokens", model(acc.TokenList))


def create_token(name: str, expires_in_days: int = 0) -> Call[acc.CreatedToken]:
    body = s.CreateToken(name=name, expires_in_days=expires_in_days)
    return Call("POST", "/account/tokens", model(acc.CreatedToken), dump(body))


def revoke_token(token_id: str) -> Call[None]:
    return Call("DELETE", f"/account/tokens/{quote(token_id, safe='')}", nothing)


def audit_preferences(org_id: str | None = None) -> Call[dict[str, Any]]:
    return Call("GET", "/account/audit-preferences", document, params=org_params(org_id))


def update_audit_preferences(patch: Mapping[str, Any], org_id: str | None = None) -> Call[dict[str, Any]]:
    return Call("PATCH", "/account/audit-preferences", document, dict(patch), params=org_params(org_id))


def audit_results(limit: int = 50) -> Call[dict[str, Any]]:
    return Call("GET", "/audit-results", document, params={"limit": limit})


# --- teams (team-admin) --------------------------------------------------------------------------


def team_path(org_id: str, *tail: str) -> str:
    return "/".join(["/teams", quote(org_id, safe=""), *(quote(t, safe="") for t in tail)])


def members(org_id: str) -> Call[acc.MemberList]:
    return Call("GET", team_path(org_id, "members"), model(acc.MemberList))


def invite(org_id: str, login: str, email: str | None = None, role: s.Role = "member") -> Call[acc.MemberResult]:
    body = s.Invite(login=login, email=email, role=role)
    return Call("POST", team_path(org_id, "invite"), model(acc.MemberResult), dump(body))


def remove_member(org_id: str, member_id: str) -> Call[None]:
    return Call("DELETE", team_path(org_id, "members", member_id), nothing)


def change_role(org_id: str, member_id: str, role: s.Role) -> Call[acc.MemberResult]:
    body = s.ChangeRole(role=role)
    return Call("PATCH", team_path(org_id, "members", member_id, "role"), model(acc.MemberResult), dump(body))


def change_seats(org_id: str, seats: int) -> Call[acc.SubscriptionResult]:
    return Call("POST", team_path(org_id, "seats"), model(acc.SubscriptionResult), dump(s.ChangeSeats(seats=seats)))
