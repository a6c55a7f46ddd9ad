"""Starts all five services as real processes on free ports against fresh databases,
waits for readiness, and tears them down. Used by the e2e tests."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx

from services.devrun.system import MODULES, SystemLayout


def build_system(
    nats_url: str,
    database_urls: dict[str, str],
    stream_prefix: str,
    work: Path,
    extra_env: dict[str, str] | None = None,
) -> RunningSystem:
    """A system for the tests, under ``work``: local repositories may live in ``work/repos``;
    the outside world (Stripe, the code host, an AI upstream) is the stand-ins of tests/standins."""
    from tests.standins import accounts as account_standins
    from tests.standins.github_api import e2e_standin as github_standin

    layout = SystemLayout(
        nats_url=nats_url,
        database_urls=database_urls,
        stream_prefix=stream_prefix,
        data_dir=work / "data",
        extra_env={
            "CR_GATEWAY_CODE_HOST_WEBHOOK_SECRET": "e2e-code-host-secret",
            "CR_GATEWAY_PAYMENT_WEBHOOK_SECRET": "whsec_e2e",
            "CR_INDEXER_ALLOWED_ROOTS": str(work / "repos"),
            # Every test connects from 127.0.0.1, and the schemathesis run sends many bad tokens on
            # purpose; the limit itself is tested per address in tests/gateway.
            "CR_BILLING_AUTH_FAILURE_LIMIT_PER_MINUTE": "5000",
            # The accounts tests exercise the plans a hosted service sells (checkout, caps);
            # make run's self-hosted default is tested in tests/devrun.
            "CR_BILLING_MODE": "hosted",
            "CR_LOG_JSON": "true",
            **account_standins.start().env(),
            # The GitHub REST API of the hostapp (app JWT, installation tokens, PRs, checks, reviews).
            **github_standin().env(),
            # Short job leases so a killed hostapp's job is redelivered within seconds.
            "CR_HOSTAPP_JOB_ACK_WAIT_SECONDS": "4",
            "CR_HOSTAPP_JOB_RETRY_DELAY_SECONDS": "1",
            **(extra_env or {}),
        },
    )
    (work / "repos").mkdir(parents=True, exist_ok=True)
    running = RunningSystem(layout, work / "logs")
    return running


class RunningSystem:
    def __init__(self, layout: SystemLayout, log_dir: Path) -> None:
        self.layout = layout
        self.log_dir = log_dir
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.env = layout.env()
        self.work = log_dir.parent

    @property
    def url(self) -> str:
        return self.layout.gateway_url

    def start_process(self, name: str) -> None:
        log = open(self.log_dir / f"{name}.log", "ab")  # noqa: SIM115 - owned by the child
        self.procs[name] = subprocess.Popen(
            self.layout.command(name), env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def start(self, timeout: float = 90) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for name in MODULES:
            self.start_process(name)
        self.wait_ready(timeout)

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited with {proc.returncode}:\n{self.log(name)[-3000:]}")
            try:
                reply = httpx.get(f"{self.url}/readyz", timeout=2)
                if reply.status_code == 200:
                    return
                last = reply.text
            except httpx.HTTPError as exc:
                last = str(exc)
            time.sleep(0.2)
        raise TimeoutError(f"system not ready after {timeout}s: {last}")

    def log(self, name: str) -> str:
        path = self.log_dir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def kill(self, name: str, sig: int = signal.SIGKILL, *, group: bool = True) -> None:
        """Signal the service's process group, or (``group=False``) the process alone, as the
        kernel's OOM killer would: then its children must die on their own."""
        proc = self.procs[name]
        if group:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        proc.wait(30)

    def restart(self, name: str) -> None:
        if self.procs[name].poll() is None:
            self.kill(name, signal.SIGTERM)
        self.start_process(name)
        self.wait_ready()

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for name, proc in self.procs.items():
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
            _ = name
