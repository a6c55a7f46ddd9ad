"""Stand-ins for the outside world of the accounts tests: Stripe (localstripe plus the
parts it lacks), the code host's OAuth and user API, and an OpenAI-compatible upstream.

``start()`` runs them once per test process (localstripe as a subprocess, the rest in one
uvicorn thread) and ``StandIns.env()`` gives the ``CR_`` settings that point the services at
them, the same settings a deployment uses for the real providers.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

from services.devrun.infra import free_port
from tests.standins import ai_upstream, codehost, stripe_api
from tests.standins.ai_upstream import AiUpstreamStandIn
from tests.standins.codehost import CodeHostStandIn, Identity
from tests.standins.stripe_api import StripeStandIn

__all__ = ["PLANS", "Identity", "StandIns", "start"]

UNLIMITED = 1_000_000
# The catalogue of the tests. Free is generous so other suites sharing the e2e system never
# meet a limit; "tiny" has a 5-per-minute rate limit for the 429 tests.
PLANS: list[dict[str, Any]] = [
    {
        "id": "free",
        "name": "Free",
        "caps": {"analyses": UNLIMITED, "repositories": 1000, "ai_tokens": UNLIMITED},
        "max_seats": 10,
        "rate_limit_per_minute": UNLIMITED,
        "org_rate_limit_per_minute": UNLIMITED,
    },
    {
        "id": "tiny",
        "name": "Tiny",
        "price_id": "price_standin_tiny",
        "caps": {"analyses": 2, "repositories": 1, "ai_tokens": 0},
        "rate_limit_per_minute": 5,
        "org_rate_limit_per_minute": 5,
    },
    {
        "id": "pro",
        "name": "Pro",
        "price_id": "price_standin_pro",
        "trial_days": 14,
        "caps": {"analyses": 5000, "repositories": 50, "ai_tokens": 2_000_000},
        "rate_limit_per_minute": UNLIMITED,
        "org_rate_limit_per_minute": UNLIMITED,
    },
    {
        "id": "team",
        "name": "Team",
        "price_id": "price_standin_team",
        "trial_days": 14,
        "caps": {"analyses": 50_000, "repositories": 500, "ai_tokens": 20_000_000},
        "rate_limit_per_minute": UNLIMITED,
        "org_rate_limit_per_minute": UNLIMITED,
    },
]
PRICES = {"price_standin_tiny": 500, "price_standin_pro": 2000, "price_standin_team": 5000}


def _wait_port(port: int, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {port}")


class StandIns:
    def __init__(self) -> None:
        self.localstripe_port = free_port()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.stripe = StripeStandIn(f"http://127.0.0.1:{self.localstripe_port}", f"{self.url}/stripe")
        self.host = CodeHostStandIn()
        self.ai = AiUpstreamStandIn()
        self._proc: subprocess.Popen[bytes] | None = None
        self._server: uvicorn.Server | None = None

    def start(self) -> None:
        log = open(Path(tempfile.gettempdir()) / f"localstripe-{os.getpid()}.log", "wb")  # noqa: SIM115
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.standins.localstripe_runner", str(self.localstripe_port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parents[2],
        )
        app = Starlette(
            routes=[
                Mount("/stripe", app=self.stripe.app()),
                Mount("/github", app=self.host.app()),
                Mount("/ai", app=self.ai.app()),
            ]
        )
        self._server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off")
        )
        threading.Thread(target=self._server.run, name="standins", daemon=True).start()
        _wait_port(self.localstripe_port)
        _wait_port(self.port)
        for plan in PLANS:
            if plan.get("price_id"):
                self.stripe.register_price(plan["price_id"], plan["name"], PRICES[plan["price_id"]])

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()

    def env(self) -> dict[str, str]:
        return {
            "CR_BILLING_STRIPE_API_KEY": stripe_api.API_KEY,
            "CR_BILLING_STRIPE_API_BASE": f"{self.url}/stripe",
            "CR_BILLING_HOST_OAUTH_BASE_URL": f"{self.url}/github",
            "CR_BILLING_HOST_API_BASE_URL": f"{self.url}/github/api",
            "CR_BILLING_HOST_CLIENT_ID": codehost.CLIENT_ID,
            "CR_BILLING_HOST_CLIENT_SECRET": codehost.CLIENT_SECRET,
            "CR_BILLING_PLANS": json.dumps(PLANS),
            "CR_GATEWAY_AI_UPSTREAM_URL": f"{self.url}/ai/v1",
            "CR_GATEWAY_AI_UPSTREAM_KEY": ai_upstream.API_KEY,
        }


_running: StandIns | None = None
_lock = threading.Lock()


def start() -> StandIns:
    """The stand-ins of this test process, started on first use and stopped at exit."""
    global _running
    with _lock:
        if _running is None:
            running = StandIns()
            running.start()
            atexit.register(running.stop)
            _running = running
        return _running
