"""Validate repository-relative paths, revisions and server-side repository locations.

Paths arrive from API clients (a file under review, a diff header) and end up in git
pathspecs or database keys; revisions end up in git argv. Local repository paths are
registered by users of a self-hosted install and must stay inside the operator's roots,
after symlinks are resolved, so ``../../etc`` or a symlink farm cannot widen the reach.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from services.indexer.git.errors import (
    NOT_A_REPOSITORY,
    PATH_NOT_ALLOWED,
    VALIDATION_FAILED,
    GitError,
    GitInputError,
)
from services.indexer.git.runner import run_git
from services.kit.paths import MAX_PATH_LENGTH, repo_path

_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
# Branch/tag names, shas and simple ancestry suffixes; no ranges, no "rev:path", no options.
_REV = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/@{}~^+-]*$")


def validate_repo_path(path: str) -> str:
    """Return the normalized POSIX path, or raise ``GitInputError(validation_failed)``
    (the rule every service applies: ``services.kit.paths.repo_path``)."""
    try:
        return repo_path(path)
    except ValueError as exc:
        raise GitInputError(VALIDATION_FAILED, str(exc)) from None


def validate_rev(rev: str) -> str:
    """A branch, tag, sha or ``HEAD~n``-style revision that cannot be read as an option."""
    if not isinstance(rev, str) or not rev or len(rev) > 255:
        raise GitInputError(VALIDATION_FAILED, "revision is empty or too long")
    if not _REV.fullmatch(rev) or ".." in rev or rev.endswith((".lock", "/", ".")):
        raise GitInputError(VALIDATION_FAILED, f"invalid revision {rev!r}")
    return rev


def validate_sha(sha: str) -> str:
    if not isinstance(sha, str) or not _SHA.fullmatch(sha):
        raise GitInputError(VALIDATION_FAILED, f"invalid object id {sha!r}")
    return sha


@dataclass(frozen=True)
class LocalRepository:
    """A repository on the server's disk that passed ``validate_local_repository``."""

    path: Path  # realpath of the work tree (or of the bare repository)
    git_dir: Path
    bare: bool


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([path, root]) == root


def validate_local_repository(
    path: str | os.PathLike[str], allowed_roots: Sequence[str | os.PathLike[str]], *, timeout: float = 10.0
) -> LocalRepository:
    """Resolve ``path`` and require it to be a git repository under one of ``allowed_roots``.

    The path must be the repository's own root (work tree top or bare directory), not a
    directory somewhere inside one, so registering ``/srv/repos/x/sub`` cannot silently
    index ``/srv/repos/x``.
    """
    raw = os.fspath(path)
    if not raw or "\x00" in raw or len(raw) > MAX_PATH_LENGTH:
        raise GitInputError(VALIDATION_FAILED, "invalid repository path")
    if not os.path.isabs(raw):
        raise GitInputError(VALIDATION_FAILED, "repository path must be absolute")
    roots = [os.path.realpath(os.fspath(r)) for r in allowed_roots]
    real = os.path.realpath(raw)
    if not any(_inside(real, root) for root in roots):
        raise GitInputError(PATH_NOT_ALLOWED, "repository path is outside the allowed roots")
    if not os.path.isdir(real):
        raise GitInputError(NOT_A_REPOSITORY, "repository path is not a directory")
    try:
        result = run_git(
            ["rev-parse", "--is-bare-repository", "--absolute-git-dir"],
            cwd=real,
            # Stop discovery at the directory itself: never adopt an enclosing repository.
            env={"GIT_CEILING_DIRECTORIES": os.path.dirname(real) or "/"},
            timeout=timeout,
        )
    except GitError as exc:
        raise GitInputError(NOT_A_REPOSITORY, "path is not the root of a git repository") from exc
    lines = result.stdout.decode("utf-8", "replace").splitlines()
    if len(lines) != 2:
        raise GitInputError(NOT_A_REPOSITORY, "unexpected git rev-parse output")
    git_dir = os.path.realpath(lines[1])
    if not any(_inside(git_dir, root) for root in roots):
        raise GitInputError(PATH_NOT_ALLOWED, "repository's git directory is outside the allowed roots")
    bare = git_dir == real
    return LocalRepository(path=Path(real), git_dir=Path(git_dir), bare=bare)
