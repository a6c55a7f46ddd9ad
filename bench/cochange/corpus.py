"""A git repository with real history, rebuilt from a package's release history on PyPI.

No repository with history written by others is available offline, so each corpus package's
source distributions are downloaded once (``pip download --no-binary <pkg> --no-deps``, cached
under ``bench/.work/cochange/sdists/``) and replayed as one commit per release, in release order:
each commit replaces the whole tree with that release's source (the top-level ``pkg-x.y/``
directory stripped). Files that only exist in an sdist (``PKG-INFO``, ``*.egg-info/``) are left
out: they are build output, not part of the project's history.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "bench" / ".work" / "cochange"

# Every release on PyPI at the time of writing, oldest first (pinned so that reruns are offline
# and comparable). Both are pure Python, released often, and a release touches a handful of files.
PACKAGES: dict[str, tuple[str, ...]] = {
    "packaging": (
        *("14.0", "14.1", "14.2", "14.3", "14.4", "14.5", "15.0", "15.1", "15.2", "15.3"),
        *("16.0", "16.1", "16.2", "16.3", "16.4", "16.5", "16.6", "16.7", "16.8", "17.0"),
        *("17.1", "18.0", "19.0", "19.1", "19.2", "20.0", "20.1", "20.2", "20.3", "20.4"),
        *("20.5", "20.7", "20.8", "20.9", "21.0", "21.1", "21.2", "21.3", "22.0", "23.0"),
        *("23.1", "23.2", "24.0", "24.1", "24.2", "25.0", "26.0", "26.1", "26.2", "26.3"),
    ),
    "attrs": (
        *("15.0.0", "15.1.0", "15.2.0", "16.0.0", "16.1.0", "16.2.0", "16.3.0", "17.1.0", "17.2.0"),
        *("17.3.0", "17.4.0", "18.1.0", "18.2.0", "19.1.0", "19.2.0", "19.3.0", "20.1.0", "20.2.0"),
        *("20.3.0", "21.2.0", "21.3.0", "21.4.0", "22.1.0", "22.2.0", "23.1.0", "23.2.0", "24.1.0"),
        *("24.2.0", "24.3.0", "25.1.0", "25.2.0", "25.3.0", "25.4.0", "26.1.0"),
    ),
}
MIN_RELEASES = 10  # fewer downloaded releases than this: the package is left out
BASE_TIME = 1_400_000_000  # commit i is dated BASE_TIME + i days
AUTHOR = {
    "GIT_AUTHOR_NAME": "release-replay",
    "GIT_AUTHOR_EMAIL": "release-replay@example.invalid",
    "GIT_COMMITTER_NAME": "release-replay",
    "GIT_COMMITTER_EMAIL": "release-replay@example.invalid",
}
_SDIST_SUFFIXES = (".tar.gz", ".zip", ".tar.bz2", ".tgz")


@dataclass
class Corpus:
    package: str
    git_dir: Path
    versions: list[str]
    missing: list[str] = field(default_factory=list)


def _names(package: str) -> set[str]:
    base = package.lower()
    return {base, base.replace("-", "_"), base.replace("_", "-"), base.replace("-", ".")}


def find_sdist(cache: Path, package: str, version: str) -> Path | None:
    if not cache.is_dir():
        return None
    names = _names(package)
    for entry in cache.iterdir():
        low = entry.name.lower()
        for suffix in _SDIST_SUFFIXES:
            if low.endswith(suffix) and low[: -len(suffix)] in {f"{n}-{version}" for n in names}:
                return entry
    return None


def _download(cache: Path, package: str, version: str) -> tuple[str, str | None]:
    """Fetch one sdist into the cache; ``(version, error or None)``."""
    if find_sdist(cache, package, version) is not None:
        return version, None
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"]
        # Only the package itself must be an sdist; its build backend (asked for to read the
        # metadata) may come as a wheel, which is faster and works for every backend.
        cmd += ["--no-binary", package, "--no-deps", "--dest", tmp, f"{package}=={version}"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return version, str(exc)
        found = find_sdist(Path(tmp), package, version)
        if proc.returncode != 0 or found is None:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            return version, lines[-1] if lines else f"pip exited {proc.returncode}, no sdist"
        os.replace(found, cache / found.name)
    return version, None


def download(package: str, versions: tuple[str, ...], *, jobs: int = 4, log=print) -> list[str]:
    """Cache every release's sdist; the versions that could not be had."""
    cache = WORK / "sdists"
    cache.mkdir(parents=True, exist_ok=True)
    todo = [v for v in versions if find_sdist(cache, package, v) is None]
    if todo:
        log(f"  downloading {len(todo)} {package} sdists into {cache.relative_to(ROOT)} (once) ...")
    missing: list[str] = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for version, error in pool.map(lambda v: _download(cache, package, v), todo):
            if error:
                missing.append(version)
                log(f"  {package}=={version}: download failed: {error}")
    return missing


def _members(sdist: Path) -> Iterator[tuple[str, bytes]]:
    """``(path without the top-level directory, content)`` of every regular file."""
    if sdist.name.lower().endswith(".zip"):
        with zipfile.ZipFile(sdist) as zf:
            for info in zf.infolist():
                if not info.is_dir():
                    yield info.filename, zf.read(info)
        return
    with tarfile.open(sdist) as tf:
        for member in tf:
            if member.isfile():
                handle = tf.extractfile(member)
                if handle is not None:
                    yield member.name, handle.read()


def release_files(sdist: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for name, data in _members(sdist):
        parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
        if len(parts) < 2 or ".." in parts or parts[1] == ".git":
            continue
        rel = parts[1:]
        if rel == ["PKG-INFO"] or any(p.endswith(".egg-info") for p in rel[:-1]):
            continue
        out["/".join(rel)] = data
    return out


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    base.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", **(env or {}))
    proc = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args],
        cwd=repo,
        env=base,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


def build_repository(package: str, sdists: list[tuple[str, Path]], repo: Path) -> None:
    """One commit per release, oldest first; reused when built from the same sdists."""
    digest = hashlib.sha256()
    for version, path in sdists:
        digest.update(f"{version}\0{path.name}\0{path.stat().st_size}\n".encode())
    stamp = repo / ".git" / "replay-stamp"
    if stamp.is_file() and stamp.read_text() == digest.hexdigest():
        return
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for i, (version, path) in enumerate(sdists):
        for entry in repo.iterdir():
            if entry.name != ".git":
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        for rel, data in release_files(path).items():
            target = repo / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        _git(repo, "add", "-A")
        date = f"@{BASE_TIME + i * 86_400} +0000"
        env = {**AUTHOR, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        _git(repo, "commit", "-q", "--allow-empty", "--no-verify", "-m", f"{package} {version}", env=env)
    stamp.write_text(digest.hexdigest())


def load(packages: dict[str, tuple[str, ...]] | None = None, *, log=print) -> tuple[list[Corpus], list[str]]:
    """The corpus repositories that could be built, and a message per package left out."""
    corpora: list[Corpus] = []
    problems: list[str] = []
    for package, versions in (packages or PACKAGES).items():
        missing = download(package, versions, log=log)
        cache = WORK / "sdists"
        have = [(v, p) for v in versions if (p := find_sdist(cache, package, v)) is not None]
        if len(have) < MIN_RELEASES:
            problems.append(
                f"{package}: only {len(have)} of {len(versions)} releases available "
                f"(need {MIN_RELEASES}); is PyPI reachable? left out"
            )
            continue
        repo = WORK / "repos" / package
        build_repository(package, have, repo)
        corpora.append(Corpus(package, repo / ".git", [v for v, _ in have], missing))
    return corpora, problems
