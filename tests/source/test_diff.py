"""Unified diffs (services/source/diff.py, the indexer's and the analyzer's one parser): parsing,
changed lines and ranges, applying to the indexed base."""

from __future__ import annotations

from services.source.diff import apply, parse_hunks, parse_unified_diff

BASE = "a\nb\nc\nd\ne\nf\ng\nh\n"

GIT_DIFF = """diff --git a/x.txt b/x.txt
index 1111111..2222222 100644
--- a/x.txt
+++ b/x.txt
@@ -1,3 +1,3 @@
 a
-b
+B
 c
@@ -7,2 +7,4 @@
 g
 h
+i
+j
\\ No newline at end of file
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-one
diff --git a/n.txt b/n.txt
new file mode 100644
--- /dev/null
+++ b/n.txt
@@ -0,0 +1,2 @@
+new
+-- not a header
diff --git a/old.py b/new.py
similarity index 90%
rename from old.py
rename to new.py
--- a/old.py
+++ b/new.py
@@ -1 +1 @@
-x = 1
+x = 2
diff --git a/logo.png b/logo.png
Binary files a/logo.png and b/logo.png differ
"""


def test_git_diff_files_statuses_and_added_lines() -> None:
    files = {f.path: f for f in parse_unified_diff(GIT_DIFF)}
    assert {p: f.status for p, f in files.items()} == {
        "x.txt": "modified",
        "gone.txt": "deleted",
        "n.txt": "added",
        "new.py": "renamed",
        "logo.png": "modified",
    }
    assert files["x.txt"].added_lines() == {2, 9, 10}
    assert files["gone.txt"].added_lines() == set()
    assert files["n.txt"].new_text() == "new\n-- not a header\n"
    assert files["new.py"].old_path == "old.py"
    assert files["logo.png"].binary


def test_apply_recovers_the_head_side() -> None:
    hunks = {f.path: f for f in parse_unified_diff(GIT_DIFF)}["x.txt"].hunks
    assert apply(BASE, hunks) == "a\nB\nc\nd\ne\nf\ng\nh\ni\nj"
    # A base with two extra lines on top still applies (hunks are located by content).
    assert apply("z\nz\n" + BASE, hunks) == "z\nz\na\nB\nc\nd\ne\nf\ng\nh\ni\nj"
    # A base the hunks do not fit is refused rather than patched wrongly.
    assert apply("q\nr\n", hunks) is None


def test_code_host_patch_without_headers() -> None:
    hunks = parse_hunks("@@ -2,0 +3,2 @@ def f\n+x = 1\n+\n")
    assert [h.lines for h in hunks] == [["+x = 1", "+"]]
    assert apply("a\nb\nc\n", hunks) == "a\nb\nx = 1\n\nc\n"


def test_plain_diff_without_git_headers() -> None:
    text = "--- x.txt\t2024-01-01\n+++ x.txt\t2024-01-02\n@@ -1,2 +1,2 @@\n--- old dashes\n+new\n a\n"
    [diff] = parse_unified_diff(text)
    assert diff.path == "x.txt"
    assert diff.added_lines() == {1}
    assert apply("-- old dashes\na\n", diff.hunks) == "new\na\n"


def test_one_parse_serves_the_indexer_and_the_analyzer() -> None:
    # The indexer reads ranges and counts of git's -U0 output, the analyzer lines and hunks:
    # the same FileDiff gives both.
    text = (
        'diff --git "a/tab\\there.py" "b/tab\\there.py"\n'
        "index 1..2 100644\n"
        '--- "a/tab\\there.py"\n'
        '+++ "b/tab\\there.py"\n'
        "@@ -2,2 +2,3 @@\n"
        "-x\n"
        "-y\n"
        "+X\n"
        "+Y\n"
        "+Z\n"
        "@@ -9 +10 @@\n"
        "-q\n"
        "+Q\n"
        "diff --git a/src/a.py b/src/b.py\n"
        "similarity index 100%\n"
        "copy from src/a.py\n"
        "copy to src/b.py\n"
    )
    quoted, copied = parse_unified_diff(text)
    assert quoted.path == "tab\there.py"
    assert quoted.added_lines() == {2, 3, 4, 10}
    assert quoted.added_ranges() == [(2, 4), (10, 10)]
    assert (quoted.added, quoted.deleted) == (4, 3)
    assert (copied.path, copied.status, copied.old_path, copied.hunks) == ("src/b.py", "copied", "src/a.py", [])


def test_a_truncated_hunk_keeps_what_it_has() -> None:
    [diff] = parse_unified_diff("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b")
    assert [h.lines for h in diff.hunks] == [[" a", "-b"]]
    assert diff.added_lines() == set()
