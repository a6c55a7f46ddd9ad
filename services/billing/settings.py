from __future__ import annotations

from typing import ClassVar

from pydantic import model_validator

from services.billing.plans import Mode, PlanConfig, default_plans
from services.kit.settings import ServiceSettings


class BillingSettings(ServiceSettings):
    service_name: ClassVar[str] = "billing"

    session_lifetime_hours: int = 24 * 14
    max_personal_tokens: int = 100

    # Code host (GitHub or a compatible server): OAuth app credentials and the two base URLs,
    # so tests and GitHub Enterprise point them elsewhere.
    host_oauth_base_url: str = "https://github.com"
    host_api_base_url: str = "https://api.github.com"
    host_client_id: str = ""
    host_client_secret: str = ""
    host_oauth_scopes: str = "read:org user:email"  # requested at authorize
    host_required_scopes: str = "read:org"  # a grant without these is oauth_failed
    oauth_redirect_uri: str = ""  # default redirect_uri when the client sends none
    oauth_state_ttl_seconds: int = 600
    host_timeout_seconds: float = 10.0

    # Payment provider (Stripe). Empty key: paid operations answer not_configured.
    stripe_api_key: str = ""
    stripe_api_base: str = ""  # empty: the SDK's default (https://api.stripe.com)
    stripe_timeout_seconds: float = 20.0
    price_cache_seconds: int = 300
    checkout_success_url: str = "http://127.0.0.1:8080/account?checkout=success"
    checkout_cancel_url: str = "http://127.0.0.1:8080/account?checkout=cancel"
    portal_return_url: str = "http://127.0.0.1:8080/account"

    # self_hosted (the default, `make run` included): one plan without caps, no payment provider
    # needed. hosted: the service sold as plans (free, pro, team). docs/accounts.md.
    mode: Mode = "self_hosted"
    # The plan catalogue: JSON in CR_BILLING_PLANS, or a YAML/JSON file in CR_BILLING_PLANS_FILE;
    # unset: the mode's default plans.
    plans: list[PlanConfig] | None = None
    plans_file: str = ""

    @property
    def catalogue_plans(self) -> list[PlanConfig]:
        return self.plans if self.plans is not None else default_plans(self.mode)

    rate_limit_window_seconds: int = 60
    # Sign-in routes carry no token: they are limited per client address instead (0 = off).
    signin_rate_limit_per_minute: int = 30
    # Failed authentications (unknown, revoked, malformed or expired tokens) per client address
    # and minute; past it they answer 429 with Retry-After (0 = off). Valid tokens are never held.
    auth_failure_limit_per_minute: int = 100

    @model_validator(mode="after")
    def _no_placeholder_secrets(self) -> BillingSettings:
        # Empty secrets switch a feature off (self-hosting without payments is fine);
        # a placeholder outside development is a deployment mistake, so refuse to start.
        if self.environment != "development":
            for name in ("host_client_secret", "stripe_api_key"):
                if getattr(self, name).lower().startswith(("changeme", "placeholder", "xxx")):
                    raise ValueError(f"CR_BILLING_{name.upper()} holds a placeholder")
        return self


def load() -> BillingSettings:
    return BillingSettings()
