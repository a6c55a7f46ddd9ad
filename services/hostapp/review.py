"""From analyzer findings to what the code host shows: line comments on changed lines only
(each fingerprint once per pull request), annotations, a check-run conclusion and summary.
Pure functions, no I/O."""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.contracts.v1 import analyzer_pb2
from services.hostapp import suggestions
from services.hostapp.github import ChangedFile

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
SUMMARY_LIMIT = 60_000  # the code host refuses check-run summaries over 65,535 characters
ANNOTATION_BATCH = 50  # the code host takes at most 50 annotations per check-run request
MAX_ANNOTATIONS = 1000
FINGERPRINT_MARKER = re.compile(r"<!-- code-review fp=([0-9a-zA-Z_-]+) -->")
# Skipped reviews: never "success" (a green check on an unreviewed change is a lie).
SKIPPED_CONCLUSION = "neutral"


def added_lines(patch: str) -> set[int]:
    """Head-side line numbers that the patch adds or changes ('+' lines)."""
    lines: set[int] = set()
    line = 0
    in_hunk = False
    for raw in patch.splitlines():
        match = HUNK.match(raw)
        if match:
            line = int(match.group(1))
            in_hunk = True
            continue
        if not in_hunk or raw.startswith("\\"):  # "\ No newline at end of file"
            continue
        if raw.startswith("+"):
            lines.add(line)
            line += 1
        elif raw.startswith("-"):
            continue
        else:
            line += 1
    return lines


def review_marker(job_id: str) -> str:
    """Hidden in the review body so a redelivered job finds the review it already posted."""
    return f"<!-- code-review job={job_id} -->"


def fingerprint_marker(fingerprint: str) -> str:
    """Hidden in each line comment: the comment's finding, read back to record its id."""
    return f"<!-- code-review fp={fingerprint} -->"


def marked_fingerprint(body: str) -> str:
    match = FINGERPRINT_MARKER.search(body)
    return match.group(1) if match else ""


def is_strict(finding: analyzer_pb2.Finding) -> bool:
    """Strict findings rest on a convention the repository keeps; loose ones are hints, never
    commented and never failing (a finding without evidence is judged strict)."""
    return finding.evidence.level != "loose"


def reviewed(finding: analyzer_pb2.Finding, min_severity: str = "warning") -> bool:
    """Worth a person's attention: strict, and at least ``min_severity`` (an ``info`` finding,
    such as a quote style, is an annotation, never a comment or a failure, by default)."""
    rank = SEVERITY_RANK.get(finding.severity, 0)
    return is_strict(finding) and rank >= SEVERITY_RANK.get(min_severity, 0)


def key(finding: analyzer_pb2.Finding) -> str:
    return finding.fingerprint or f"{finding.rule}:{finding.path}:{finding.start_line}"


@dataclass
class Split:
    """One analysis as the pull request sees it."""

    new: list[analyzer_pb2.Finding] = field(default_factory=list)  # what this change introduced
    already: list[analyzer_pb2.Finding] = field(default_factory=list)  # also at the base: never commented
    ignored: list[analyzer_pb2.Finding] = field(default_factory=list)  # a rule turned off by a command
    quiet: list[analyzer_pb2.Finding] = field(default_factory=list)  # a person dismissed it on this PR
    already_count: int = 0  # all of them (the analyzer lists a capped number)

    def present(self) -> set[str]:
        return {key(f) for f in (*self.new, *self.already, *self.ignored, *self.quiet)}


def split(
    introduced: Iterable[analyzer_pb2.Finding],
    preexisting: Iterable[analyzer_pb2.Finding],
    ignored_rules: set[str],
    dismissed: set[str],
    *,
    already_count: int = 0,
) -> Split:
    out = Split(already=list(preexisting))
    out.already_count = max(already_count, len(out.already))
    for f in introduced:
        if any(f.rule == r or f.rule.startswith(r + ".") for r in ignored_rules):
            out.ignored.append(f)
        elif key(f) in dismissed:
            out.quiet.append(f)
        else:
            out.new.append(f)
    return out


@dataclass
class ReviewPlan:
    comments: list[dict[str, Any]] = field(default_factory=list)
    commented: list[analyzer_pb2.Finding] = field(default_factory=list)  # the findings of ``comments``
    off_diff: list[analyzer_pb2.Finding] = field(default_factory=list)  # findings not on a changed line
    on_diff: int = 0  # strict findings on changed lines (may exceed the comment cap)
    kept: int = 0  # already commented on an earlier push: the thread stays, nothing is re-posted


def _comment_line(finding: analyzer_pb2.Finding, changed: set[int]) -> int | None:
    start = finding.start_line
    end = max(finding.end_line, start)
    if start <= 0:
        return None
    for line in range(start, min(end, start + 500) + 1):
        if line in changed:
            return line
    return None


def _comment_body(finding: analyzer_pb2.Finding, suggestion: str | None) -> str:
    body = f"**{finding.severity or 'info'}** · `{finding.rule or finding.category}`: {finding.message}"
    if suggestion is not None:
        body += f"\n\n```suggestion\n{suggestion}```"
    elif finding.suggestion:
        body += f"\n\nSuggestion: {finding.suggestion}"
    body += (
        f"\n\n<sub>👍 / 👎 tell the reviewer whether this helps; `ignore {finding.rule}` "
        f"after a mention of the app turns the rule off for this repository.</sub>"
    )
    return body + "\n" + fingerprint_marker(key(finding))


def plan(
    files: Sequence[ChangedFile],
    findings: Iterable[analyzer_pb2.Finding],
    max_comments: int,
    *,
    known: Container[str] = frozenset(),
    comments: bool = True,
    min_severity: str = "warning",
) -> ReviewPlan:
    """Line comments for strict findings on added lines whose fingerprint has no thread yet."""
    by_path = {f.path: f for f in files if f.status != "removed"}
    changed = {path: added_lines(f.patch) for path, f in by_path.items()}
    result = ReviewPlan()
    ordered = sorted(findings, key=lambda f: (-SEVERITY_RANK.get(f.severity, 0), f.path, f.start_line))
    for finding in ordered:
        line = _comment_line(finding, changed.get(finding.path, set())) if reviewed(finding, min_severity) else None
        if line is None:
            result.off_diff.append(finding)
            continue
        result.on_diff += 1
        if key(finding) in known:
            result.kept += 1
            continue
        if comments and len(result.comments) < max_comments:
            fix = suggestions.suggest(by_path[finding.path].patch, finding, line)
            comment: dict[str, Any] = {"path": finding.path, "line": line, "side": "RIGHT"}
            if fix is not None:
                comment["line"] = fix.end
                if fix.start != fix.end:
                    comment.update(start_line=fix.start, start_side="RIGHT")
            comment["body"] = _comment_body(finding, fix.text if fix else None)
            result.comments.append(comment)
            result.commented.append(finding)
    return result


def conclusion(new: Sequence[analyzer_pb2.Finding], fail_on: str, min_severity: str = "warning") -> str:
    """``success`` without a new strict finding (of at least ``min_severity``); otherwise
    ``failure`` by ``fail_on`` (``strict``: any of them, the default; ``error``: a new strict
    error; ``never``: ``neutral`` at worst)."""
    strict = [f for f in new if reviewed(f, min_severity)]
    if not strict:
        return "success"
    if fail_on == "strict":
        return "failure"
    threshold = SEVERITY_RANK.get(fail_on)
    worst = max(SEVERITY_RANK.get(f.severity, 0) for f in strict)
    if threshold is not None and worst >= threshold:
        return "failure"
    return "neutral"


def annotations_for(new: Sequence[analyzer_pb2.Finding], min_severity: str = "warning") -> list[dict[str, Any]]:
    """Check-run annotations for what the change introduced: strict findings warn (an error
    fails), loose ones are notices."""
    out: list[dict[str, Any]] = []
    for f in sorted(new, key=lambda f: (f.path, f.start_line)):
        if f.start_line <= 0:
            continue
        level = "notice"
        if reviewed(f, min_severity):
            level = "failure" if f.severity == "error" else "warning"
        out.append(
            {
                "path": f.path,
                "start_line": f.start_line,
                "end_line": max(f.end_line, f.start_line),
                "annotation_level": level,
                "title": (f.rule or f.category)[:255],
                "message": f.message[:64_000],
            }
        )
    return out[:MAX_ANNOTATIONS]


def batches(items: Sequence[dict[str, Any]], size: int = ANNOTATION_BATCH) -> list[list[dict[str, Any]]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def summary(
    result: analyzer_pb2.AnalysisResult,
    parts: Split,
    review: ReviewPlan,
    files: int,
    *,
    fixed: int = 0,
    fixed_now: Sequence[str] = (),
    min_severity: str = "warning",
) -> dict[str, str]:
    strict = [f for f in parts.new if reviewed(f, min_severity)]
    n = sum(1 + f.more for f in strict)  # with those of a rule the analysis did not list one by one
    title = "No new convention findings" if n == 0 else f"{n} new convention finding{'s' if n != 1 else ''}"
    text = [
        f"Analysed {result.files_analyzed or files} changed file(s) against this repository's conventions.",
        "",
        "| | findings |",
        "|---|---|",
        f"| new | {n} |",
        f"| new hints (loose conventions or below {min_severity}, not commented) | "
        f"{sum(1 + f.more for f in parts.new) - n} |",
        f"| already there (also at the base, not commented) | {parts.already_count} |",
        f"| fixed on this pull request | {fixed} |",
        f"| dismissed on this pull request | {len(parts.quiet)} |",
        f"| ignored rules | {len(parts.ignored)} |",
        "",
        f"{review.on_diff} new on changed lines: {len(review.comments)} commented now, "
        f"{review.kept} already commented on an earlier push.",
    ]
    if fixed_now:
        text.append(f"Fixed by this push: {', '.join(f'`{r}`' for r in fixed_now)}.")
    by_rule: dict[str, list[int]] = {}
    for i, group in enumerate((parts.new, parts.already)):
        for f in group:
            by_rule.setdefault(f.rule or f.category, [0, 0])[i] += 1 + f.more
    if by_rule:
        text += ["", "| rule | new | already there |", "|---|---|---|"]
        text += [f"| `{rule}` | {a} | {b} |" for rule, (a, b) in sorted(by_rule.items())]
    if review.off_diff:
        text.append("\nNew findings outside the changed lines:")
        for f in review.off_diff[:50]:
            text.append(f"- `{f.path}:{f.start_line}` {f.severity} `{f.rule}`: {f.message}")
    return {"title": title, "summary": "\n".join(text)[:SUMMARY_LIMIT]}


def note(title: str, text: str) -> dict[str, str]:
    return {"title": title[:200], "summary": text[:SUMMARY_LIMIT]}


def skipped(reason: str, text: str) -> dict[str, str]:
    """A review that did not happen says so in its title."""
    return note(f"Not reviewed: {reason}", text)


def baseline(
    result: analyzer_pb2.AnalysisResult,
) -> tuple[list[analyzer_pb2.Finding], list[analyzer_pb2.Finding]]:
    """(introduced, already there): the analyzer decides what a change introduced, comparing
    with the pull request's base (``AnalysisResult.preexisting``)."""
    return list(result.findings), list(result.preexisting)
