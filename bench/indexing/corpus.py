"""The benchmark corpus: a large real source tree nobody here wrote, made into a git repository.

Django's sdist (pip download --no-binary, so the source tree, not a wheel) by default; when the
download fails (offline), the largest package already installed in this environment is copied.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

WORK = Path(__file__).resolve().parents[1] / ".work"
DEFAULT_PACKAGE = "django==5.1.4"


@dataclass
class Corpus:
    name: str
    repo: Path  # a git work tree with one commit of the corpus
    origin: str  # where it came from


def git(cwd: Path, *args: str) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "Bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
    }
    out = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env, check=True, capture_output=True
    )
    return out.stdout.decode().strip()


def _download(spec: str, dest: Path) -> Path | None:
    dest.mkdir(parents=True, exist_ok=True)
    existing = sorted(dest.glob("*.tar.gz"))
    if not existing:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-binary",
            ":all:",
            "--no-deps",
            "-q",
            spec,
            "-d",
            str(dest),
        ]
        try:
            subprocess.run(cmd, check=True, capture_output=True, timeout=300)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            print(f"download of {spec} failed ({type(exc).__name__}); falling back to an installed package")
            return None
        existing = sorted(dest.glob("*.tar.gz"))
    return existing[0] if existing else None


def _largest_installed_package() -> Path:
    import sqlalchemy

    site = Path(sqlalchemy.__file__).resolve().parents[1]
    sizes = {}
    for entry in site.iterdir():
        if entry.is_dir() and (entry / "__init__.py").exists():
            sizes[entry] = sum(f.stat().st_size for f in entry.rglob("*.py"))
    return max(sizes, key=lambda p: sizes[p])


def prepare(spec: str = DEFAULT_PACKAGE) -> Corpus:
    """The corpus repository under bench/.work (built once, reused by later runs)."""
    name = spec.replace("==", "-")
    repo = WORK / "corpus" / name
    if (repo / ".git").is_dir():
        return Corpus(name, repo, (repo / ".bench-origin").read_text().strip())
    tarball = _download(spec, WORK / "downloads" / name)
    staging = WORK / "corpus" / f".{name}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    if tarball is not None:
        with tarfile.open(tarball) as tar:
            tar.extractall(staging, filter="data")
        (top,) = list(staging.iterdir())
        origin = f"pip download --no-binary :all: {spec} ({tarball.name})"
    else:
        package = _largest_installed_package()
        top = staging / package.name
        shutil.copytree(package, top, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
        origin = f"copy of installed package {package}"
        name = package.name
        repo = WORK / "corpus" / name
    shutil.rmtree(repo, ignore_errors=True)
    repo.parent.mkdir(parents=True, exist_ok=True)
    top.rename(repo)
    shutil.rmtree(staging, ignore_errors=True)
    (repo / ".bench-origin").write_text(origin + "\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"import {origin}")
    return Corpus(name, repo, origin)


def python_file_to_touch(repo: Path) -> Path:
    """A mid-sized Python file the incremental step edits (deterministic choice)."""
    files = sorted(p for p in repo.rglob("*.py") if ".git" not in p.parts and 2_000 < p.stat().st_size < 20_000)
    return files[len(files) // 2]
