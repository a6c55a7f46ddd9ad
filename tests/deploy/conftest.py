"""Rendered manifests for the deploy checks: each kustomization is built once per session with
``kubectl kustomize`` (offline; CI installs Debian's kubernetes-client when kubectl is missing)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
OVERLAYS = ("staging", "production")
PLATFORM = ("platform/postgres", "platform/monitoring")


def kubectl() -> str:
    found = shutil.which("kubectl")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("kubectl is missing: .ci/run installs kubernetes-client")
    pytest.skip("kubectl is not installed (apt-get install -y kubernetes-client); CI runs these checks")


def render(path: str) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [kubectl(), "kustomize", str(K8S / path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return [doc for doc in yaml.safe_load_all(proc.stdout) if doc]


_cache: dict[str, list[dict[str, Any]]] = {}


def rendered(path: str) -> list[dict[str, Any]]:
    if path not in _cache:
        _cache[path] = render(path)
    return _cache[path]


@pytest.fixture(params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return rendered(f"overlays/{request.param}")


def of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def by_name(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in of_kind(docs, kind)}
