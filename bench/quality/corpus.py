"""The benchmark's repositories.

*own*: the corpus the engine's thresholds were chosen on (the interpreter's standard library,
installed packages, npm tarballs fetched with ``npm pack`` into ``bench/.work``; skipped when npm
or the network is unavailable). *unseen*: the fetched repositories of ``bench/corpora.toml``,
read from local bare git directories (``bench.repos``), new to the engine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench import repos
from bench.quality import scan
from bench.quality.evaluate import Source

STDLIB = Path(f"/root/.pyenv/versions/3.11.7/lib/python{sys.version_info.major}.{sys.version_info.minor}")
SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
WORK = Path(__file__).resolve().parents[1] / ".work"
_EXTS = (".py", ".js", ".mjs", ".cjs", ".ts", ".tsx")


@dataclass(frozen=True)
class RepoSpec:
    name: str
    root: Path
    include: tuple[str, ...]  # directories (relative to root) that make up the repository
    files: tuple[str, ...] = ()  # single files added to it
    npm: str = ""  # npm package to fetch into WORK/npm/<name> first
    tests: bool = False  # ships its own test suite (scored for "new module without test")
    exclude: tuple[str, ...] = ("__pycache__",)


@dataclass
class Repo:
    spec: RepoSpec
    texts: dict[str, bytes] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.spec.name


def _npm_root(package: str) -> Path | None:
    dest = WORK / "npm" / package.replace("/", "_").replace("@", "")
    if (dest / "package.json").exists():
        return dest
    if shutil.which("npm") is None:
        return None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(
                ["npm", "pack", package, "--silent"],
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=90,
                check=True,
            )
            tgz = Path(tmp) / out.stdout.strip().splitlines()[-1]
            with tarfile.open(tgz) as tar:
                tar.extractall(tmp, filter="data")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(dest, ignore_errors=True)
            shutil.move(str(Path(tmp) / "package"), dest)
    except (OSError, subprocess.SubprocessError, tarfile.TarError, IndexError):
        return None
    return dest


def load(spec: RepoSpec) -> Repo | None:
    root = spec.root
    if spec.npm:
        fetched = _npm_root(spec.npm)
        if fetched is None:
            return None
        root = fetched
    repo = Repo(spec)
    for inc in spec.include:
        base = root / inc
        if not base.exists():
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in spec.exclude)
            for fn in sorted(filenames):
                if fn.endswith(_EXTS) and not fn.endswith((".d.ts", ".min.js")):
                    full = Path(dirpath) / fn
                    repo.texts[full.relative_to(root).as_posix()] = full.read_bytes()
    for rel in spec.files:
        if (root / rel).exists():
            repo.texts[rel] = (root / rel).read_bytes()
    return repo if repo.texts else None


def source(spec: RepoSpec) -> Source | None:
    repo = load(spec)
    return Source(spec.name, repo.texts, spec.tests, "own") if repo else None


def unseen(wanted: list[str], group: str = "unseen") -> list[Source]:
    """The fetched corpora of set ``group`` (``bench/corpora.toml``) at their pinned commits."""
    out = []
    for corpus in repos.corpora(wanted, sets=(group,)):
        texts = repos.files_at(corpus, configs=True)
        if texts:
            has_tests = any(scan.is_test_path(p) for p in texts)
            out.append(Source(corpus.name, texts, has_tests, group))
    return out


def default_specs() -> list[RepoSpec]:
    return [
        RepoSpec("stdlib-email", STDLIB, ("email",)),
        RepoSpec("stdlib-asyncio", STDLIB, ("asyncio",)),
        RepoSpec("stdlib-net", STDLIB, ("json", "http", "urllib", "xmlrpc", "wsgiref", "logging", "concurrent")),
        RepoSpec("stdlib-unittest", STDLIB, ("unittest",), tests=True),
        RepoSpec("stdlib-idlelib", STDLIB, ("idlelib",), tests=True),
        RepoSpec("stdlib-importlib", STDLIB, ("importlib", "multiprocessing")),
        RepoSpec("sqlalchemy", SITE, ("sqlalchemy",)),
        RepoSpec("pydantic", SITE, ("pydantic",)),
        RepoSpec("fastapi+starlette", SITE, ("fastapi", "starlette")),
        RepoSpec("httpx+httpcore", SITE, ("httpx", "httpcore")),
        RepoSpec("alembic", SITE, ("alembic",)),
        RepoSpec("rich", SITE, ("rich",)),
        RepoSpec("axios (js)", WORK, ("lib",), npm="axios@1.21.1"),
        RepoSpec("rxjs (ts)", WORK, ("src",), npm="rxjs@7.8.2"),
        RepoSpec("eslint (js)", WORK, ("lib",), npm="eslint@9.39.1"),
        RepoSpec("zod (ts)", WORK, ("src",), npm="zod@3.25.76"),
    ]
