"""``python -m services.devrun run|migrate``: the README's ``make run``."""

from __future__ import annotations

import os
import shlex
import signal
import sys
import threading
import time
from pathlib import Path

import httpx
import typer

from services.devrun.infra import SERVICES_WITH_DB, EmbeddedNats, EmbeddedPostgres, create_databases
from services.devrun.system import MODULES, ROOT, SystemLayout
from services.kit import migrations

app = typer.Typer(add_completion=False, help=__doc__)
RUN_DIR = ROOT / ".run"


def _configured_database_urls() -> dict[str, str]:
    return {
        name: os.environ[f"CR_{name.upper()}_DATABASE_URL"]
        for name in SERVICES_WITH_DB
        if os.environ.get(f"CR_{name.upper()}_DATABASE_URL")
    }


def _prepare(stack: list) -> SystemLayout:
    """Use configured addresses; start embedded servers for whatever is missing."""
    urls = _configured_database_urls()
    server = os.environ.get("CR_POSTGRES_URL", "")
    if len(urls) < len(SERVICES_WITH_DB):
        if not server:
            pg = EmbeddedPostgres(RUN_DIR / "postgres")
            typer.echo(f"starting embedded PostgreSQL on 127.0.0.1:{pg.port} ({pg.datadir})")
            server = pg.start()
            stack.append(pg.stop)
        names = {name: f"codereview_{name}" for name in SERVICES_WITH_DB if name not in urls}
        create_databases(server, list(names.values()))
        base = server.rpartition("/")[0]
        urls.update({name: f"{base}/{db}" for name, db in names.items()})
    nats_url = os.environ.get("CR_NATS_URL", "")
    if not nats_url:
        nats = EmbeddedNats(RUN_DIR / "nats")
        typer.echo(f"starting embedded NATS with JetStream on 127.0.0.1:{nats.port}")
        nats_url = nats.start()
        stack.append(nats.stop)
    port = int(os.environ.get("CR_GATEWAY_PORT", "0") or 0)
    # A local run may index repositories under the user's home unless told otherwise.
    extra = {} if os.environ.get("CR_INDEXER_ALLOWED_ROOTS") else {"CR_INDEXER_ALLOWED_ROOTS": str(Path.home())}
    return SystemLayout(
        nats_url=nats_url, database_urls=urls, gateway_port=port, data_dir=RUN_DIR / "data", extra_env=extra
    )


def _migrate(layout: SystemLayout) -> None:
    for name, url in layout.database_urls.items():
        migrations.upgrade(ROOT / "services" / name, url)
        typer.echo(f"migrated {name}")


def _announce_when_ready(url: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                print(f"\n  gateway ready: {url}\n  (Ctrl-C stops everything)\n", flush=True)
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    print("gateway did not answer within 120 s; see the logs above", flush=True)


@app.command()
def run() -> None:
    """Start infrastructure, migrate, and run the five services until Ctrl-C."""
    from honcho.manager import Manager

    RUN_DIR.mkdir(exist_ok=True)
    stack: list = []
    try:
        layout = _prepare(stack)
        _migrate(layout)
        manager = Manager()
        env = layout.env()
        (RUN_DIR / "system.env").write_text(
            "".join(f"{k}={v}\n" for k, v in sorted(env.items()) if k.startswith("CR_"))
        )
        for name in MODULES:
            manager.add_process(name, shlex.join(layout.command(name)), env=env, quiet=False)
        threading.Thread(target=_announce_when_ready, args=(layout.gateway_url,), daemon=True).start()
        manager.loop()
        code = manager.returncode or 0
    finally:
        for stop in reversed(stack):
            stop()
    raise typer.Exit(code)


@app.command()
def migrate() -> None:
    """Run every service's migrations against the configured (or embedded) databases."""
    stack: list = []
    try:
        _migrate(_prepare(stack))
    finally:
        for stop in reversed(stack):
            stop()


@app.command()
def revision(service: str, message: str) -> None:
    """Autogenerate a migration for SERVICE against a scratch database (developers)."""
    from alembic import command

    from services.devrun.infra import drop_databases

    server = os.environ.get("CR_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    scratch = f"scratch_{service}_{os.getpid()}"
    create_databases(server, [scratch])
    url = server.rpartition("/")[0] + "/" + scratch
    try:
        migrations.upgrade(ROOT / "services" / service, url)
        cfg = migrations.alembic_config(ROOT / "services" / service, url)
        stamp = time.strftime("%Y%m%d_%H%M%S")
        command.revision(cfg, message=message, autogenerate=True, rev_id=stamp)
    finally:
        drop_databases(server, [scratch])


def main() -> None:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.path.insert(0, str(Path(ROOT)))
    app()


if __name__ == "__main__":
    main()
