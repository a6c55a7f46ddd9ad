"""``codereview --help`` from a fresh virtualenv with only what pyproject.toml declares, and the
CLI's imports stay clear of the gateway's web stack, gRPC and the MCP SDK (it must start fast).

Bounded: one venv install from uv's cache (about 30 s on this machine)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UV = Path(sys.executable).parent / "uv"
HEAVY = ("fastapi", "uvicorn", "starlette", "grpc", "mcp", "services.gateway")


def test_help_from_a_fresh_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(UV), "pip", "install", "-q", "--python", str(venv / "bin" / "python"), str(ROOT)], check=True)
    done = subprocess.run(
        [str(venv / "bin" / "codereview"), "--help"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPROFILEIMPORTTIME": "1", "HOME": str(tmp_path)},
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for command in ("login", "review", "repo", "report", "context", "conventions", "mcp", "admin"):
        assert command in done.stdout
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert not {m for m in imported if m.split(".")[0] in HEAVY or m.startswith(HEAVY)}, "the CLI imports a web stack"
