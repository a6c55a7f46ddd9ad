"""The fault suite's own world: a PostgreSQL and a NATS started for it (own ports, own data
directories: it stops and restarts them; the machine's shared servers are never touched) and
the five services as real processes on them, with short leases and ack waits so recovery is
quick enough to test. The tests share one system and leave it healthy for the next.

Every wait polls a condition against one of the bounds below; the whole suite takes about
three minutes on two cores (select it with ``-m faults``, leave it out with ``-m "not faults"``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import psutil
import psycopg
import pytest

from services.devrun.infra import (
    SERVICES_WITH_DB,
    EmbeddedNats,
    EmbeddedPostgres,
    create_databases,
    database_url,
    wait_for_port,
)
from tests.conftest import SESSION, scratch_dir
from tests.e2e.conftest import admin_token
from tests.e2e.harness import RunningSystem, build_system
from tests.e2e.test_indexing import get_status, register

JOB_BOUND = 90.0  # a job reaches a terminal state this long after its fault ends
READY_BOUND = 60.0  # the system reports ready again this long after a fault ends
OUTAGE_SEEN_BOUND = 15.0  # readiness must say 503 within this while a dependency is down
LEFTOVER_BOUND = 10.0  # the children of a killed process are gone within this

# Leases and ack waits of a few seconds (production: 20-60 s) keep redelivery inside the bounds.
FAULT_ENV = {
    "CR_INDEXER_WORKERS": "1",
    "CR_INDEXER_JOB_ACK_WAIT_SECONDS": "6",
    "CR_INDEXER_HEARTBEAT_SECONDS": "1",
    "CR_INDEXER_LEASE_SECONDS": "6",
    "CR_INDEXER_REAPER_INTERVAL_SECONDS": "1",
    "CR_ANALYZER_EVENT_ACK_WAIT_SECONDS": "6",
}


MODULE = "import os\n\n\ndef handler_{i}(value: int) -> int:\n    return value + {i}\n\n\nclass Model{i}:\n    pass\n"


@dataclass
class World:
    pg: EmbeddedPostgres
    pg_url: str
    nats: EmbeddedNats
    system: RunningSystem
    http: httpx.Client
    auth: dict[str, str]

    # --- dependencies -----------------------------------------------------------------------

    def stop_nats(self) -> None:
        self.nats.stop()

    def start_nats(self) -> None:
        self.nats.proc = None
        self.nats.start()  # same port and data directory: streams and durables survive

    def stop_pg(self) -> None:
        self.pg.stop()

    def start_pg(self) -> None:
        self.pg.start()
        wait_for_port(self.pg.port)

    # --- what the system says ---------------------------------------------------------------

    def readyz(self) -> int:
        try:
            return httpx.get(f"{self.system.url}/readyz", timeout=3).status_code
        except httpx.HTTPError:
            return 0  # the gateway itself is down: not ready either

    def wait_readyz(self, status: int, bound: float) -> float:
        """Seconds until /readyz answers ``status``; fails after ``bound``."""
        start = time.monotonic()
        while time.monotonic() - start < bound:
            if self.readyz() == status:
                return time.monotonic() - start
            time.sleep(0.2)
        raise AssertionError(f"/readyz did not answer {status} within {bound}s")

    def wait_not_ready(self, bound: float) -> None:
        """/readyz does not say ready (503, or no answer when the gateway itself is down)."""
        start = time.monotonic()
        while time.monotonic() - start < bound:
            if self.readyz() != 200:
                return
            time.sleep(0.2)
        raise AssertionError(f"/readyz still said ready {bound}s into the outage")

    def log_mark(self, name: str) -> int:
        return len(self.system.log(name))

    def wait_log(self, name: str, text: str, since: int, bound: float) -> None:
        """``text`` appears in the service's log after offset ``since``."""
        deadline = time.monotonic() + bound
        while text not in self.system.log(name)[since:]:
            if time.monotonic() > deadline:
                raise AssertionError(f"{name} did not log {text!r} within {bound}s")
            time.sleep(0.2)

    def sql(self, service: str, query: str, *args: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(database_url(self.pg_url, f"f{SESSION}_{service}"), autocommit=True) as conn:
            return conn.execute(query, args).fetchall()

    # --- work -------------------------------------------------------------------------------

    def new_repo(self, name: str, files: int) -> str:
        from tests.indexer.support import git, init_repo, write

        path = self.system.work / "repos" / name
        init_repo(path)
        write(path, {f"pkg{i % 20}/module_{i}.py": MODULE.format(i=i) * 4 for i in range(files)})
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", "a tree")
        return register(self.http, self.auth, path)

    def trigger(self, repo_id: str) -> str:
        reply = self.http.post(f"/v1/repositories/{repo_id}/index_repo", headers=self.auth)
        assert reply.status_code == 202, reply.text
        return str(reply.json()["run_id"])

    def status(self, repo_id: str) -> dict[str, Any]:
        return get_status(self.http, self.auth, repo_id)

    def wait_state(self, repo_id: str, states: tuple[str, ...], bound: float) -> dict[str, Any]:
        """The run's state straight from the indexer's database (the gateway may be down)."""
        deadline = time.monotonic() + bound
        row: tuple[Any, ...] = ()
        while time.monotonic() < deadline:
            rows = self.sql(
                "indexer",
                "select r.state, r.attempts, r.id from index_runs r join repositories p on p.last_run_id = r.id"
                " where p.id = %s",
                repo_id,
            )
            if rows:
                row = rows[0]
                if row[0] in states:
                    return {"state": row[0], "attempts": row[1], "run_id": row[2]}
            time.sleep(0.2)
        raise AssertionError(f"run of {repo_id} not in {states} within {bound}s: {row}")

    def index(self, repo_id: str) -> dict[str, Any]:
        """The next job is processed: a full index, to ready, within the bound."""
        self.trigger(repo_id)
        return self.wait_state(repo_id, ("ready",), JOB_BOUND)

    # --- processes --------------------------------------------------------------------------

    def children(self, name: str) -> list[psutil.Process]:
        return psutil.Process(self.system.procs[name].pid).children(recursive=True)

    def kill9(self, name: str) -> list[psutil.Process]:
        """``kill -9`` of the service's process alone; returns its children that outlived it."""
        children = self.children(name)
        self.system.kill(name, signal.SIGKILL, group=False)
        _, alive = psutil.wait_procs(children, timeout=LEFTOVER_BOUND)
        return alive

    @contextmanager
    def frozen(self, name: str) -> Iterator[None]:
        """The service's process stopped (SIGSTOP) for the block: whatever it was doing cannot
        finish before the block has changed the world around it."""
        process = psutil.Process(self.system.procs[name].pid)
        process.suspend()
        try:
            yield
        finally:
            process.resume()

    def start_replicas(self, names: tuple[str, ...]) -> dict[str, str]:
        """A second process of each of ``names`` on the same databases and streams, as second
        pods would be: own gRPC, metrics ports and data directory. The second processes dial
        each other (a Service in a cluster routes every call to a live pod; here the second set
        stays reachable when the first is killed); gateway and billing keep dialling the first.
        Returns each one's key in ``system.procs`` (``<name>-2``)."""
        from services.devrun.infra import free_port

        ports = {name: free_port() for name in names}
        keys: dict[str, str] = {}
        for name in names:
            key = keys[name] = f"{name}-2"
            env = dict(self.system.env)
            env.update({f"CR_{other.upper()}_ADDR": f"127.0.0.1:{port}" for other, port in ports.items()})
            env[f"CR_{name.upper()}_METRICS_PORT"] = str(free_port())
            env["CR_DATA_DIR"] = str(self.system.work / f"data-{key}")
            log = open(self.system.log_dir / f"{key}.log", "ab")  # noqa: SIM115 - owned by the child
            self.system.procs[key] = subprocess.Popen(
                self.system.layout.command(name), env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        return keys

    def stop_replica(self, key: str) -> None:
        proc = self.system.procs.pop(key)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)

    def restart(self, name: str) -> None:
        """What a supervisor does: start it again; the system is ready again within the bound."""
        self.system.start_process(name)
        self.system.wait_ready(READY_BOUND)

    # --- invariants -------------------------------------------------------------------------

    def assert_settled(self) -> None:
        """Every run terminal; every event published; every repository.indexed event applied
        exactly once by each of its consumers (none lost, none twice)."""
        deadline = time.monotonic() + JOB_BOUND
        while True:
            active = self.sql("indexer", "select id, state from index_runs where state in ('queued', 'indexing')")
            unpublished = self.sql("indexer", "select count(*) from outbox where published_at is null")[0][0]
            indexed = {
                r[0] for r in self.sql("indexer", "select id from outbox where subject = 'events.repository.indexed'")
            }
            learned = self.processed("analyzer", "analyzer-learn")
            released = self.processed("hostapp", "hostapp-repository-indexed")
            if not active and not unpublished and learned == indexed and released == indexed:
                break
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"not settled within {JOB_BOUND}s: active runs {active}, unpublished {unpublished}, "
                    f"indexed events {len(indexed)}, learned {len(learned)} (missing {indexed - learned}), "
                    f"hostapp {len(released)}"
                )
            time.sleep(0.5)
        ready = self.sql("indexer", "select count(*) from index_runs where state = 'ready'")[0][0]
        assert ready == len(indexed)  # one event per finished run: none staged twice

    def processed(self, service: str, consumer: str) -> set[str]:
        rows = self.sql(service, "select message_id from processed_messages where consumer = %s", consumer)
        return {r[0] for r in rows}


@pytest.fixture(scope="session")
def world() -> Iterator[World]:
    work = scratch_dir("cr-faults-")
    (work / "pg").mkdir()
    pg = EmbeddedPostgres(work / "pg" / "data")
    nats = EmbeddedNats(work / "nats")
    pg_url = pg.start()
    try:
        nats.start()
        names = {name: f"f{SESSION}_{name}" for name in SERVICES_WITH_DB}
        create_databases(pg_url, list(names.values()))
        urls = {
            name: database_url(pg_url, db).replace("postgresql://", "postgresql+psycopg://", 1)
            for name, db in names.items()
        }
        system = build_system(f"nats://127.0.0.1:{nats.port}", urls, f"F{SESSION}".upper(), work, FAULT_ENV)
        try:
            system.start(timeout=120)
            token = admin_token(system, "faults", org="faults")
            with httpx.Client(base_url=system.url, timeout=30) as http:
                yield World(pg, pg_url, nats, system, http, {"Authorization": f"Bearer {token}"})
        finally:
            system.stop()
    finally:
        nats.stop()
        pg.stop()
        for bulky in ("pg", "nats", "data", "repos"):  # the logs stay, for a failure's post-mortem
            shutil.rmtree(work / bulky, ignore_errors=True)
