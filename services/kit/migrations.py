"""Alembic, one migration history per service, run at start-up, by ``make migrate``, or by
``python -m services.kit.migrations SERVICE`` (a cluster's init container).

Each service keeps ``migrations/`` beside its models; its ``env.py`` calls
:func:`run_alembic_env` so the environment logic exists once.
"""

from __future__ import annotations

import sys
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import MetaData, create_engine, pool


def alembic_config(service_dir: Path, database_url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(service_dir / "migrations"))
    cfg.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    cfg.attributes["configure_logging"] = False
    return cfg


def upgrade(service_dir: Path, database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(service_dir, database_url), revision)


def run_alembic_env(metadata: MetaData) -> None:
    """Body of every service's ``env.py`` (online mode only: we always have a database)."""
    from alembic import context

    url = context.config.get_main_option("sqlalchemy.url") or ""
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        # Replicas starting together migrate one after another (the lock is per database and held
        # until this connection closes); taken before lock_timeout, which would cut the wait short.
        connection.exec_driver_sql("SELECT pg_advisory_lock(hashtext('codereview-migrations'))")
        connection.commit()
        # A migration must never wait forever behind a long transaction.
        connection.exec_driver_sql("SET lock_timeout = '10s'")
        connection.commit()
        context.configure(connection=connection, target_metadata=metadata, compare_type=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


def main(argv: list[str]) -> int:
    """Upgrade one service's database, read from ``CR_<SERVICE>_DATABASE_URL``."""
    from services.kit.settings import ServiceSettings

    services_dir = Path(__file__).resolve().parents[1]
    if len(argv) != 1 or not (services_dir / argv[0] / "migrations").is_dir():
        sys.stderr.write("usage: python -m services.kit.migrations billing|indexer|analyzer|hostapp\n")
        return 2
    name = argv[0]
    settings = type(f"{name}Settings", (ServiceSettings,), {"service_name": name})()
    if not settings.database_url:
        sys.stderr.write(f"CR_{name.upper()}_DATABASE_URL is not set\n")
        return 2
    upgrade(services_dir / name, settings.database_url)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
