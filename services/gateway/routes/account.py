"""Account: plan, usage, subscriptions, personal access tokens, audit preferences and results."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Body, Query, Request, Response

from services.api.account import (
    AccountStatus,
    CheckoutStarted,
    CreatedToken,
    PlanList,
    PortalSession,
    SubscriptionResult,
    TokenInfo,
    TokenList,
    Usage,
)
from services.api.analysis import AuditPreferences, AuditResults
from services.api.schemas import Checkout, CreateToken, OrgScoped, SwitchPlan
from services.api.types import from_seconds
from services.contracts.v1 import analyzer_pb2, billing_pb2, common_pb2, indexer_pb2
from services.gateway import analyzer_bodies, params
from services.gateway.clients import Clients
from services.gateway.deps import ClientsDep, PrincipalDep
from services.kit.grpc_client import call
from services.kit.identity import owner_of_user
from services.kit.messages import plain

UNLIMITED = -1  # a cap's value for "no cap" (services/billing/plans.py)
router = APIRouter(prefix="/account", tags=["account"])
audit_router = APIRouter(tags=["audit"])

OrgQuery = Query("", description="Organization id for an organization-scoped subscription", max_length=64)


# --- from billing's messages to the bodies (times there are Unix seconds; 0 = never) -----------


def subscription_result(message: billing_pb2.SubscriptionResponse) -> SubscriptionResult:
    values = plain(message.subscription)
    values["current_period_end"] = from_seconds(message.subscription.current_period_end)
    return SubscriptionResult.model_validate({"subscription": values})


def token_info(message: billing_pb2.PersonalToken) -> TokenInfo:
    times = {name: from_seconds(getattr(message, name)) for name in ("created_at", "expires_at", "last_used_at")}
    return TokenInfo.model_validate({**plain(message), **times})


def plan_list(message: billing_pb2.PlanList) -> PlanList:
    values = plain(message)
    for plan in values["plans"]:  # "" in the message is "none" in the body
        plan["price_id"] = plan["price_id"] or None
        plan["price_unavailable"] = plan["price_unavailable"] or None
    return PlanList.model_validate(values)


# --- routes ------------------------------------------------------------------------------------


@router.get(
    "/status",
    response_model=AccountStatus,
    summary="Plan, status, seats, period end, cancel flag, usage against caps (any member)",
)
async def status(principal: PrincipalDep, clients: ClientsDep, org_id: str = OrgQuery) -> AccountStatus:
    request = billing_pb2.AccountRequest(org_id=org_id)
    reply = await call(clients.billing.GetAccountStatus, request, principal=principal)
    await count_repositories(clients, principal, reply.owner, reply.usage.repositories)
    return AccountStatus.model_validate(plain(reply))


@router.get("/usage", response_model=Usage, summary="Current-period usage records (any member)")
async def usage(principal: PrincipalDep, clients: ClientsDep, org_id: str = OrgQuery) -> Usage:
    request = billing_pb2.AccountRequest(org_id=org_id)
    reply = await call(clients.billing.GetUsage, request, principal=principal)
    await count_repositories(clients, principal, reply.owner, reply.usage.repositories)
    return Usage.model_validate(plain(reply))


async def count_repositories(
    clients: Clients, principal: common_pb2.Principal, owner: str, repositories: billing_pb2.MetricUsage
) -> None:
    """Billing knows the repository cap, the indexer the repositories: the count comes from there,
    the same on every route that reports usage against caps."""
    count = indexer_pb2.CountRepositoriesRequest(owner=owner)
    used = (await call(clients.indexer.CountRepositories, count, principal=principal)).count
    repositories.used = used
    if repositories.cap != UNLIMITED:
        repositories.remaining = max(0, repositories.cap - used)


@router.get("/plans", response_model=PlanList, summary="Available plans with payment-provider price detail")
async def plans(principal: PrincipalDep, clients: ClientsDep) -> PlanList:
    return plan_list(await call(clients.billing.ListPlans, billing_pb2.ListPlansRequest(), principal=principal))


@router.post(
    "/checkout",
    response_model=CheckoutStarted,
    summary="Start a payment-provider checkout session (team-admin for an org)",
)
async def checkout(body: Checkout, principal: PrincipalDep, clients: ClientsDep) -> CheckoutStarted:
    request = billing_pb2.CheckoutRequest(**body.model_dump(exclude_none=True))
    reply = await call(clients.billing.StartCheckout, request, principal=principal, timeout=30)
    return CheckoutStarted.model_validate(plain(reply))


@router.post(
    "/billing-portal",
    response_model=PortalSession,
    summary="Open the payment-provider billing portal (team-admin for an org)",
)
async def billing_portal(principal: PrincipalDep, clients: ClientsDep, body: OrgScoped | None = None) -> PortalSession:
    request = billing_pb2.AccountRequest(org_id=(body.org_id if body else None) or "")
    reply = await call(clients.billing.OpenBillingPortal, request, principal=principal, timeout=30)
    return PortalSession.model_validate(plain(reply))


@router.post(
    "/switch-plan",
    response_model=SubscriptionResult,
    summary="Change to a different plan, prorated (team-admin for an org)",
)
async def switch_plan(body: SwitchPlan, principal: PrincipalDep, clients: ClientsDep) -> SubscriptionResult:
    request = billing_pb2.SwitchPlanRequest(**body.model_dump(exclude_none=True))
    return subscription_result(await call(clients.billing.SwitchPlan, request, principal=principal, timeout=30))


@router.post("/cancel", response_model=SubscriptionResult, summary="Cancel at period end (team-admin for an org)")
async def cancel(principal: PrincipalDep, clients: ClientsDep, body: OrgScoped | None = None) -> SubscriptionResult:
    request = billing_pb2.AccountRequest(org_id=(body.org_id if body else None) or "")
    reply = await call(clients.billing.CancelSubscription, request, principal=principal, timeout=30)
    return subscription_result(reply)


@router.post(
    "/reactivate", response_model=SubscriptionResult, summary="Undo a pending cancellation (team-admin for an org)"
)
async def reactivate(principal: PrincipalDep, clients: ClientsDep, body: OrgScoped | None = None) -> SubscriptionResult:
    request = billing_pb2.AccountRequest(org_id=(body.org_id if body else None) or "")
    reply = await call(clients.billing.ReactivateSubscription, request, principal=principal, timeout=30)
    return subscription_result(reply)


@router.get("/tokens", response_model=TokenList, summary="List personal access tokens (never their secrets)")
async def list_tokens(principal: PrincipalDep, clients: ClientsDep) -> TokenList:
    request = billing_pb2.ListPersonalTokensRequest()
    reply = await call(clients.billing.ListPersonalTokens, request, principal=principal)
    return TokenList(tokens=[token_info(t) for t in reply.tokens])


@router.post(
    "/tokens",
    status_code=201,
    response_model=CreatedToken,
    summary="Create a personal access token (the secret is shown once)",
)
async def create_token(body: CreateToken, principal: PrincipalDep, clients: ClientsDep) -> CreatedToken:
    request = billing_pb2.CreatePersonalTokenRequest(name=body.name, expires_in_days=body.expires_in_days)
    reply = await call(clients.billing.CreatePersonalToken, request, principal=principal)
    return CreatedToken(token=token_info(reply.token), secret=reply.secret)


@router.delete(
    "/tokens/{token_id}",
    status_code=204,
    response_class=Response,
    response_model=None,
    summary="Revoke a personal access token",
)
async def revoke_token(token_id: str, principal: PrincipalDep, clients: ClientsDep) -> Response:
    request = billing_pb2.RevokePersonalTokenRequest(token_id=token_id)
    await call(clients.billing.RevokePersonalToken, request, principal=principal)
    return Response(status_code=204)


def _prefs_owner(principal: Any, org_id: str) -> str:
    return f"org:{org_id}" if org_id else owner_of_user(principal.user_id)


@router.get("/audit-preferences", response_model=AuditPreferences, summary="Read audit preferences")
async def get_preferences(principal: PrincipalDep, clients: ClientsDep, org_id: str = OrgQuery) -> AuditPreferences:
    request = analyzer_pb2.PreferencesRequest(owner=_prefs_owner(principal, org_id))
    reply = await call(clients.analyzer.GetAuditPreferences, request, principal=principal)
    return analyzer_bodies.body(AuditPreferences, reply)


@router.patch(
    "/audit-preferences", response_model=AuditPreferences, summary="Update audit preferences (JSON merge patch)"
)
async def patch_preferences(
    principal: PrincipalDep,
    clients: ClientsDep,
    patch: dict[str, Any] = Body(..., examples=[{"min_severity": "warning", "ignored_paths": ["vendor/**"]}]),
    org_id: str = OrgQuery,
) -> AuditPreferences:
    request = analyzer_pb2.UpdatePreferencesRequest(owner=_prefs_owner(principal, org_id), patch=orjson.dumps(patch))
    reply = await call(clients.analyzer.UpdateAuditPreferences, request, principal=principal)
    return analyzer_bodies.body(AuditPreferences, reply)


async def _audit_results(principal: Any, clients: ClientsDep, limit: int) -> AuditResults:
    repo_ids: list[str] = []
    cursor = ""
    while True:
        listing = await call(
            clients.indexer.ListRepositories,
            indexer_pb2.ListRepositoriesRequest(page=common_pb2.PageRequest(limit=500, cursor=cursor)),
            principal=principal,
        )
        repo_ids.extend(r.id for r in listing.repositories)
        cursor = listing.page.next_cursor
        if not cursor:
            break
    request = analyzer_pb2.AuditResultsRequest(repository_ids=repo_ids, limit=limit)
    reply = await call(clients.analyzer.GetAuditResults, request, principal=principal)
    return analyzer_bodies.body(AuditResults, reply)


@audit_router.get(
    "/audit-results", response_model=AuditResults, summary="Recent audits plus a fleet-wide convention summary"
)
async def audit_results(
    principal: PrincipalDep, clients: ClientsDep, limit: int = params.limit(50, 500)
) -> AuditResults:
    return await _audit_results(principal, clients, limit)


@router.get(
    "/audit-results",
    response_model=AuditResults,
    deprecated=True,
    summary="Deprecated alias of GET /v1/audit-results (removed in /v2)",
)
async def audit_results_alias(
    request: Request,
    response: Response,
    principal: PrincipalDep,
    clients: ClientsDep,
    limit: int = params.limit(50, 500),
) -> AuditResults:
    response.headers["Deprecation"] = "true"
    response.headers["Sunset"] = request.app.state.settings.audit_alias_sunset
    response.headers["Link"] = '</v1/audit-results>; rel="successor-version"'
    return await _audit_results(principal, clients, limit)
