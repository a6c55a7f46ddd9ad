"""``make run`` as a user runs it: the whole stack on embedded PostgreSQL and NATS, a service
killed with SIGKILL comes back while everything else stays up, and Ctrl-C (SIGINT) stops it
all, leaving no process behind. One stack start, about 30 s on a loaded machine."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading

import httpx
import psutil
import pytest

from services.devrun.infra import free_port
from services.devrun.system import ROOT
from tests.conftest import scratch_dir
from tests.devrun.test_supervisor import alive, wait_for

pytestmark = pytest.mark.e2e


class Output:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.text = ""
        self._lock = threading.Lock()
        threading.Thread(target=self._pump, args=(proc,), daemon=True).start()

    def _pump(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            with self._lock:
                self.text += line.decode(errors="replace")


def service_pids(root: psutil.Process) -> dict[str, int]:
    found = {}
    for child in root.children(recursive=True):
        try:
            match = re.search(r"services\.(\w+)\.main", " ".join(child.cmdline()))
        except psutil.NoSuchProcess:
            continue
        if match and child.ppid() == root.pid:
            found[match.group(1)] = child.pid
    return found


def ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_make_run_restarts_a_killed_service_keeps_the_rest_and_stops_cleanly() -> None:
    # Not pytest's tmp_path: as root the embedded server runs as its own user, which must
    # reach the data directory (the wheel opens the mkdtemp prefix, as tests/conftest.py does).
    run_dir = scratch_dir("cr-devrun-") / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CR_") and k != "XDG_RUNTIME_DIR"}
    port = free_port()
    env.update({"CR_RUN_DIR": str(run_dir), "CR_GATEWAY_PORT": str(port)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.devrun", "run"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    out = Output(proc)
    url = f"http://127.0.0.1:{port}"
    everything: set[int] = set()
    try:
        wait_for(lambda: "gateway ready" in out.text or proc.poll() is not None, timeout=180)
        assert proc.poll() is None, out.text
        startup = out.text
        # The first hour's noise: nothing but INFO from a clean start.
        assert "Warning" not in startup
        assert '"level": "WARNING"' not in startup
        assert '"level": "ERROR"' not in startup
        assert "create-user" in startup  # the next steps are printed
        # Self-hosted by default: no billing configured, no plan caps, said at start-up.
        assert "accounts: self-hosted mode, no usage caps" in startup
        system_env = dict(line.split("=", 1) for line in (run_dir / "system.env").read_text().splitlines())
        created = subprocess.run(
            [sys.executable, "-m", "services.billing.admin", "create-user", "solo"],
            env={**env, "CR_BILLING_ADDR": system_env["CR_BILLING_ADDR"]},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        token = next(line.split("=", 1)[1] for line in created.splitlines() if line.startswith("token="))
        account = httpx.get(f"{url}/v1/account/status", headers={"Authorization": f"Bearer {token}"}).json()
        assert account["plan_name"] == "Self-hosted", account
        assert {metric: usage["cap"] for metric, usage in account["usage"].items()} == {
            "analyses": -1,
            "repositories": -1,
            "ai_tokens": -1,
        }
        supervisor = psutil.Process(proc.pid)
        before = service_pids(supervisor)
        assert set(before) == {"billing", "indexer", "analyzer", "hostapp", "gateway"}
        everything |= {p.pid for p in supervisor.children(recursive=True)}
        postmaster = int((run_dir / "postgres" / "postmaster.pid").read_text().split()[0])
        everything.add(postmaster)

        os.kill(before["analyzer"], signal.SIGKILL)
        try:
            wait_for(lambda: "analyzer killed by SIGKILL" in out.text, timeout=30)
        except AssertionError:
            raise AssertionError(out.text[-5000:]) from None
        wait_for(lambda: service_pids(supervisor).get("analyzer", before["analyzer"]) != before["analyzer"], 30)
        wait_for(lambda: ready(url), timeout=120)
        after = service_pids(supervisor)
        assert {k: v for k, v in after.items() if k != "analyzer"} == {
            k: v for k, v in before.items() if k != "analyzer"
        }
        assert alive(postmaster)
        everything |= {p.pid for p in supervisor.children(recursive=True)}

        before_stop = len(out.text)
        os.kill(proc.pid, signal.SIGINT)
        assert proc.wait(90) == 0, out.text
        stopping = out.text[before_stop:]
        # Each service stops its own workers: none is killed under it, no error on the way out.
        assert '"level": "ERROR"' not in stopping, stopping
        assert '"level": "WARNING"' not in stopping, stopping
    finally:
        if proc.poll() is None:  # a failed assertion: stop it the clean way first
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        if proc.returncode == 0:  # its embedded servers are down: their data can go
            shutil.rmtree(run_dir.parent, ignore_errors=True)
    wait_for(lambda: not [pid for pid in everything if alive(pid)], timeout=30)
    assert "all services stopped" in out.text
