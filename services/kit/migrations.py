"""Alembic, one migration history per service, run at start-up or by ``make migrate``.

Each service keeps ``migrations/`` beside its models; its ``env.py`` calls
:func:`run_alembic_env` so the environment logic exists once.
"""

from __future__ import annotations

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
        # A migration must never wait forever behind a long transaction.
        connection.exec_driver_sql("SET lock_timeout = '10s'")
        connection.commit()
        context.configure(connection=connection, target_metadata=metadata, compare_type=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()
