"""Mirrors, trees, blobs, logs and diffs on real repositories built with the git CLI."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.indexer.git.diff import LineRange, changed_files, changes_in_diff, staged_changes
from services.indexer.git.errors import GitInputError, GitOperationError
from services.indexer.git.log import FileChange, read_log
from services.indexer.git.mirror import ensure_mirror, resolve_ref
from services.indexer.git.paths import validate_local_repository
from services.indexer.git.tree import BlobReader, list_tree
from tests.indexer.support import T0, git

BINARY = bytes(range(256)) * 4


@dataclass
class Source:
    root: Path  # the allowed root holding the source repository
    repo: Path
    shas: list[str]  # oldest first
    sub_sha: str


def _write(repo: Path, path: str, text: str | bytes) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Source:
    root = tmp_path_factory.mktemp("allowed")
    repo = root / "project"
    repo.mkdir()
    git(repo, "init", "-q")
    _write(repo, "src/app.py", "import util\n\ndef main():\n    return 1\n")
    _write(repo, "README.md", "# project\n")
    _write(repo, "data.bin", BINARY)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "Initial import")
    _write(repo, "src/app.py", "import util\n\ndef main():\n    return util.two()\n\nmain()\n")
    _write(repo, "src/util.py", "def two():\n    return 2\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "Fix crash on startup", who="bob", at=T0 + 1000)
    git(repo, "mv", "src/util.py", "src/helpers.py")
    os.symlink("/etc/passwd", repo / "link_out")
    _write(repo, "data.bin", BINARY[::-1])
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "Rename util to helpers", at=T0 + 2000)
    sub_sha = git(repo, "rev-parse", "HEAD")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sub_sha},vendor/lib")
    git(repo, "commit", "-qm", "Vendor lib as a submodule", who="carol", at=T0 + 3000)
    shas = git(repo, "rev-list", "--reverse", "HEAD").split()
    return Source(root=root, repo=repo, shas=shas, sub_sha=sub_sha)


@pytest.fixture(scope="module")
def mirror(source: Source, tmp_path_factory: pytest.TempPathFactory) -> Path:
    local = validate_local_repository(source.repo, [source.root])
    result = ensure_mirror(local, tmp_path_factory.mktemp("data") / "project.git")
    assert result.created
    return result.path


# --- mirrors --------------------------------------------------------------------------------


def test_mirror_is_cloned_then_fetched_with_prune(tmp_path: Path) -> None:
    root = tmp_path / "allowed"
    repo = root / "r"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    _write(repo, "a.txt", "1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    git(repo, "branch", "feature")
    local = validate_local_repository(repo, [root])
    dest = tmp_path / "data" / "r.git"

    first = ensure_mirror(local, dest, token="ignored-for-local")
    assert first.created
    assert first.head == git(repo, "rev-parse", "HEAD")
    assert not (dest / "hooks").exists()  # --template= : no sample hooks copied
    assert "ignored-for-local" not in (dest / "config").read_text()
    assert git(dest, "for-each-ref", "--format=%(refname)").split() == ["refs/heads/feature", "refs/heads/main"]

    _write(repo, "a.txt", "2\n")
    git(repo, "commit", "-qam", "two", at=T0 + 10)
    git(repo, "branch", "-D", "feature")
    git(repo, "tag", "v1")
    second = ensure_mirror(local, dest)
    assert not second.created
    assert second.head == git(repo, "rev-parse", "HEAD") != first.head
    assert git(dest, "for-each-ref", "--format=%(refname)").split() == ["refs/heads/main", "refs/tags/v1"]
    assert sorted(p.name for p in dest.parent.iterdir()) == [".r.git.lock", "r.git"]


def test_mirror_over_size_budget_fails_and_leaves_nothing(source: Source, tmp_path: Path) -> None:
    local = validate_local_repository(source.repo, [source.root])
    with pytest.raises(GitOperationError) as info:
        ensure_mirror(local, tmp_path / "big.git", max_size_bytes=2000)
    assert info.value.code == "repository_too_large"
    assert [p.name for p in tmp_path.iterdir()] == [".big.git.lock"]


def test_empty_repository_is_detected(tmp_path: Path) -> None:
    root = tmp_path / "allowed"
    (root / "empty").mkdir(parents=True)
    git(root / "empty", "init", "-q")
    result = ensure_mirror(validate_local_repository(root / "empty", [root]), tmp_path / "empty.git")
    assert result.head is None
    with pytest.raises(GitOperationError) as info:
        resolve_ref(result.path)
    assert info.value.code == "empty_repository"


def test_resolve_ref(mirror: Path, source: Source) -> None:
    assert resolve_ref(mirror) == source.shas[-1]
    assert resolve_ref(mirror, "main~1") == source.shas[-2]
    with pytest.raises(GitOperationError) as info:
        resolve_ref(mirror, "no-such-branch")
    assert info.value.code == "ref_not_found"
    with pytest.raises(GitInputError):
        resolve_ref(mirror, "--upload-pack=touch /tmp/x")


# --- trees and blobs -----------------------------------------------------------------------


def test_list_tree_records_symlinks_and_submodules_without_following(mirror: Path, source: Source) -> None:
    entries = {e.path: e for e in list_tree(mirror, source.shas[-1])}
    assert sorted(entries) == ["README.md", "data.bin", "link_out", "src/app.py", "src/helpers.py", "vendor/lib"]
    link = entries["link_out"]
    assert (link.mode, link.size, link.is_symlink) == ("120000", len("/etc/passwd"), True)
    sub = entries["vendor/lib"]
    assert (sub.mode, sub.blob_sha, sub.size, sub.is_submodule) == ("160000", source.sub_sha, None, True)
    assert entries["data.bin"].size == len(BINARY)
    assert entries["src/app.py"].is_regular


def test_blob_reader_reads_many_through_one_process(mirror: Path, source: Source) -> None:
    entries = {e.path: e for e in list_tree(mirror, source.shas[-1])}
    with BlobReader(mirror, max_bytes=100) as reader:
        pid = reader._stream.proc.pid
        link = reader.read(entries["link_out"].blob_sha)
        assert link is not None
        assert link.data == b"/etc/passwd"
        app = reader.read(entries["src/app.py"].blob_sha)
        assert app is not None
        assert app.data.startswith(b"import util")
        data = reader.read(entries["data.bin"].blob_sha)
        assert data is not None
        assert (data.size, len(data.data), data.truncated) == (1024, 100, True)
        assert data.data == BINARY[::-1][:100]
        assert reader.read("0" * 40) is None
        assert b"".join(reader.iter_chunks(entries["data.bin"].blob_sha, chunk_size=300)) == BINARY[::-1]
        chunks = reader.iter_chunks(entries["data.bin"].blob_sha, chunk_size=10)
        next(chunks)
        chunks.close()  # abandoning a stream must not desync the next read
        again = reader.read(entries["README.md"].blob_sha)
        assert again is not None
        assert again.data == b"# project\n"
        commit = reader.read(source.shas[0])
        assert commit is not None
        assert commit.type == "commit"
        assert reader._stream.proc.pid == pid
        with pytest.raises(GitInputError):
            reader.read("HEAD:src/app.py")
    assert reader._stream.proc.poll() is not None


# --- log ---------------------------------------------------------------------------------


def test_read_log_numstat_binary_and_renames(mirror: Path, source: Source) -> None:
    commits = list(read_log(mirror, "HEAD", 100))
    assert [c.sha for c in commits] == source.shas[::-1]
    assert [c.subject for c in commits] == [
        "Vendor lib as a submodule",
        "Rename util to helpers",
        "Fix crash on startup",
        "Initial import",
    ]
    vendor, rename, fix, initial = commits
    assert (fix.author_email, fix.author_name, fix.timestamp) == ("bob@example.com", "Bob", T0 + 1000)
    assert sorted(initial.files) == [
        FileChange("README.md", 1, 0),
        FileChange("data.bin", 0, 0),
        FileChange("src/app.py", 4, 0),
    ]
    assert sorted(fix.files) == [FileChange("src/app.py", 3, 1), FileChange("src/util.py", 2, 0)]
    assert sorted(rename.files) == [
        FileChange("data.bin", 0, 0),
        FileChange("link_out", 1, 0),
        FileChange("src/helpers.py", 2, 0),
        FileChange("src/util.py", 0, 2),
    ]
    assert vendor.files == [FileChange("vendor/lib", 1, 0)]
    renamed = list(read_log(mirror, "HEAD", 100, detect_renames=True))[1]
    assert FileChange("src/helpers.py", 0, 0) in renamed.files
    assert "src/util.py" not in [f.path for f in renamed.files]
    assert len(list(read_log(mirror, "HEAD", 2))) == 2


def test_read_log_stops_git_when_abandoned(mirror: Path) -> None:
    log = read_log(mirror, "HEAD", 100)
    assert next(log).subject == "Vendor lib as a submodule"
    log.close()
    with pytest.raises(GitInputError):
        next(read_log(mirror, "-n1"))


# --- diffs ---------------------------------------------------------------------------------


def test_changed_files_between_commits(mirror: Path, source: Source) -> None:
    diffs = {d.path: d for d in changed_files(mirror, source.shas[0], source.shas[2])}
    assert sorted(diffs) == ["data.bin", "link_out", "src/app.py", "src/helpers.py"]
    app = diffs["src/app.py"]
    assert (app.status, app.ranges, app.added, app.deleted) == ("modified", [LineRange(4, 6)], 3, 1)
    assert diffs["data.bin"].binary
    assert diffs["data.bin"].status == "modified"
    assert (diffs["link_out"].status, diffs["link_out"].ranges) == ("added", [LineRange(1, 1)])
    helpers = diffs["src/helpers.py"]
    assert (helpers.status, helpers.ranges) == ("added", [LineRange(1, 2)])
    assert len(helpers.blob_sha) == 40
    assert helpers.base_sha == ""  # added: no base side
    assert len(app.base_sha) == 40
    assert app.base_sha != app.blob_sha

    renamed = {d.path: d for d in changed_files(mirror, source.shas[1], source.shas[2])}["src/helpers.py"]
    assert (renamed.status, renamed.old_path, renamed.ranges) == ("renamed", "src/util.py", [])
    with pytest.raises(GitInputError):
        changed_files(mirror, "--output=/tmp/x", "HEAD")


def test_staged_changes_of_a_local_worktree(tmp_path: Path) -> None:
    root = tmp_path / "allowed"
    repo = root / "w"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    _write(repo, "keep.py", "a = 1\nb = 2\nc = 3\n")
    _write(repo, "gone.py", "x = 1\n")
    git(repo, "add", ".")
    local = validate_local_repository(repo, [root])
    initial = {s.diff.path: s for s in staged_changes(local)}  # before the first commit
    assert sorted(initial) == ["gone.py", "keep.py"]
    assert initial["keep.py"].content == b"a = 1\nb = 2\nc = 3\n"

    git(repo, "commit", "-qm", "base")
    _write(repo, "keep.py", "a = 1\nb = 20\nc = 3\nd = 4\n")
    git(repo, "add", "keep.py")
    git(repo, "rm", "-q", "gone.py")
    _write(repo, "keep.py", "unstaged edit\n")  # the work tree differs from the index
    staged = {s.diff.path: s for s in staged_changes(local)}
    keep, gone = staged["keep.py"], staged["gone.py"]
    assert (keep.diff.status, keep.diff.ranges) == ("modified", [LineRange(2, 2), LineRange(4, 4)])
    assert keep.content == b"a = 1\nb = 20\nc = 3\nd = 4\n"
    assert (gone.diff.status, gone.content) == ("deleted", None)
    # The base side, HEAD's blob: what the analyzer tells the change's own findings from.
    assert (keep.base, gone.base) == (b"a = 1\nb = 2\nc = 3\n", b"x = 1\n")
    assert initial["keep.py"].base is None  # nothing before the first commit


CLIENT_DIFF = """\
diff --git a/src/a.py b/src/a.py
index 1111111..2222222 100644
--- a/src/a.py
+++ b/src/a.py
@@ -1,5 +1,6 @@
 import os
--- a removed line that looks like a header
+import sys
+
 def f():
     pass
@@ -20,2 +21,0 @@ def g():
-x = 1
-y = 2
diff --git a/old name.py b/new name.py
similarity index 90%
rename from old name.py
rename to new name.py
--- a/old name.py\t
+++ b/new name.py\t
@@ -3 +3 @@
-a
+b
diff --git "a/tab\\there.py" "b/tab\\there.py"
new file mode 100644
--- /dev/null
+++ "b/tab\\there.py"
@@ -0,0 +1,2 @@
+one
+two
\\ No newline at end of file
diff --git a/img.png b/img.png
deleted file mode 100644
Binary files a/img.png and /dev/null differ
"""


def test_parse_client_unified_diff() -> None:
    diffs = {d.path: d for d in changes_in_diff(CLIENT_DIFF)}
    assert sorted(diffs) == ["img.png", "new name.py", "src/a.py", "tab\there.py"]
    a = diffs["src/a.py"]
    assert (a.status, a.ranges, a.added, a.deleted) == ("modified", [LineRange(2, 3)], 2, 3)
    moved = diffs["new name.py"]
    assert (moved.status, moved.old_path, moved.ranges) == ("renamed", "old name.py", [LineRange(3, 3)])
    assert (diffs["tab\there.py"].status, diffs["tab\there.py"].ranges) == ("added", [LineRange(1, 2)])
    assert (diffs["img.png"].status, diffs["img.png"].binary) == ("deleted", True)


def test_parse_plain_diff_and_reject_escaping_paths() -> None:
    plain = "--- lib/x.c\t2024-01-01 00:00:00\n+++ lib/x.c\t2024-01-02 00:00:00\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
    (only,) = changes_in_diff(plain)
    assert (only.path, only.status, only.ranges) == ("lib/x.c", "modified", [LineRange(2, 2)])
    for old, new in [("a/../../etc/passwd", "b/../../etc/passwd"), ("/etc/passwd", "/etc/passwd")]:
        hostile = f"--- {old}\n+++ {new}\n@@ -1 +1 @@\n-a\n+b\n"
        with pytest.raises(GitInputError) as info:
            changes_in_diff(hostile)
        assert info.value.code == "validation_failed"
    with pytest.raises(GitInputError):
        changes_in_diff("diff --git a/.git/config b/.git/config\nindex 1..2 100644\n")
    with pytest.raises(GitInputError):
        changes_in_diff("x" * 100, max_bytes=10)


def test_read_log_of_a_missing_ref_fails_cleanly(mirror: Path) -> None:
    with pytest.raises(GitOperationError) as info:
        list(read_log(mirror, "no-such-branch"))
    assert info.value.code == "git_failed"
