"""Unified diffs as clients send them: parsing, changed lines, applying to the indexed base."""

from __future__ import annotations

from services.analyzer.diffs import apply, parse_hunks, parse_unified_diff

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
