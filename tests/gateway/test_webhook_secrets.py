"""Outside development the gateway refuses to start without its webhook secrets (issue #19);
"off" switches a receiver off on purpose."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from services.gateway.settings import GatewaySettings


def test_production_without_webhook_secrets_refuses_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CR_ENVIRONMENT", "production")
    monkeypatch.delenv("CR_GATEWAY_CODE_HOST_WEBHOOK_SECRET", raising=False)
    monkeypatch.setenv("CR_GATEWAY_PAYMENT_WEBHOOK_SECRET", "whsec_x")
    with pytest.raises(ValidationError, match="CR_GATEWAY_CODE_HOST_WEBHOOK_SECRET must be set outside development"):
        GatewaySettings()


def test_off_turns_a_receiver_off_and_development_is_lenient(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CR_ENVIRONMENT", "staging")
    monkeypatch.setenv("CR_GATEWAY_CODE_HOST_WEBHOOK_SECRET", "s3cret")
    monkeypatch.setenv("CR_GATEWAY_PAYMENT_WEBHOOK_SECRET", "off")
    settings = GatewaySettings()
    assert (settings.code_host_webhook_secret, settings.payment_webhook_secret) == ("s3cret", "")
    monkeypatch.setenv("CR_ENVIRONMENT", "development")
    monkeypatch.delenv("CR_GATEWAY_CODE_HOST_WEBHOOK_SECRET")
    assert GatewaySettings().code_host_webhook_secret == ""
