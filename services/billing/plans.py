"""The plan catalogue, from configuration: a free plan and paid plans tied to provider prices,
each with usage caps, seat bounds and rate limits.

Two deployment modes give the defaults: ``self_hosted`` (one plan, no caps, rate limits sized to
protect the server) and ``hosted`` (the service sold as plans). An operator's own catalogue
(``CR_BILLING_PLANS`` / ``CR_BILLING_PLANS_FILE``) replaces either.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field

from services.kit.errors import ServiceError

FREE_PLAN = "free"
# Provider statuses in which the subscribed plan applies; past_due keeps it while the provider retries.
LIVE_STATUSES = ("active", "trialing", "past_due")
METRICS = ("analyses", "repositories", "ai_tokens")
UNLIMITED = -1


class PlanConfig(BaseModel):
    id: str = Field(..., pattern=r"^[a-z0-9][a-z0-9_-]{0,39}$")
    name: str
    price_id: str = ""  # the provider's price; empty only for the free plan
    trial_days: int = 0
    # Per billing period (calendar month on free); -1 unlimited, 0 = the plan lacks the feature.
    caps: dict[str, int] = Field(default_factory=dict)
    max_seats: int = UNLIMITED
    rate_limit_per_minute: int = 120  # per token; 0 = unlimited
    org_rate_limit_per_minute: int = 600  # per organization, shared by its members; 0 = unlimited

    @property
    def paid(self) -> bool:
        """Every plan but free costs money, whether or not this deployment has a price for it."""
        return self.id != FREE_PLAN

    @property
    def priced(self) -> bool:
        """The deployment tied it to a provider price: it can be bought here."""
        return bool(self.price_id)

    def cap(self, metric: str) -> int:
        return self.caps.get(metric, UNLIMITED)


Mode = Literal["self_hosted", "hosted"]

# A self-hosted install sells nothing: every account has everything, and the rate limits only keep
# one token (a runaway script) or one organization from starving the server: 20 and 100 requests a
# second, far above what a person, the CLI or an editor agent sends.
SELF_HOSTED_PLANS = [
    PlanConfig(
        id="free",
        name="Self-hosted",
        caps={metric: UNLIMITED for metric in METRICS},
        max_seats=UNLIMITED,
        rate_limit_per_minute=1200,
        org_rate_limit_per_minute=6000,
    ),
]

HOSTED_PLANS = [
    PlanConfig(
        id="free",
        name="Free",
        caps={"analyses": 200, "repositories": 3, "ai_tokens": 0},
        max_seats=5,
        rate_limit_per_minute=120,
        org_rate_limit_per_minute=600,
    ),
    PlanConfig(
        id="pro",
        name="Pro",
        price_id="",  # set through CR_BILLING_PLANS for a deployment that charges
        trial_days=14,
        caps={"analyses": 5000, "repositories": 50, "ai_tokens": 2_000_000},
        rate_limit_per_minute=600,
        org_rate_limit_per_minute=3000,
    ),
    PlanConfig(
        id="team",
        name="Team",
        price_id="",
        trial_days=14,
        caps={"analyses": 50_000, "repositories": 500, "ai_tokens": 20_000_000},
        rate_limit_per_minute=1200,
        org_rate_limit_per_minute=12000,
    ),
]


def default_plans(mode: Mode) -> list[PlanConfig]:
    return HOSTED_PLANS if mode == "hosted" else SELF_HOSTED_PLANS


def effective_plan_id(plan: str, status: str) -> str:
    return plan if status in LIVE_STATUSES else FREE_PLAN


class Catalogue:
    """Plans in their configured order, which is also their rank (later = better)."""

    def __init__(self, plans: list[PlanConfig]) -> None:
        ids = [p.id for p in plans]
        if len(set(ids)) != len(ids):
            raise ValueError("plan ids must be unique")
        if FREE_PLAN not in ids:
            raise ValueError("the catalogue needs a plan with id 'free'")
        if self_free_price := next((p.price_id for p in plans if p.id == FREE_PLAN), ""):
            raise ValueError(f"the free plan cannot have a price ({self_free_price})")
        prices = [p.price_id for p in plans if p.price_id]
        if len(set(prices)) != len(prices):
            raise ValueError("a price belongs to one plan")
        self.plans = plans
        self._by_id = {p.id: p for p in plans}
        self._by_price = {p.price_id: p for p in plans if p.price_id}
        self._rank = {p.id: i for i, p in enumerate(plans)}

    @classmethod
    def from_settings(cls, plans: list[PlanConfig], plans_file: str = "") -> Catalogue:
        if plans_file:
            text = Path(plans_file).read_text()
            raw = json.loads(text) if plans_file.endswith(".json") else yaml.safe_load(text)
            plans = [PlanConfig.model_validate(p) for p in (raw.get("plans", raw) if isinstance(raw, dict) else raw)]
        return cls(plans)

    @property
    def free(self) -> PlanConfig:
        return self._by_id[FREE_PLAN]

    def get(self, plan_id: str) -> PlanConfig:
        """The plan, or free for an id the configuration no longer has."""
        return self._by_id.get(plan_id) or self.free

    def known(self, plan_id: str) -> PlanConfig | None:
        return self._by_id.get(plan_id)

    def by_price(self, price_id: str) -> PlanConfig | None:
        return self._by_price.get(price_id)

    def best(self, plan_ids: list[str]) -> PlanConfig:
        known = [self._by_id[p] for p in plan_ids if p in self._by_id]
        return max(known, key=lambda p: self._rank[p.id], default=self.free)

    def paid_plan(self, plan_id: str) -> PlanConfig:
        """A plan one can subscribe to, or the error that says why not."""
        plan = self._by_id.get(plan_id)
        if plan is None:
            raise ServiceError("validation_failed", f"unknown plan {plan_id!r}", {"field": "plan"})
        if plan.id == FREE_PLAN:
            raise ServiceError(
                "validation_failed", "the free plan needs no subscription; cancel instead", {"field": "plan"}
            )
        if not plan.priced:
            raise ServiceError("not_configured", f"plan {plan_id!r} has no provider price in this deployment")
        return plan
