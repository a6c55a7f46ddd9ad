from __future__ import annotations

from functools import lru_cache
from typing import Any, ClassVar

from pydantic import model_validator

from services.kit.settings import BaseServiceSettings

WEBHOOK_SECRETS = ("code_host_webhook_secret", "payment_webhook_secret")
# Where a missing webhook secret is tolerated (its receiver refuses every delivery); anywhere
# else the gateway refuses to start, so a deployment cannot silently answer 401 to everything.
LENIENT_ENVIRONMENTS = frozenset({"development", "test"})


class GatewaySettings(BaseServiceSettings):
    service_name: ClassVar[str] = "gateway"

    host: str = ""  # default: bind_host
    port: int = 8080
    # Public addresses, as the spec names them ({base_url}, {staging_base_url}); both end in /v1.
    base_url: str = "http://127.0.0.1:8080/v1"
    staging_base_url: str = ""
    # Webhook secrets: empty means the receiver refuses every delivery (fail closed). Outside
    # development both must be set; the value "off" turns a receiver off on purpose.
    code_host_webhook_secret: str = ""
    payment_webhook_secret: str = ""
    payment_signature_tolerance_seconds: int = 300
    max_body_bytes: int = 20 * 1024 * 1024
    # Retry-After (seconds) on 503 service_unavailable: a database or a backing service is down.
    unavailable_retry_after_seconds: int = 5
    # Proxies whose X-Forwarded-For names the client (comma-separated, or "*"): the address that
    # sign-in is rate-limited by. Anything else is the connection's own peer.
    forwarded_allow_ips: str = "127.0.0.1"
    # The deprecated /v1/account/audit-results alias: its Sunset header (RFC 8594, HTTP date).
    audit_alias_sunset: str = "Wed, 30 Jun 2027 00:00:00 GMT"
    # Validated principals kept per process (docs/accounts.md, "Revocation"): billing's events drop
    # them at once; this lifetime only bounds an event path that failed without a disconnect.
    principal_cache_seconds: float = 5.0
    principal_cache_entries: int = 10_000
    # Repository listings kept per process (docs/accounts.md, "Cached listings"): the indexer's events drop them
    # at once; this lifetime only bounds an event path that failed without a disconnect.
    repository_list_cache_seconds: float = 5.0
    repository_list_cache_entries: int = 1_000
    # Rate budget drawn from billing per scope: 1/share of the tightest limit, at most max_batch.
    rate_budget_share: int = 20
    rate_budget_max_batch: int = 100
    # Worker processes (docs/configuration.md, "Gateway workers"); 0: one per CPU this process may use.
    workers: int = 0
    # AI proxy upstream (OpenAI-compatible); empty: /v1/ai/chat answers not_configured.
    ai_upstream_url: str = ""
    ai_upstream_key: str = ""
    ai_default_model: str = "gpt-4o-mini"

    @model_validator(mode="before")
    @classmethod
    def _webhook_secrets_outside_development(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        environment = str(data.get("environment") or "development")
        missing = [name for name in WEBHOOK_SECRETS if not str(data.get(name) or "").strip()]
        if missing and environment not in LENIENT_ENVIRONMENTS:
            names = ", ".join(f"CR_GATEWAY_{name.upper()}" for name in missing)
            raise ValueError(f"{names} must be set outside development (the value 'off' turns that receiver off)")
        return {**data, **{name: "" for name in WEBHOOK_SECRETS if str(data.get(name) or "").strip() == "off"}}

    def listen_host(self) -> str:
        return self.host or self.bind_host


@lru_cache
def load() -> GatewaySettings:
    return GatewaySettings()
