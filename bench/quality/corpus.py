"""The benchmark's "repositories": real code nobody here wrote, read from disk, split, extracted.

Python comes from the interpreter's standard library and from installed packages; JavaScript and
TypeScript from npm tarballs fetched with ``npm pack`` into ``bench/.work`` (skipped when npm or
the network is unavailable). Facts are cached per content hash and extractor version, so a re-run
only pays for the injected variants.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from services.source.facts import FileFacts

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
    facts: dict[str, FileFacts] = field(default_factory=dict)

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


def _extractor_version() -> str:
    src = Path(__file__).resolve().parents[2] / "services" / "source"
    h = hashlib.sha1()
    for p in sorted(src.glob("*.py")):
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


class FactCache:
    """Facts keyed by (extractor version, path, content hash), one msgpack file per repository."""

    def __init__(self, name: str) -> None:
        self.path = WORK / "facts" / f"{name}-{_extractor_version()}.msgpack"
        self._decoder = msgspec.msgpack.Decoder(dict[str, FileFacts])
        self.entries: dict[str, FileFacts] = {}
        if self.path.exists():
            try:
                self.entries = self._decoder.decode(self.path.read_bytes())
            except msgspec.DecodeError:
                self.entries = {}
        self.dirty = False

    def get(self, path: str, data: bytes) -> FileFacts:
        from services.source.extract import extract

        key = f"{path}:{hashlib.sha1(data).hexdigest()}"
        hit = self.entries.get(key)
        if hit is None:
            hit = extract(path, data)
            self.entries[key] = hit
            self.dirty = True
        return hit

    def save(self) -> None:
        if self.dirty:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(msgspec.msgpack.encode(self.entries))


def extract_all(repo: Repo) -> None:
    """Facts of every file, imports resolved across the repository as the indexer does."""
    from services.source.imports import resolve_imports

    if repo.facts:
        return
    cache = FactCache(repo.name)
    parsed = [f for f in (cache.get(path, data) for path, data in repo.texts.items()) if not f.skipped]
    cache.save()
    repo.facts = {f.path: f for f in resolve_imports(parsed)}


def split(paths: list[str], ratio: float, seed: str) -> tuple[list[str], list[str]]:
    """Deterministic hold-out by hash of (seed, path): stable across runs and machines."""

    def score(p: str) -> float:
        return int(hashlib.sha1(f"{seed}:{p}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF

    held = sorted(p for p in paths if score(p) < ratio)
    return sorted(set(paths) - set(held)), held


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
