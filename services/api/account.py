"""Response bodies of the account and team routes: plans, status, usage, subscriptions, checkout,
tokens, members and invitations (docs/accounts.md).

Counts are JSON integers and times RFC 3339 UTC strings (``services.api.types``); a time the
account does not have (no subscription, a token that never expires) is ``null``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from services.api.schemas import Role
from services.api.types import Count, Timestamp

# --- plans ---------------------------------------------------------------------------------------


class Price(BaseModel):
    """The payment provider's price, the fields shown; amounts in the currency's smallest unit."""

    id: str
    currency: str
    unit_amount: int | None = Field(None, description="null for tiered prices")
    unit_amount_decimal: str | None = None
    billing_scheme: str
    product: str
    nickname: str | None = None
    active: bool
    interval: str | None = Field(None, description="month, year, ...; null for one-time prices")
    interval_count: int | None = None


class MetricCaps(BaseModel):
    """Per billing period; -1 unlimited, 0 = the plan lacks the feature."""

    analyses: int
    repositories: int
    ai_tokens: int


class Plan(BaseModel):
    id: str
    name: str
    paid: bool
    price_id: str | None = Field(description="The provider's price; null for free or a plan not priced here")
    price: Price | None = Field(description="null: free, or no price to show (price_unavailable says why)")
    price_available: bool
    price_unavailable: Literal["no_price_configured", "payments_not_configured", "provider_unreachable"] | None = Field(
        description="Why a paid plan shows no price; checkout works only when this is null"
    )
    trial_days: Count
    caps: MetricCaps
    max_seats: int = Field(description="-1 unlimited")
    rate_limit_per_minute: Count = Field(description="Per token; 0 unlimited")
    org_rate_limit_per_minute: Count = Field(description="Per organization; 0 unlimited")


class PlanList(BaseModel):
    plans: list[Plan]
    currency_note: str


# --- status and usage ----------------------------------------------------------------------------


class MetricUsage(BaseModel):
    used: Count | None = Field(description="null for repositories until counted")
    cap: int = Field(description="-1 unlimited")
    remaining: Count | None = Field(description="null when unlimited")


class UsageAgainstCaps(BaseModel):
    analyses: MetricUsage
    repositories: MetricUsage
    ai_tokens: MetricUsage


class RateLimits(BaseModel):
    per_minute: Count = Field(description="Per token; 0 unlimited")
    org_per_minute: Count = Field(description="Per organization; 0 unlimited")


class AccountStatus(BaseModel):
    owner: str = Field(description="user:<id> or org:<id>")
    plan: str = Field(description="The plan subscribed to")
    plan_name: str
    effective_plan: str = Field(description="The plan whose caps apply (free unless the subscription is live)")
    status: str
    seats: Count
    current_period_end: Timestamp | None = Field(description="null without a subscription")
    cancel_at_period_end: bool
    trial_end: Timestamp | None
    trial_used: bool
    customer_linked: bool
    rate_limit: RateLimits
    period_start: Timestamp = Field(description="The usage period: the provider's, or the calendar month")
    period_end: Timestamp
    usage: UsageAgainstCaps


class UsageRecord(BaseModel):
    id: str
    metric: str = Field(description="analyses or ai_tokens")
    amount: Count
    source_id: str = Field(description="The audit id, or the AI call's request id")
    detail: str
    user_id: str
    occurred_at: Timestamp


class Usage(BaseModel):
    owner: str
    plan: str = Field(description="The effective plan")
    period_start: Timestamp
    period_end: Timestamp
    usage: UsageAgainstCaps
    records: list[UsageRecord] = Field(description="The period's records, at most 1000")
    truncated: bool


# --- subscriptions -------------------------------------------------------------------------------


class SubscriptionInfo(BaseModel):
    plan: str
    status: str
    seats: Count
    current_period_end: Timestamp | None = Field(description="null without a paid subscription")
    cancel_at_period_end: bool
    customer_id: str
    owner: str


class SubscriptionResult(BaseModel):
    subscription: SubscriptionInfo


class CheckoutStarted(BaseModel):
    id: str
    url: str | None = Field(description="The provider's hosted checkout page")
    expires_at: Timestamp | None
    plan: str
    seats: Count
    trial_days: Count


class PortalSession(BaseModel):
    id: str | None
    url: str | None
    return_url: str | None


# --- personal access tokens ----------------------------------------------------------------------


class TokenInfo(BaseModel):
    id: str
    name: str
    prefix: str = Field(description="The token's first characters, for recognition")
    created_at: Timestamp
    expires_at: Timestamp | None = Field(description="null = never")
    last_used_at: Timestamp | None = Field(description="Updated at most once a minute; null = never used")


class TokenList(BaseModel):
    tokens: list[TokenInfo]


class CreatedToken(BaseModel):
    token: TokenInfo
    secret: str = Field(description="The token itself (crp_...), shown only in this response")


# --- teams ---------------------------------------------------------------------------------------


class MemberInfo(BaseModel):
    id: str = Field(description="Membership id (the :id of the member routes)")
    user_id: str
    login: str
    email: str
    role: Role
    status: Literal["active", "invited"]
    joined_at: Timestamp = Field(description="When the membership (or invitation) was created")


class MemberList(BaseModel):
    members: list[MemberInfo]
    seats: Count


class MemberResult(BaseModel):
    member: MemberInfo


class InvitationInfo(BaseModel):
    org_id: str
    org_name: str
    role: Role
    status: Literal["invited", "active"]
    invited_at: Timestamp


class InvitationList(BaseModel):
    invitations: list[InvitationInfo]


class InvitationResult(BaseModel):
    invitation: InvitationInfo
