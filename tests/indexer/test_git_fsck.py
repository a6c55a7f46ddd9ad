"""git's object checks on real repositories crafted with objects git itself would not write:
malformed history (a 2010-style author line, an odd time zone) is accepted and named in the
notes; dangerous objects (``.git`` or ``..`` tree entries, hostile ``.gitmodules``) are refused
with ``unsafe_objects`` and git's message id, and leave no mirror behind."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from services.indexer.git.errors import GitOperationError
from services.indexer.git.mirror import ensure_mirror
from services.indexer.git.paths import validate_local_repository
from tests.indexer.support import commit, git


def _object(repo: Path, kind: str, body: bytes) -> str:
    """Write an object exactly as given: ``--literally`` skips the checks a normal write does."""
    out = subprocess.run(
        ["git", "hash-object", "-t", kind, "-w", "--literally", "--stdin"],
        cwd=repo,
        input=body,
        check=True,
        capture_output=True,
    )
    return out.stdout.decode().strip()


def _tree(repo: Path, entries: list[tuple[str, str, str]]) -> str:
    """A tree from (mode, name, sha) entries, in the order given."""
    body = b"".join(mode.encode() + b" " + name.encode() + b"\0" + bytes.fromhex(sha) for mode, name, sha in entries)
    return _object(repo, "tree", body)


def _commit_object(repo: Path, tree: str, parent: str | None, author: str, message: str) -> str:
    lines = (
        [f"tree {tree}"] + ([f"parent {parent}"] if parent else []) + [author, author.replace("author", "committer")]
    )
    return _object(repo, "commit", ("\n".join(lines) + f"\n\n{message}\n").encode())


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "allowed"
    repo = root / "project"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    commit(repo, {"app.py": "print(1)\n"}, "Initial import")
    return root, repo


def _point_main_at(repo: Path, sha: str) -> None:
    git(repo, "update-ref", "refs/heads/main", sha)


def test_malformed_history_is_accepted_and_said_in_the_notes(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path)
    head = git(repo, "rev-parse", "HEAD")
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    # werkzeug's 2010 commit: no space between the name and "<".
    old = _commit_object(repo, tree, head, "author Armin Ronacher<armin@example.com> 1270000000 +0200", "Old style")
    _point_main_at(repo, old)
    dest = tmp_path / "mirror.git"

    first = ensure_mirror(validate_local_repository(repo, [root]), dest)

    assert first.head == old
    assert len(first.notes) == 1
    assert "missingSpaceBeforeEmail" in first.notes[0]
    assert old[:12] in first.notes[0]

    # A later fetch notes what it brought: a time zone git would never write.
    odd = _commit_object(repo, tree, old, "author Bob <bob@example.com> 1270000100 +02", "Odd zone")
    _point_main_at(repo, odd)
    second = ensure_mirror(validate_local_repository(repo, [root]), dest)
    assert second.head == odd
    assert [n.split(" in ")[0] for n in second.notes] == ["accepted malformed history: git fsck badTimezone"]


def _dangerous_commit(repo: Path, case: str) -> str:
    head = git(repo, "rev-parse", "HEAD")
    blob = _object(repo, "blob", b"payload\n")
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    if case == "hasDotgit":  # a tree entry that a checkout would write into the repository's own .git
        hooks = _tree(repo, [("100755", "post-checkout", blob)])
        inner = _tree(repo, [("40000", "hooks", hooks)])
        tree = _tree(repo, [("40000", ".git", inner), ("100644", "app.py", blob)])
    elif case == "hasDotdot":
        tree = _tree(repo, [("40000", "..", _tree(repo, [("100644", "x", blob)])), ("100644", "app.py", blob)])
    elif case == "gitmodulesName":  # CVE-2018-11235: a submodule name that climbs out of .git/modules
        modules = b'[submodule "../../hooks"]\n\tpath = lib\n\turl = https://example.com/lib.git\n'
        tree = _tree(repo, [("100644", ".gitmodules", _object(repo, "blob", modules)), ("100644", "app.py", blob)])
    elif case == "gitmodulesUrl":  # a URL git would read as an option
        modules = b'[submodule "lib"]\n\tpath = lib\n\turl = -u./payload\n'
        tree = _tree(repo, [("100644", ".gitmodules", _object(repo, "blob", modules)), ("100644", "app.py", blob)])
    elif case == "gitmodulesSymlink":
        tree = _tree(repo, [("120000", ".gitmodules", _object(repo, "blob", b"app.py")), ("100644", "app.py", blob)])
    author = "author Eve <eve@example.com> 1700000000 +0000"
    return _commit_object(repo, tree, head, author, case)


@pytest.mark.parametrize("case", ["hasDotgit", "hasDotdot", "gitmodulesName", "gitmodulesUrl", "gitmodulesSymlink"])
def test_dangerous_objects_are_refused_with_gits_message_id(tmp_path: Path, case: str) -> None:
    root, repo = _repo(tmp_path)
    _point_main_at(repo, _dangerous_commit(repo, case))
    dest = tmp_path / "mirror.git"

    with pytest.raises(GitOperationError) as info:
        ensure_mirror(validate_local_repository(repo, [root]), dest)

    assert info.value.code == "unsafe_objects"
    assert case in info.value.message
    assert not dest.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name != "allowed"] == [".mirror.git.lock"]


def test_dangerous_objects_arriving_by_fetch_are_refused_too(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path)
    dest = tmp_path / "mirror.git"
    clean = ensure_mirror(validate_local_repository(repo, [root]), dest)
    _point_main_at(repo, _dangerous_commit(repo, "hasDotgit"))

    with pytest.raises(GitOperationError) as info:
        ensure_mirror(validate_local_repository(repo, [root]), dest)

    assert info.value.code == "unsafe_objects"
    assert git(dest, "rev-parse", "refs/heads/main") == clean.head  # the mirror kept what it had
