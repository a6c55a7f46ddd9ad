"""The commit list history statistics are computed from, cached per repository.

Reading ``git log --numstat`` for thousands of commits costs seconds, and an incremental
index usually adds a commit or two. The cache (msgpack, next to the mirror) keeps the parsed
commits of the last index; the next one reads only the commits that are new since then and
falls back to a full read whenever that cannot be proven equivalent (history rewritten,
merges in between, a different depth, an unreadable cache file).
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

import msgspec

from services.indexer.git import Commit, GitError, read_log, run_git, validate_sha

log = logging.getLogger(__name__)


class _Cache(msgspec.Struct):
    head: str
    depth: int
    commits: list[Commit]


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(_Cache)


def _load(path: Path, depth: int) -> _Cache | None:
    try:
        cache = _decoder.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    return cache if cache.depth == depth else None


def _save(path: Path, cache: _Cache) -> None:
    tmp = path.with_suffix(".tmp")
    with contextlib.suppress(OSError):
        tmp.write_bytes(_encoder.encode(cache))
        os.replace(tmp, path)


def _new_since(mirror: Path, old: str, new: str, depth: int) -> list[str] | None:
    """Non-merge commits in ``old..new`` newest first, or None when ``old`` is not an ancestor."""
    validate_sha(old)
    validate_sha(new)
    ancestor = run_git(["merge-base", "--is-ancestor", old, new], git_dir=mirror, check=False)
    if ancestor.returncode != 0:
        return None
    listing = run_git(["rev-list", "--no-merges", f"--max-count={depth}", new, f"^{old}"], git_dir=mirror)
    return listing.stdout.decode("ascii").split()


def commits_for(
    mirror: Path, commit: str, depth: int, cache_path: Path | None, known: tuple[str, list[Commit]] | None = None
) -> list[Commit]:
    """Newest-first commits reachable from ``commit`` (at most ``depth``), reusing the cache.

    ``known`` = (head, its commits) held in memory by the last index of this process: used
    instead of the file, which is then left as it is (it may lag behind; reading it later
    only costs reading more new commits)."""
    if known is not None:
        cached: _Cache | None = _Cache(known[0], depth, known[1])
    else:
        cached = _load(cache_path, depth) if cache_path is not None else None
    commits: list[Commit] | None = None
    if cached is not None:
        if cached.head == commit:
            commits = cached.commits
        else:
            try:
                fresh_shas = _new_since(mirror, cached.head, commit, depth)
            except GitError:
                fresh_shas = None
            if fresh_shas is not None and len(fresh_shas) < depth:
                fresh = list(read_log(mirror, commit, max_commits=len(fresh_shas))) if fresh_shas else []
                # git log orders by date; only an exact match with the ancestry walk is trusted.
                if [c.sha for c in fresh] == fresh_shas:
                    commits = (fresh + cached.commits)[:depth]
    if commits is None:
        commits = list(read_log(mirror, commit, max_commits=depth))
    if cache_path is not None and known is None:
        _save(cache_path, _Cache(commit, depth, commits))
    return commits
