"""Where each listener binds: loopback by default, the pod's interfaces when the image says so."""

from __future__ import annotations

import os

import pytest

from services.billing.settings import BillingSettings
from services.gateway.settings import GatewaySettings
from services.indexer.settings import IndexerSettings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("CR_"):
            monkeypatch.delenv(key)


def test_local_defaults_stay_on_loopback() -> None:
    settings = BillingSettings()
    assert settings.bind_address() == "127.0.0.1:50051"
    assert settings.metrics_bind_host() == "127.0.0.1"
    assert GatewaySettings().listen_host() == "127.0.0.1"


def test_bind_host_moves_every_listener_but_keeps_the_dialled_port(monkeypatch: pytest.MonkeyPatch) -> None:
    # In a cluster the others dial "indexer:50052"; the indexer itself binds all interfaces on that port.
    monkeypatch.setenv("CR_BIND_HOST", "0.0.0.0")
    monkeypatch.setenv("CR_INDEXER_ADDR", "indexer:50052")
    indexer = IndexerSettings()
    assert indexer.bind_address() == "0.0.0.0:50052"
    assert indexer.metrics_bind_host() == "0.0.0.0"
    assert GatewaySettings().listen_host() == "0.0.0.0"


def test_each_listener_can_be_set_on_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CR_BIND_HOST", "::")
    monkeypatch.setenv("CR_BILLING_METRICS_HOST", "127.0.0.1")
    monkeypatch.setenv("CR_GATEWAY_HOST", "10.0.0.7")
    billing = BillingSettings()
    assert billing.bind_address() == "[::]:50051"
    assert billing.metrics_bind_host() == "127.0.0.1"
    assert GatewaySettings().listen_host() == "10.0.0.7"
    monkeypatch.setenv("CR_BILLING_LISTEN_ADDR", "127.0.0.2:6000")
    assert BillingSettings().bind_address() == "127.0.0.2:6000"
