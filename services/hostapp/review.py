"""From analyzer findings to what the code host shows: line comments on changed lines only,
a check-run conclusion and summary. Pure functions, no I/O."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.contracts.v1 import analyzer_pb2
from services.hostapp.github import ChangedFile

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
SUMMARY_LIMIT = 60_000  # the code host refuses check-run summaries over 65,535 characters


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


@dataclass
class ReviewPlan:
    comments: list[dict[str, Any]] = field(default_factory=list)
    off_diff: list[analyzer_pb2.Finding] = field(default_factory=list)  # findings not on a changed line
    on_diff: int = 0  # findings on changed lines (may exceed the comment cap)


def _comment_line(finding: analyzer_pb2.Finding, changed: set[int]) -> int | None:
    start = finding.start_line
    end = max(finding.end_line, start)
    if start <= 0:
        return None
    for line in range(start, min(end, start + 500) + 1):
        if line in changed:
            return line
    return None


def _comment_body(finding: analyzer_pb2.Finding) -> str:
    body = f"**{finding.severity or 'info'}** · `{finding.rule or finding.category}`: {finding.message}"
    if finding.suggestion:
        body += f"\n\nSuggestion: {finding.suggestion}"
    return body


def plan(files: Sequence[ChangedFile], findings: Iterable[analyzer_pb2.Finding], max_comments: int) -> ReviewPlan:
    changed = {f.path: added_lines(f.patch) for f in files if f.status != "removed"}
    result = ReviewPlan()
    ordered = sorted(findings, key=lambda f: (-SEVERITY_RANK.get(f.severity, 0), f.path, f.start_line))
    for finding in ordered:
        line = _comment_line(finding, changed.get(finding.path, set()))
        if line is None:
            result.off_diff.append(finding)
            continue
        result.on_diff += 1
        if len(result.comments) < max_comments:
            body = _comment_body(finding)
            result.comments.append({"path": finding.path, "line": line, "side": "RIGHT", "body": body})
    return result


def conclusion(findings: Sequence[analyzer_pb2.Finding], fail_on: str) -> str:
    if not findings:
        return "success"
    threshold = SEVERITY_RANK.get(fail_on)
    worst = max(SEVERITY_RANK.get(f.severity, 0) for f in findings)
    if threshold is not None and worst >= threshold:
        return "failure"
    return "neutral"


def summary(result: analyzer_pb2.AnalysisResult, review: ReviewPlan, files: int) -> dict[str, str]:
    n = len(result.findings)
    counts = {s: sum(1 for f in result.findings if f.severity == s) for s in ("error", "warning", "info")}
    title = "No convention findings" if n == 0 else f"{n} convention finding{'s' if n != 1 else ''}"
    text = [
        f"Analysed {result.files_analyzed or files} changed file(s) against this repository's conventions.",
        f"Findings: {counts['error']} error, {counts['warning']} warning, {counts['info']} info.",
        f"{review.on_diff} on changed lines ({len(review.comments)} posted as review comments), "
        f"{len(review.off_diff)} elsewhere.",
    ]
    if review.off_diff:
        text.append("\nFindings outside the changed lines:")
        for f in review.off_diff[:50]:
            text.append(f"- `{f.path}:{f.start_line}` {f.severity} `{f.rule}`: {f.message}")
    return {"title": title, "summary": "\n".join(text)[:SUMMARY_LIMIT]}


def note(title: str, text: str) -> dict[str, str]:
    return {"title": title[:200], "summary": text[:SUMMARY_LIMIT]}
