"""The latency corpus: the Python files of a package installed in this environment (code nobody
here wrote), committed to a fresh git repository; plus the edits the benchmark sends."""

from __future__ import annotations

import difflib
import importlib.util
import shutil
from dataclasses import dataclass
from pathlib import Path

from bench.indexing.corpus import git

DEFAULT_PACKAGE = "mypyc"  # about 140 Python files (tests included), one file of about 500 lines
FALLBACK_PACKAGES = ("rich", "pydantic", "starlette", "httpx")
MARK = "  # reviewed"


@dataclass
class Corpus:
    repo: Path
    origin: str
    head: str
    files: list[str]  # repository-relative paths of the Python files


@dataclass
class Edit:
    path: str
    content: str  # the file with one line changed
    patch: str  # that change as the code host lists it (hunks only, three lines of context)


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def build(dest: Path, package: str = DEFAULT_PACKAGE) -> Corpus:
    """Copy the package's ``.py`` files to ``dest/<package>`` and commit them (fixed author)."""
    source = next(
        (p for p in (_package_dir(n) for n in (package, *FALLBACK_PACKAGES)) if p is not None),
        None,
    )
    if source is None:
        raise RuntimeError(f"none of {package}, {', '.join(FALLBACK_PACKAGES)} is installed")
    repo = dest / source.name
    files: list[str] = []
    for path in sorted(source.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = Path(source.name) / path.relative_to(source)
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, repo / rel)
        files.append(rel.as_posix())
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"import {source.name}")
    return Corpus(repo, f"copy of installed package {source}", git(repo, "rev-parse", "HEAD"), files)


def lines_of(repo: Path, path: str) -> int:
    return (repo / path).read_text(errors="replace").count("\n")


def target_file(corpus: Corpus, lines: int = 500) -> str:
    """The non-test file whose length is closest to ``lines``."""
    candidates = [p for p in corpus.files if "/test" not in p and "__init__" not in p] or corpus.files
    return min(candidates, key=lambda p: (abs(lines_of(corpus.repo, p) - lines), p))


def edit(repo: Path, path: str) -> Edit:
    """Change one line: a comment after the first ``return`` (else the last code line)."""
    old = (repo / path).read_text()
    lines = old.splitlines(keepends=True)
    candidates = [
        i for i, ln in enumerate(lines) if ln.strip().startswith("return") and not ln.rstrip().endswith("\\")
    ] or [i for i, ln in enumerate(lines) if ln.strip() and not ln.rstrip().endswith("\\")]
    i = candidates[0] if candidates else 0
    new_lines = list(lines)
    new_lines[i] = lines[i].rstrip("\n") + MARK + "\n"
    new = "".join(new_lines)
    diff = difflib.unified_diff(lines, new_lines, n=3)
    patch = "".join(d for d in diff if not d.startswith(("---", "+++")))
    return Edit(path, new, patch)


def pull_request(corpus: Corpus, count: int = 30) -> list[Edit]:
    """``count`` files (of 20 lines or more) spread over the repository, one line changed in each."""
    files = [p for p in corpus.files if lines_of(corpus.repo, p) >= 20]
    step = max(1, len(files) // count)
    return [edit(corpus.repo, p) for p in files[::step][:count]]
