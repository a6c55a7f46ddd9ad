"""Webhook secrets for a local run: without them every delivery is refused with
``invalid_signature`` and no hint. The first ``make run`` generates them, keeps them in the run
folder (mode 0600) and prints them, so they can be entered in the GitHub App and the payment
provider; later runs reuse them. Secrets set in the environment win."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

FILE_NAME = "webhook-secrets.env"
VARIABLES = {
    "CR_GATEWAY_CODE_HOST_WEBHOOK_SECRET": lambda: secrets.token_hex(32),
    # The payment provider's secrets look like whsec_…; the local stand-in signs with this one.
    "CR_GATEWAY_PAYMENT_WEBHOOK_SECRET": lambda: "whsec_" + secrets.token_hex(24),
}


def _read(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in pairs}


def ensure(run_dir: Path, environ: Mapping[str, str] = os.environ) -> tuple[dict[str, str], list[str]]:
    """(the secrets to run with, the names generated now)."""
    path = run_dir / FILE_NAME
    kept = _read(path)
    values: dict[str, str] = {}
    generated: list[str] = []
    for name, make in VARIABLES.items():
        if environ.get(name):
            values[name] = environ[name]
            continue
        if not kept.get(name):
            kept[name] = make()
            generated.append(name)
        values[name] = kept[name]
    if generated:
        run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write("".join(f"{k}={v}\n" for k, v in sorted(kept.items())))
    return values, generated


def describe(values: Mapping[str, str], generated: list[str], run_dir: Path) -> str:
    where = run_dir / FILE_NAME
    lines = [f"  webhook secrets ({'generated now, ' if generated else ''}kept in {where}):"]
    lines.append(f"    GitHub App webhook secret:  {values['CR_GATEWAY_CODE_HOST_WEBHOOK_SECRET']}")
    lines.append(f"    payment webhook secret:     {values['CR_GATEWAY_PAYMENT_WEBHOOK_SECRET']}")
    return "\n".join(lines)
