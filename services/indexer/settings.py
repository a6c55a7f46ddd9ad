"""Settings of the indexer (``CR_INDEXER_*``, falling back to the shared ``CR_*``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

from services.indexer.git.urls import parse_origins
from services.kit.settings import ServiceSettings


class IndexerSettings(ServiceSettings):
    service_name: ClassVar[str] = "indexer"

    # Where mirrors live (``<data_dir>/indexer/mirrors``); shared with other services as CR_DATA_DIR.
    data_dir: str = ".run/data"
    # Registering a server-side path is the operator's decision (docs/indexing.md). Any user may
    # register local repositories under these directories (colon-separated)...
    allowed_roots: str = ""
    # ...and an organization's repositories also under its own: JSON {"<org id>": "/srv/a:/srv/b"}.
    org_roots: dict[str, str] = {}
    # Transports a user-supplied clone URL may use (comma-separated subset of https,http,ssh,git).
    allowed_url_schemes: str = "https"
    # Clone URLs use their scheme's default port (443 for https). These origins, comma-separated
    # "host[:port]" (no port = the default one), may also use another port and private addresses:
    # "git.corp.example:8443,10.0.0.7". Everything else: public addresses, default port only.
    allowed_clone_origins: str = ""
    # Intranet installs may clone from any private address; off by default (SSRF).
    allow_private_hosts: bool = False

    history_depth: int = 2000  # commits read from the log for history statistics
    max_file_bytes: int = 1_000_000  # larger files are recorded as skipped "oversized"
    max_files: int = 200_000  # a tree with more entries fails the run
    max_repository_bytes: int = 4 * 1024 * 1024 * 1024
    clone_timeout_seconds: float = 900.0
    workers: int = 0  # extraction processes; 0 = one per core
    batch_files: int = 128  # files per extraction task
    batch_bytes: int = 4 * 1024 * 1024  # or this many blob bytes, whichever comes first
    # Repositories whose last index state this process keeps for incremental runs (delta.py);
    # 0 turns indexing by delta off (every incremental run loads from the database).
    state_cache_repositories: int = 2

    # The job queue: JetStream redelivers a job whose worker stopped heartbeating after ack_wait.
    job_ack_wait_seconds: float = 20.0
    heartbeat_seconds: float = 4.0
    progress_seconds: float = 1.0  # how often a running index publishes files done / total and phase
    lease_seconds: float = 20.0  # a run whose lease is older than this is presumed dead
    max_attempts: int = 3  # a run fails after this many claimed attempts
    run_timeout_seconds: float = 3600.0  # one attempt; then the run fails with "timeout"
    reaper_interval_seconds: float = 5.0
    requeue_after_seconds: float = 120.0  # a queued run nobody claimed gets its job republished
    hostapp_timeout_seconds: float = 10.0

    def roots(self, owner: str = "") -> list[str]:
        """The roots a repository of ``owner`` ("org:<id>" or "user:<id>") may live under."""
        kind, _, ident = owner.partition(":")
        own = self.org_roots.get(ident, "") if kind == "org" else ""
        return [r for r in (*self.allowed_roots.split(os.pathsep), *own.split(os.pathsep)) if r.strip()]

    def clone_origins(self) -> frozenset[tuple[str, int | None]]:
        return parse_origins(self.allowed_clone_origins)

    def url_schemes(self) -> tuple[str, ...]:
        return tuple(s.strip().lower() for s in self.allowed_url_schemes.split(",") if s.strip())

    def mirrors_dir(self) -> Path:
        return Path(self.data_dir).absolute() / "indexer" / "mirrors"

    def worker_count(self) -> int:
        return self.workers or max(1, os.cpu_count() or 1)

    def sync_dsn(self) -> str:
        """The database URL for plain psycopg (worker processes, COPY)."""
        return self.database_url.replace("postgresql+psycopg://", "postgresql://", 1)


def load() -> IndexerSettings:
    return IndexerSettings()
