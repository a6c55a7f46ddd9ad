"""The read endpoints' pool of long-lived ``git cat-file --batch`` readers."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.indexer.git.mirror import ensure_mirror
from services.indexer.git.paths import validate_local_repository
from services.indexer.git.readers import ReaderPool
from tests.indexer.support import commit, git, init_repo


def _blob_sha(repo: Path, path: str) -> str:
    return git(repo, "rev-parse", f"HEAD:{path}").strip()


@pytest.fixture
def repo_and_mirror(tmp_path: Path) -> tuple[Path, Path]:
    repo = init_repo(tmp_path / "allowed" / "src")
    commit(repo, {"a.py": "x = 1\n"}, "one")
    mirror = tmp_path / "m.git"
    ensure_mirror(validate_local_repository(repo, [tmp_path / "allowed"]), mirror)
    return repo, mirror


def test_a_reader_is_reused_and_sees_objects_fetched_after_it_started(repo_and_mirror: tuple[Path, Path]) -> None:
    repo, mirror = repo_and_mirror
    pool = ReaderPool()
    with pool.borrow(str(mirror), 1000) as first:
        blob = first.read(_blob_sha(repo, "a.py"))
        assert blob is not None
        assert blob.data == b"x = 1\n"
    commit(repo, {"b.py": "y = 2\n"}, "two")
    ensure_mirror(validate_local_repository(repo, [repo.parent]), mirror)  # a fetch: the new blob lands in a new pack
    with pool.borrow(str(mirror), 1000) as again:
        assert again is first
        blob = again.read(_blob_sha(repo, "b.py"))
        assert blob is not None
        assert blob.data == b"y = 2\n"
        assert again.read("0" * 40) is None
    pool.close()


def test_a_reader_that_failed_is_not_given_back(repo_and_mirror: tuple[Path, Path]) -> None:
    _repo, mirror = repo_and_mirror
    pool = ReaderPool()
    with pytest.raises(RuntimeError), pool.borrow(str(mirror), 1000) as broken:
        raise RuntimeError("mid-read")
    with pool.borrow(str(mirror), 1000) as fresh:
        assert fresh is not broken
    pool.close()


def test_idle_readers_are_closed_and_a_removed_mirror_is_forgotten(repo_and_mirror: tuple[Path, Path]) -> None:
    repo, mirror = repo_and_mirror
    pool = ReaderPool(idle_seconds=0.0)
    with pool.borrow(str(mirror), 1000) as first:
        pass
    with pool.borrow(str(mirror), 1000) as second:
        assert second is not first  # the idle one expired and was closed
    pool = ReaderPool()
    with pool.borrow(str(mirror), 1000) as kept:
        pass
    pool.forget(str(mirror))
    with pool.borrow(str(mirror), 1000) as other:
        assert other is not kept
        assert other.read(_blob_sha(repo, "a.py")) is not None
    pool.close()
