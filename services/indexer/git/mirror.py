"""One bare mirror per repository under the data directory, kept fresh by fetching.

The first call clones into a temporary sibling and renames it into place, so a clone that
times out or grows past its budget never leaves a half-written mirror behind. Later calls
fetch with ``--prune``. Only branches and tags are mirrored: ``clone --mirror`` would also
copy every ``refs/pull/*`` a forge publishes, often more data than the branches themselves.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from services.indexer.git.errors import (
    EMPTY_REPOSITORY,
    REF_NOT_FOUND,
    REPOSITORY_TOO_LARGE,
    GitError,
    GitOperationError,
)
from services.indexer.git.fsck import tolerated_notes, unsafe_objects
from services.indexer.git.paths import LocalRepository, validate_rev
from services.indexer.git.runner import GitAccess, run_git
from services.indexer.git.urls import CloneUrl

DEFAULT_MIRROR_TIMEOUT = 900.0
DEFAULT_MAX_MIRROR_BYTES = 4 * 1024 * 1024 * 1024
_REFSPECS = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
_SIZE_POLL_SECONDS = 1.0


@dataclass(frozen=True)
class MirrorResult:
    path: Path
    created: bool  # cloned by this call (False: fetched into an existing mirror)
    size_bytes: int
    head: str | None  # sha HEAD resolves to, None for a repository without commits
    notes: tuple[str, ...] = ()  # what the fetch let through (malformed history, see fsck.py)


def _access_for(source: CloneUrl | LocalRepository, token: str | None) -> tuple[str, GitAccess]:
    if isinstance(source, LocalRepository):
        # file:// is enabled only here, for a path the operator's roots already vetted.
        return str(source.git_dir), GitAccess(protocols=("file",))
    if not isinstance(source, CloneUrl):
        raise TypeError("source must be a CloneUrl or LocalRepository (validate it first)")
    protocols = tuple(dict.fromkeys(("https", source.scheme)))
    access = GitAccess(
        protocols=protocols,
        token=token,
        token_scope=source.scope(),
        resolve=source.curl_resolve_pins(),
    )
    return source.url, access


def directory_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def _size_guard(path: Path, max_bytes: int) -> Callable[[], GitError | None]:
    last = 0.0

    def check() -> GitError | None:
        nonlocal last
        now = time.monotonic()
        if now - last < _SIZE_POLL_SECONDS:
            return None
        last = now
        size = directory_size(path)
        if size > max_bytes:
            return GitOperationError(
                REPOSITORY_TOO_LARGE, f"repository exceeds {max_bytes} bytes (at least {size} on disk)"
            )
        return None

    return check


@contextlib.contextmanager
def _locked(dest: Path) -> Iterator[None]:
    # Two index jobs for one repository must not clone/fetch into the same mirror at once.
    lock_path = dest.parent / f".{dest.name}.lock"
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_mirror(
    source: CloneUrl | LocalRepository,
    dest: str | os.PathLike[str],
    *,
    token: str | None = None,
    timeout: float = DEFAULT_MIRROR_TIMEOUT,
    max_size_bytes: int = DEFAULT_MAX_MIRROR_BYTES,
) -> MirrorResult:
    """Clone ``source`` into the bare mirror ``dest`` the first time, fetch into it afterwards.

    Raises ``GitOperationError`` with code ``timeout``, ``repository_too_large`` or
    ``git_failed``. An empty source repository yields a mirror with ``head=None``.
    """
    dest_path = Path(dest).absolute()
    dest_path.parent.mkdir(parents=True, exist_ok=True)
    url, access = _access_for(source, token)
    with _locked(dest_path):
        try:
            if (dest_path / "HEAD").is_file():
                stderr, head = _fetch(dest_path, url, access, timeout, max_size_bytes)
                created = False
            else:
                stderr = _clone(dest_path, url, access, timeout, max_size_bytes)
                head = _head_or_none(dest_path)
                created = True
        except GitError as exc:
            unsafe = unsafe_objects(exc)
            if unsafe is None:
                raise
            raise unsafe from exc
        size = directory_size(dest_path)
        if size > max_size_bytes:
            raise GitOperationError(REPOSITORY_TOO_LARGE, f"mirror is {size} bytes, limit {max_size_bytes}")
        return MirrorResult(
            path=dest_path,
            created=created,
            size_bytes=size,
            head=head,
            notes=tuple(tolerated_notes(stderr)),
        )


def _clone(dest: Path, url: str, access: GitAccess, timeout: float, max_bytes: int) -> str:
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
    try:
        result = run_git(
            ["clone", "--bare", "--quiet", "--no-local", "--template="],
            user_args=[url, str(tmp)],
            access=access,
            timeout=timeout,
            abort_check=_size_guard(tmp, max_bytes),
        )
        run_git(["config", "--replace-all", "remote.origin.fetch", _REFSPECS[0]], git_dir=tmp)
        run_git(["config", "--add", "remote.origin.fetch", _REFSPECS[1]], git_dir=tmp)
        size = directory_size(tmp)
        if size > max_bytes:
            raise GitOperationError(REPOSITORY_TOO_LARGE, f"repository is {size} bytes, limit {max_bytes}")
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return result.stderr


def _fetch(dest: Path, url: str, access: GitAccess, timeout: float, max_bytes: int) -> tuple[str, str | None]:
    """Fetch into the mirror: git's messages, and the commit HEAD resolves to (None when none)."""
    # The registered URL may have changed since the clone; the stored one is never trusted.
    run_git(["config", "remote.origin.url", url], git_dir=dest)
    try:
        result = run_git(
            ["fetch", "--prune", "--quiet", "--no-write-fetch-head", "origin"],
            git_dir=dest,
            access=access,
            timeout=timeout,
            abort_check=_size_guard(dest, max_bytes),
        )
    except GitError:
        # An interrupted fetch leaves half-written packs that would count against the budget.
        for leftover in (dest / "objects" / "pack").glob("tmp_*"):
            leftover.unlink(missing_ok=True)
        raise
    head = _head_or_none(dest)
    if head is None and _has_refs(dest):
        _repair_head(dest, access, timeout)
        head = _head_or_none(dest)
    return result.stderr, head


def _repair_head(dest: Path, access: GitAccess, timeout: float) -> None:
    """Point HEAD at the remote's default branch after the old one was deleted upstream."""
    result = run_git(
        ["ls-remote", "--symref", "origin", "HEAD"], git_dir=dest, access=access, timeout=timeout, check=False
    )
    for line in result.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("ref: ") and line.endswith("\tHEAD"):
            target = line[5:].split("\t", 1)[0]
            if target.startswith("refs/heads/"):
                run_git(["symbolic-ref", "HEAD", target], git_dir=dest)
            return


def _has_refs(mirror: Path) -> bool:
    result = run_git(["for-each-ref", "--count=1", "--format=%(objectname)"], git_dir=mirror)
    return bool(result.stdout.strip())


def _head_or_none(mirror: Path) -> str | None:
    try:
        return resolve_ref(mirror)
    except GitOperationError as exc:
        if exc.code in (EMPTY_REPOSITORY, REF_NOT_FOUND):
            return None
        raise


def resolve_ref(mirror: str | os.PathLike[str], ref: str = "HEAD", *, timeout: float = 30.0) -> str:
    """The commit sha ``ref`` points to.

    Raises ``GitOperationError(empty_repository)`` when the repository has no commits at all
    and ``GitOperationError(ref_not_found)`` when it has commits but not this ref.
    """
    validate_rev(ref)
    result = run_git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
        git_dir=mirror,
        timeout=timeout,
        check=False,
    )
    sha = result.stdout.decode("ascii", "replace").strip()
    if result.returncode == 0 and sha:
        return sha
    if not _has_refs(Path(mirror)):
        raise GitOperationError(EMPTY_REPOSITORY, "repository has no commits")
    raise GitOperationError(REF_NOT_FOUND, f"ref {ref!r} does not name a commit")
