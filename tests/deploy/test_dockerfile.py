"""The container image, read rather than built (no container engine here): hadolint passes on
every Dockerfile, the base is pinned, the final stage runs as a numbered non-root user without
build tools, and it carries exactly the runtime pins of pyproject.toml and the generated code."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.deploy.conftest import ROOT

sys.path.insert(0, str(ROOT / "deploy" / "docker"))
from requirements import LOCAL_ONLY, runtime_requirements

HADOLINT = Path(sys.executable).parent / "hadolint"
DOCKERFILES = sorted(
    p for p in ROOT.rglob("Dockerfile*") if not {".venv", ".git", "node_modules"} & set(p.relative_to(ROOT).parts)
)


def stages(text: str) -> list[str]:
    return re.split(r"^FROM ", text, flags=re.M)[1:]


def test_hadolint_passes_on_every_dockerfile() -> None:
    assert DOCKERFILES == [ROOT / "Dockerfile"]
    for path in DOCKERFILES:
        proc = subprocess.run([str(HADOLINT), "--no-color", str(path)], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_base_is_pinned_by_tag_and_digest() -> None:
    text = (ROOT / "Dockerfile").read_text()
    (image,) = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", text, re.M)
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm@sha256:[0-9a-f]{64}", image)
    assert all(stage.startswith("${PYTHON_IMAGE}") for stage in stages(text))


def test_final_stage_is_non_root_without_build_tools() -> None:
    final = stages((ROOT / "Dockerfile").read_text())[-1]
    (user,) = re.findall(r"^USER (\S+)$", final, re.M)
    uid, gid = user.split(":")
    assert int(uid) >= 10000
    assert int(gid) >= 10000
    installs = " ".join(re.findall(r"apt-get install ([^&\n]+)", final))
    assert not re.search(r"gcc|g\+\+|build-essential|make|-dev\b|cmake", installs), installs
    assert "pip install" not in final  # wheels are installed in the build stage and copied
    assert re.search(r"\bCR_BIND_HOST=0\.0\.0\.0\b", final)
    assert re.search(r"^CMD \[\"python\", \"-m\", \"services\.gateway\.main\"\]$", final, re.M)


def test_image_gets_the_runtime_pins_and_the_generated_contracts() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pins = runtime_requirements(pyproject)
    declared = pyproject["project"]["dependencies"]
    assert set(pins) == {p for p in declared if not any(p.startswith(f"{name}==") for name in LOCAL_ONLY)}
    assert all("==" in pin for pin in pins)
    assert not (LOCAL_ONLY & {re.split(r"[\[=]", p)[0] for p in pins})
    assert {f"{name}==" for name in LOCAL_ONLY} <= {p.split("==")[0] + "==" for p in declared}, "stale exclusion"
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    ignore = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert "!services/" in ignore
    assert not any("contracts" in line for line in ignore)
    assert (ROOT / "services" / "contracts" / "v1" / "billing_pb2_grpc.py").is_file()
    # What the image leaves out is only what `make run` uses.
    assert not any("services/" in line and "devrun" not in line for line in ignore if not line.startswith("!"))
