from __future__ import annotations

from services.devrun.system import SystemLayout


def test_the_payment_provider_returns_to_the_dashboards_account_page_on_this_gateway() -> None:
    layout = SystemLayout(nats_url="nats://127.0.0.1:4222", database_urls={}, stream_prefix="T", gateway_port=18123)
    env = layout.env()
    assert env["CR_BILLING_CHECKOUT_SUCCESS_URL"] == "http://127.0.0.1:18123/account?checkout=success"
    assert env["CR_BILLING_CHECKOUT_CANCEL_URL"] == "http://127.0.0.1:18123/account?checkout=cancel"
    assert env["CR_BILLING_PORTAL_RETURN_URL"] == "http://127.0.0.1:18123/account"
