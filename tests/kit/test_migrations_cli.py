"""``python -m services.kit.migrations SERVICE``: what a cluster's init containers run, often
several replicas at once against one database."""

from __future__ import annotations

import os
import subprocess
import sys

import psycopg
from alembic.script import ScriptDirectory

from services.devrun.infra import create_databases
from services.kit.migrations import alembic_config
from tests.conftest import ROOT, DatabaseFactory


def test_replicas_migrating_together_all_succeed_and_reach_head(databases: DatabaseFactory) -> None:
    name = f"migrate_cli_{os.getpid()}"
    create_databases(databases.server_url, [name], recreate=True)
    databases.created.append(name)
    url = databases.url(name)
    env = {**os.environ, "CR_HOSTAPP_DATABASE_URL": url}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "services.kit.migrations", "hostapp"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=120)[0].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outputs
    head = ScriptDirectory.from_config(alembic_config(ROOT / "services" / "hostapp", url)).get_current_head()
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(head,)]


def test_unknown_service_or_missing_url_is_a_usage_error() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CR_")}
    for args in (["nosuch"], [], ["billing"]):
        proc = subprocess.run(
            [sys.executable, "-m", "services.kit.migrations", *args], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert proc.returncode == 2, proc.stderr
        assert ("usage:" in proc.stderr) or ("CR_BILLING_DATABASE_URL is not set" in proc.stderr)
