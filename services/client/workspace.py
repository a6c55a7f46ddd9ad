"""The local side of a review: the git work tree a command runs in, its staged changes, a
branch's changes against its base, and which registered repository it is.

Used by the CLI and the MCP server, which both run beside the developer's checkout.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from services.api.repositories import Repository
from services.api.schemas import FilePatch
from services.client.errors import ApiError

STATUS = {"A": "added", "M": "modified", "D": "removed", "R": "renamed", "C": "added", "T": "modified"}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True)
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace").strip()
        raise ApiError(0, "validation_failed", f"git {' '.join(args)}: {stderr}", {"field": "path"})
    # Decoded without newline translation: a file's CRLF endings are part of what is reviewed.
    return done.stdout.decode("utf-8", "replace")


def read_text(path: Path) -> str:
    """A file's text as the repository holds it (line endings kept, undecodable bytes replaced)."""
    return path.read_bytes().decode("utf-8", "replace")


def toplevel(path: Path | str = ".") -> Path:
    """The work tree that holds ``path`` (a file or directory)."""
    start = Path(path).expanduser().resolve()
    directory = start if start.is_dir() else start.parent
    try:
        return Path(git(directory, "rev-parse", "--show-toplevel").strip())
    except ApiError:
        raise ApiError(0, "validation_failed", f"{start} is not inside a git work tree", {"field": "path"}) from None


def relative(root: Path, path: Path | str) -> str:
    """``path`` as the repository names it (relative, forward slashes)."""
    absolute = (Path.cwd() / Path(path).expanduser()).resolve()
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        raise ApiError(0, "validation_failed", f"{path} is outside {root}", {"field": "path"}) from None


@dataclass(frozen=True)
class BranchChanges:
    base: str
    head: str
    files: list[FilePatch]


def changed_files(
    root: Path, *sides: str, content: Callable[[str], str], base: Callable[[str], str] | None = None
) -> list[FilePatch]:
    """The files ``git diff <sides>`` names, each with its patch (which lines changed), its new
    content as ``content(path)`` reads it, so the server needs no snapshot of the old side, and
    its old content as ``base(old path)`` reads it, so the server tells what the change
    introduced from what was already there."""
    files: list[FilePatch] = []
    for line in git(root, "diff", "--name-status", "-M", "--no-color", *sides).splitlines():
        parts = line.split("\t")
        status = STATUS.get(parts[0][:1], "modified")
        path = parts[-1]
        patch = git(root, "diff", "--no-color", "--no-ext-diff", "-M", *sides, "--", *parts[1:])
        before = base(parts[1]) if base is not None and status != "added" else None
        files.append(
            FilePatch(
                path=path,
                status=status,
                patch=patch,
                content=None if status == "removed" else content(path),
                base_content=before,
            )
        )
    return files


def staged_changes(root: Path) -> list[FilePatch]:
    """The staged changes: the patch against HEAD for the changed lines, and each file's staged
    content exactly as it will be committed (``git show :path``), whatever HEAD the server saw."""
    return changed_files(
        root,
        "--cached",
        content=lambda path: git(root, "show", f":{path}"),
        base=lambda path: git(root, "show", f"HEAD:{path}"),
    )


def branch_changes(root: Path, base: str) -> BranchChanges:
    """The files HEAD changed since it forked from ``base``, each with its patch and new content."""
    fork = git(root, "merge-base", base, "HEAD").strip()
    head = git(root, "rev-parse", "HEAD").strip()
    files = changed_files(
        root,
        fork,
        head,
        content=lambda path: git(root, "show", f"{head}:{path}"),
        base=lambda path: git(root, "show", f"{fork}:{path}"),
    )
    return BranchChanges(base=fork, head=head, files=files)


def match(repositories: list[Repository], root: Path) -> Repository | None:
    """The repository registered for this work tree's path (local kind), if any."""
    wanted = root.resolve()
    for repo in repositories:
        if repo.kind == "local" and repo.source and Path(repo.source).resolve() == wanted:
            return repo
    return None


def not_registered(root: Path) -> ApiError:
    return ApiError(
        404, "repo_not_found", f"no registered repository for {root}: run `codereview repo add` or pass --repo"
    )
