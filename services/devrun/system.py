"""The five processes of the system and the environment each one needs."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from services.devrun.infra import SERVICES_WITH_DB, database_url, free_port

ROOT = Path(__file__).resolve().parents[2]
GRPC_SERVICES = SERVICES_WITH_DB  # every gRPC service owns a database
MODULES = {
    "billing": "services.billing.main",
    "indexer": "services.indexer.main",
    "analyzer": "services.analyzer.main",
    "hostapp": "services.hostapp.main",
    "gateway": "services.gateway.main",
}


@dataclass
class SystemLayout:
    """Addresses and settings shared by every process of one running system."""

    nats_url: str
    database_urls: dict[str, str]
    stream_prefix: str = "CR"
    gateway_port: int = 0
    grpc_ports: dict[str, int] = field(default_factory=dict)
    metrics_ports: dict[str, int] = field(default_factory=dict)
    data_dir: Path = ROOT / ".run" / "data"
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.gateway_port = self.gateway_port or free_port()
        for name in GRPC_SERVICES:
            self.grpc_ports.setdefault(name, free_port())
            self.metrics_ports.setdefault(name, free_port())

    @classmethod
    def on_server(cls, server_url: str, nats_url: str, db_prefix: str = "codereview", **kw: object) -> SystemLayout:
        urls = {name: database_url(server_url, f"{db_prefix}_{name}") for name in SERVICES_WITH_DB}
        return cls(nats_url=nats_url, database_urls=urls, **kw)  # type: ignore[arg-type]

    @property
    def gateway_url(self) -> str:
        return f"http://127.0.0.1:{self.gateway_port}"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("CR_GATEWAY_BASE_URL", f"{self.gateway_url}/v1")
        # The payment provider sends the user back to the dashboard's Account page on this gateway.
        account = f"{self.gateway_url}/account"
        env.setdefault("CR_BILLING_CHECKOUT_SUCCESS_URL", f"{account}?checkout=success")
        env.setdefault("CR_BILLING_CHECKOUT_CANCEL_URL", f"{account}?checkout=cancel")
        env.setdefault("CR_BILLING_PORTAL_RETURN_URL", account)
        env.update(
            {
                "CR_NATS_URL": self.nats_url,
                "CR_NATS_STREAM_PREFIX": self.stream_prefix,
                "CR_GATEWAY_PORT": str(self.gateway_port),
                "CR_DATA_DIR": str(self.data_dir),
                "PYTHONUNBUFFERED": "1",
            }
        )
        for name in GRPC_SERVICES:
            env[f"CR_{name.upper()}_ADDR"] = f"127.0.0.1:{self.grpc_ports[name]}"
            env[f"CR_{name.upper()}_METRICS_PORT"] = str(self.metrics_ports[name])
        for name, url in self.database_urls.items():
            env[f"CR_{name.upper()}_DATABASE_URL"] = url
        env.update(self.extra_env)
        return env

    def command(self, name: str) -> list[str]:
        return [sys.executable, "-m", MODULES[name]]
