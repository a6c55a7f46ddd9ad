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


class RunningSystem:
    def __init__(self, layout: SystemLayout, log_dir: Path) -> None:
        self.layout = layout
        self.log_dir = log_dir
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.env = layout.env()

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

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        proc = self.procs[name]
        os.killpg(proc.pid, sig)
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
