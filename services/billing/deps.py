"""What billing's rules need besides a session, built once per process."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from services.billing.codehost import CodeHost
from services.billing.payments import Payments
from services.billing.plans import Catalogue
from services.billing.settings import BillingSettings
from services.kit.db import Database


def _nothing() -> None:
    return None


@dataclass
class BillingDeps:
    db: Database
    settings: BillingSettings
    catalogue: Catalogue
    payments: Payments
    host: CodeHost
    # Wakes the outbox relay after a commit that staged events (tests leave it a no-op).
    wake: Callable[[], None] = field(default=_nothing)

    @classmethod
    def build(cls, db: Database, settings: BillingSettings, wake: Callable[[], None] | None = None) -> BillingDeps:
        s = settings
        return cls(
            db=db,
            settings=s,
            catalogue=Catalogue.from_settings(s.catalogue_plans, s.plans_file),
            payments=Payments(
                s.stripe_api_key, s.stripe_api_base, timeout=s.stripe_timeout_seconds, price_ttl=s.price_cache_seconds
            ),
            host=CodeHost(
                s.host_oauth_base_url,
                s.host_api_base_url,
                s.host_client_id,
                s.host_client_secret,
                scopes=s.host_oauth_scopes,
                required_scopes=s.host_required_scopes,
                timeout=s.host_timeout_seconds,
            ),
            wake=wake or _nothing,
        )
