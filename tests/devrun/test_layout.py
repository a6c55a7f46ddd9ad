from __future__ import annotations

from pathlib import Path

from services.devrun import webhook_secrets
from services.devrun.system import SystemLayout


def test_the_payment_provider_returns_to_the_dashboards_account_page_on_this_gateway() -> None:
    layout = SystemLayout(nats_url="nats://127.0.0.1:4222", database_urls={}, stream_prefix="T", gateway_port=18123)
    env = layout.env()
    assert env["CR_BILLING_CHECKOUT_SUCCESS_URL"] == "http://127.0.0.1:18123/account?checkout=success"
    assert env["CR_BILLING_CHECKOUT_CANCEL_URL"] == "http://127.0.0.1:18123/account?checkout=cancel"
    assert env["CR_BILLING_PORTAL_RETURN_URL"] == "http://127.0.0.1:18123/account"


def test_webhook_secrets_are_generated_once_kept_private_and_environment_wins(tmp_path: Path) -> None:

    first, generated = webhook_secrets.ensure(tmp_path, {})
    assert sorted(generated) == sorted(webhook_secrets.VARIABLES)
    assert len(first["CR_GATEWAY_CODE_HOST_WEBHOOK_SECRET"]) == 64
    assert first["CR_GATEWAY_PAYMENT_WEBHOOK_SECRET"].startswith("whsec_")
    kept = tmp_path / webhook_secrets.FILE_NAME
    assert kept.stat().st_mode & 0o777 == 0o600
    again, generated = webhook_secrets.ensure(tmp_path, {})
    assert (again, generated) == (first, [])
    mine, _ = webhook_secrets.ensure(tmp_path, {"CR_GATEWAY_CODE_HOST_WEBHOOK_SECRET": "mine"})
    assert mine["CR_GATEWAY_CODE_HOST_WEBHOOK_SECRET"] == "mine"
    text = webhook_secrets.describe(first, [], tmp_path)
    assert first["CR_GATEWAY_CODE_HOST_WEBHOOK_SECRET"] in text
    assert str(kept) in text
