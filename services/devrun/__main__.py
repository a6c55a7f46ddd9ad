"""``python -m services.devrun run|migrate``: the README's ``make run``."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import FrameType

import httpx
import typer

from services.devrun import webhook_secrets
from services.devrun.infra import SERVICES_WITH_DB, EmbeddedNats, EmbeddedPostgres, create_databases, stable_port
from services.devrun.supervisor import Program, Supervisor
from services.devrun.system import MODULES, ROOT, SystemLayout
from services.kit import migrations

app = typer.Typer(add_completion=False, help=__doc__)
# CR_RUN_DIR lets tests (and a second checkout's run) keep their state apart.
RUN_DIR = Path(os.environ.get("CR_RUN_DIR") or ROOT / ".run")
FIRST_GATEWAY_PORT = 8080


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
    host = os.environ.get("CR_GATEWAY_HOST") or os.environ.get("CR_BIND_HOST") or "127.0.0.1"
    port = int(os.environ.get("CR_GATEWAY_PORT", "0") or 0) or stable_port(
        RUN_DIR / "gateway.port", FIRST_GATEWAY_PORT, host
    )
    # A local run may index repositories under the user's home unless told otherwise.
    extra = {} if os.environ.get("CR_INDEXER_ALLOWED_ROOTS") else {"CR_INDEXER_ALLOWED_ROOTS": str(Path.home())}
    secrets, generated = webhook_secrets.ensure(RUN_DIR)
    extra.update(secrets)
    typer.echo(webhook_secrets.describe(secrets, generated, RUN_DIR))
    return SystemLayout(
        nats_url=nats_url,
        database_urls=urls,
        stream_prefix=os.environ.get("CR_NATS_STREAM_PREFIX") or "CR",
        gateway_port=port,
        data_dir=RUN_DIR / "data",
        extra_env=extra,
    )


def _migrate(layout: SystemLayout) -> None:
    for name, url in layout.database_urls.items():
        migrations.upgrade(ROOT / "services" / name, url)
        typer.echo(f"migrated {name}")


def accounts_line(env: Mapping[str, str]) -> str:
    if env.get("CR_BILLING_PLANS") or env.get("CR_BILLING_PLANS_FILE"):
        return "accounts: the plans of CR_BILLING_PLANS / CR_BILLING_PLANS_FILE"
    if env.get("CR_BILLING_MODE") == "hosted":
        return "accounts: hosted mode, the free / pro / team plans (docs/accounts.md)"
    return "accounts: self-hosted mode, no usage caps, no billing (docs/accounts.md)"


def next_steps(url: str, allowed_roots: str, env: Mapping[str, str]) -> str:
    codereview = Path(sys.executable).with_name("codereview")
    with contextlib.suppress(ValueError):
        codereview = codereview.relative_to(Path.cwd())
    return f"""
  gateway ready: {url}   (Ctrl-C stops everything)
  {accounts_line(env)}

  Next steps (README.md explains them):
    1. a user and its access token, to sign in to the dashboard at {url}/ :
       {codereview} admin create-user alice --org acme
    2. register a git repository under {allowed_roots} and index it:
       H="Authorization: Bearer crp_..."; G={url}
       curl -H "$H" -H 'content-type: application/json' -d '{{"path": "/abs/path/to/repo"}}' $G/v1/repositories
       curl -H "$H" -X POST $G/v1/repositories/ID/index_repo
       curl -H "$H" $G/v1/repositories/ID/index/status
"""


def _announce_when_ready(url: str, allowed_roots: str, env: Mapping[str, str], stopping: threading.Event) -> None:
    deadline = time.monotonic() + 120
    while not stopping.is_set() and time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                print(next_steps(url, allowed_roots, env), flush=True)
                return
        except httpx.HTTPError:
            pass
        stopping.wait(0.5)
    if not stopping.is_set():
        print("gateway did not answer within 120 s; see the logs above", flush=True)


@app.command()
def run() -> None:
    """Start infrastructure, migrate, and supervise the five services until Ctrl-C."""
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    stack: list = []
    stop_requested = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop_requested.set()

    # Ctrl-C (and a SIGTERM) is a request to stop, honoured once the services are down:
    # exiting 0 then keeps make from reporting "Error 130".
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        layout = _prepare(stack)
        _migrate(layout)
        env = layout.env()
        (RUN_DIR / "system.env").write_text(
            "".join(f"{k}={v}\n" for k, v in sorted(env.items()) if k.startswith("CR_"))
        )
        programs = [Program(name, layout.command(name), env) for name in MODULES]
        supervisor = Supervisor(programs, out=sys.stdout, stopping=stop_requested)
        if not stop_requested.is_set():
            roots = env.get("CR_INDEXER_ALLOWED_ROOTS", "")
            args = (layout.gateway_url, roots, env, stop_requested)
            threading.Thread(target=_announce_when_ready, args=args, daemon=True).start()
            supervisor.run()
    finally:
        for stop in reversed(stack):
            stop()
    typer.echo("stopped")


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
