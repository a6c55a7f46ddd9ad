"""Settings from environment variables with the one documented prefix ``CR_``.

Each service subclasses :class:`ServiceSettings` with its own fields; nothing else in
the code reads the environment.
"""

from __future__ import annotations

from functools import lru_cache
from typing import ClassVar

from pydantic import field_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

ENV_PREFIX = "CR_"


def normalize_dsn(url: str) -> str:
    """Accept the usual ``postgres://`` spellings and pin the psycopg 3 driver."""
    for prefix in ("postgres://", "postgresql://", "postgresql+psycopg2://", "postgresql+asyncpg://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


class BaseServiceSettings(BaseSettings):
    """Fields are read from ``CR_<SERVICE>_<FIELD>`` first (``CR_BILLING_DATABASE_URL``), then
    from ``CR_<FIELD>`` for what all services share (``CR_NATS_URL``)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")
    service_name: ClassVar[str] = ""

    environment: str = "development"  # development | test | staging | production
    log_level: str = "INFO"
    log_json: bool | None = None  # None: JSON when stderr is not a terminal
    # The interface every listener binds (gRPC, metrics, the gateway's HTTP): loopback for a local
    # run; the container image sets 0.0.0.0 so that a pod answers on its own address.
    bind_host: str = "127.0.0.1"
    nats_url: str = "nats://127.0.0.1:4222"
    # Prefix for stream names, so test sessions and parallel deployments never share streams.
    nats_stream_prefix: str = "CR"
    # Copies of each stream in a NATS cluster (3 on the cluster of deploy/k8s; at most its size).
    nats_stream_replicas: int = 1
    billing_addr: str = "127.0.0.1:50051"
    indexer_addr: str = "127.0.0.1:50052"
    analyzer_addr: str = "127.0.0.1:50053"
    hostapp_addr: str = "127.0.0.1:50054"
    grpc_deadline_seconds: float = 10.0

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        if not cls.service_name:
            return (init_settings, env_settings, dotenv_settings, file_secret_settings)
        scoped = EnvSettingsSource(settings_cls, env_prefix=f"{ENV_PREFIX}{cls.service_name.upper()}_")
        return (init_settings, scoped, env_settings, dotenv_settings, file_secret_settings)


class ServiceSettings(BaseServiceSettings):
    """Settings of a gRPC service that owns a database."""

    database_url: str = ""
    listen_addr: str = ""  # host:port; default: bind_host with the port of this service's *_addr
    metrics_port: int = 0  # 0: no metrics endpoint
    metrics_host: str = ""  # default: bind_host
    outbox_poll_seconds: float = 0.5

    @field_validator("database_url")
    @classmethod
    def _normalize(cls, value: str) -> str:
        return normalize_dsn(value) if value else value

    def bind_address(self) -> str:
        # Only the port comes from *_addr: other processes dial that name ("billing:50051" in a
        # cluster), which is not an interface this process can bind.
        if self.listen_addr:
            return self.listen_addr
        port = getattr(self, f"{self.service_name}_addr").rpartition(":")[2]
        return f"{bracket_ipv6(self.bind_host)}:{port}"

    def metrics_bind_host(self) -> str:
        return self.metrics_host or self.bind_host


def bracket_ipv6(host: str) -> str:
    """``::`` → ``[::]``, so that ``host:port`` stays parseable."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


@lru_cache
def base_settings() -> BaseServiceSettings:
    return BaseServiceSettings()
