"""Real pull requests from a repository's history: merge commits on the first-parent chain of the
pinned commit whose second parent brought several commits; each commit of the branch, in order,
is one push."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PullRequest:
    merge: str
    base: str  # the merge base: what the branch started from
    pushes: tuple[str, ...]  # heads, oldest first


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True, text=True, check=True).stdout


def merged_pull_requests(
    git_dir: Path, commit: str, *, limit: int, min_pushes: int = 2, max_pushes: int = 4, scan: int = 300
) -> list[PullRequest]:
    """The ``limit`` most recent merged pull requests with at least ``min_pushes`` commits; a
    longer branch keeps ``max_pushes`` of its commits, evenly spaced, the last one included."""
    found: list[PullRequest] = []
    for merge in _git(git_dir, "log", "--merges", "--first-parent", "--format=%H", "-n", str(scan), commit).split():
        parents = _git(git_dir, "rev-list", "--parents", "-n", "1", merge).split()[1:]
        if len(parents) != 2:
            continue
        base = _git(git_dir, "merge-base", parents[0], parents[1]).strip()
        commits = _git(git_dir, "rev-list", "--reverse", "--first-parent", f"{base}..{parents[1]}").split()
        if len(commits) < min_pushes or len(commits) > 40:  # a long-lived branch is not a pull request
            continue
        if len(commits) > max_pushes:
            step = (len(commits) - 1) / (max_pushes - 1)
            commits = [commits[round(i * step)] for i in range(max_pushes)]
        found.append(PullRequest(merge, base, tuple(commits)))
        if len(found) >= limit:
            break
    return found
