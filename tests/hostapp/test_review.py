"""Changed lines from unified-diff patches, and which findings become line comments."""

from __future__ import annotations

from services.contracts.v1 import analyzer_pb2
from services.hostapp import review
from services.hostapp.github import ChangedFile

PATCH = "\n".join(
    [
        "@@ -1,4 +1,5 @@",
        " import os",
        "-import sys",
        "+import sys, re",
        "+import json",
        " ",  # a context line that is blank
        " def main():",
        "@@ -20,3 +21,4 @@ def helper():",
        "     return 1",
        "+    # added at 22",
        " ",
        "\\ No newline at end of file",
    ]
)


def finding(path: str, line: int, severity: str = "warning", end: int = 0) -> analyzer_pb2.Finding:
    return analyzer_pb2.Finding(
        path=path, start_line=line, end_line=end or line, severity=severity, rule="naming", message=f"at {line}"
    )


def test_added_lines_follow_hunk_headers_and_skip_removed_lines() -> None:
    assert review.added_lines(PATCH) == {2, 3, 22}


def test_added_lines_of_the_fixture_patch_without_bodies_is_empty() -> None:
    assert review.added_lines("@@ -132,7 +132,7 @@ module Test @@ -1000,7 +1000,7 @@ module Test") == set()


def test_only_findings_on_changed_lines_become_comments() -> None:
    files = [ChangedFile("app.py", "modified", PATCH), ChangedFile("gone.py", "removed", "@@ -1 +0,0 @@\n-x")]
    findings = [
        finding("app.py", 2),
        finding("app.py", 5),  # context line: not changed
        finding("app.py", 20, end=22),  # a range that reaches a changed line
        finding("other.py", 3),  # a file outside the pull request
        finding("gone.py", 1),
    ]
    plan = review.plan(files, findings, max_comments=10)
    assert sorted((c["path"], c["line"], c["side"]) for c in plan.comments) == [
        ("app.py", 2, "RIGHT"),
        ("app.py", 22, "RIGHT"),
    ]
    assert sorted((f.path, f.start_line) for f in plan.off_diff) == [("app.py", 5), ("gone.py", 1), ("other.py", 3)]


def test_comment_cap_keeps_the_most_severe() -> None:
    files = [ChangedFile("app.py", "modified", PATCH)]
    both = [finding("app.py", 2, "warning"), finding("app.py", 3, "error")]
    plan = review.plan(files, both, max_comments=1)
    assert [c["line"] for c in plan.comments] == [3]
    assert plan.on_diff == 2


def test_info_findings_are_annotations_not_comments_nor_failures() -> None:
    files = [ChangedFile("app.py", "modified", PATCH)]
    quotes = [finding("app.py", 2, "info")]
    assert review.plan(files, quotes, max_comments=5).comments == []
    assert review.conclusion(quotes, "strict") == "success"
    assert [a["annotation_level"] for a in review.annotations_for(quotes)] == ["notice"]
    # A repository that wants them says so (CR_HOSTAPP_COMMENT_MIN_SEVERITY=info).
    assert len(review.plan(files, quotes, max_comments=5, min_severity="info").comments) == 1
    assert review.conclusion(quotes, "strict", "info") == "failure"


def test_conclusion_by_worst_severity() -> None:
    assert review.conclusion([], "error") == "success"
    assert review.conclusion([finding("a", 1, "warning")], "error") == "neutral"
    assert review.conclusion([finding("a", 1, "error")], "error") == "failure"
    assert review.conclusion([finding("a", 1, "warning")], "warning") == "failure"
    assert review.conclusion([finding("a", 1, "error")], "never") == "neutral"


def rename(line: int, name: str = "loadNames", fixed: str = "load_names") -> analyzer_pb2.Finding:
    evidence = analyzer_pb2.Evidence(level="strict", symbol=name)
    evidence.detail["name"].text = name
    return analyzer_pb2.Finding(
        path="app.py",
        start_line=line,
        end_line=line,
        rule="naming.case.function",
        severity="warning",
        message="rename",
        suggestion=fixed,
        evidence=evidence,
        fingerprint="fp",
    )


RENAME_PATCH = "\n".join(
    [
        "@@ -1,2 +1,7 @@",
        " import os",
        "+def loadNames():",
        "+    return os.sep",
        "+",
        "+",
        "+X = loadNames() + loadNamesToo()",
        " y = 1",
    ]
)


def test_a_rename_suggestion_covers_every_line_of_the_hunk_that_names_it() -> None:
    from services.hostapp import suggestions

    fix = suggestions.suggest(RENAME_PATCH, rename(2), 2)
    assert fix is not None
    assert (fix.start, fix.end) == (2, 6)
    assert fix.text == "def load_names():\n    return os.sep\n\n\nX = load_names() + loadNamesToo()\n"
    files = [ChangedFile("app.py", "modified", RENAME_PATCH)]
    (comment,) = review.plan(files, [rename(2)], max_comments=5).comments
    assert (comment["start_line"], comment["line"], comment["start_side"]) == (2, 6, "RIGHT")
    assert "```suggestion\ndef load_names():\n" in comment["body"]
    assert review.marked_fingerprint(comment["body"]) == "fp"


def test_no_suggestion_where_the_fix_is_not_mechanical_or_leaves_the_hunk() -> None:
    from services.hostapp import suggestions

    assert suggestions.suggest(RENAME_PATCH, rename(2, fixed="not an identifier"), 2) is None
    docstring = analyzer_pb2.Finding(path="app.py", start_line=2, end_line=2, rule="documentation.docstring.function")
    assert suggestions.suggest(RENAME_PATCH, docstring, 2) is None
    assert suggestions.suggest(RENAME_PATCH, rename(9), 9) is None  # outside every hunk
    layout = analyzer_pb2.Finding(
        path="app.py", start_line=3, end_line=3, rule="formatting.indent.width", suggestion="  return os.sep"
    )
    fix = suggestions.suggest(RENAME_PATCH, layout, 3)
    assert fix == suggestions.Suggestion(3, 3, "  return os.sep\n")


def test_an_idiom_fix_keeps_the_line_indentation() -> None:
    from services.hostapp import suggestions

    patch = "@@ -1,2 +1,4 @@\n try:\n+    go()\n+except:\n+        pass"
    bare = analyzer_pb2.Finding(
        path="app.py", start_line=3, end_line=3, rule="idioms.bare_except", suggestion="except Exception:"
    )
    assert suggestions.suggest(patch, bare, 3) == suggestions.Suggestion(3, 3, "except Exception:\n")
    nested = "@@ -1,2 +1,4 @@\n try:\n+    go()\n+    except:\n+        pass"
    assert suggestions.suggest(nested, bare, 3) == suggestions.Suggestion(3, 3, "    except Exception:\n")
