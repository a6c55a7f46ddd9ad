"""One-click fixes: a finding's mechanical fix as a code-host suggested change.

A suggestion replaces whole head-side lines of one diff hunk (the code host applies it as is),
so it is offered only when it covers every line the fix must change inside that hunk: a rename
rewrites each line of the hunk that names the identifier, a line fix (re-indent, quote flip, an
idiom's replacement) rewrites its one line. Anything else is not offered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.contracts.v1 import analyzer_pb2

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
LINE_FIX_FAMILIES = ("formatting.", "idioms.")


@dataclass(frozen=True)
class Suggestion:
    start: int  # first head-side line replaced
    end: int  # last one
    text: str  # the replacement lines, each ending in a newline


def hunk_lines(patch: str, line: int) -> dict[int, str] | None:
    """The head-side lines (context and added) of the hunk that holds ``line``."""
    hunk: dict[int, str] = {}
    current = 0
    in_hunk = False
    for raw in patch.splitlines():
        match = HUNK.match(raw)
        if match:
            if line in hunk:
                return hunk
            hunk, current, in_hunk = {}, int(match.group(1)), True
            continue
        if not in_hunk or raw.startswith("\\") or raw.startswith("-"):
            continue
        hunk[current] = raw[1:]
        current += 1
    return hunk if line in hunk else None


def renamed(finding: analyzer_pb2.Finding) -> str:
    """The identifier a rename finding asks to change ("" when it is not an identifier rename)."""
    name = finding.evidence.detail["name"].text if "name" in finding.evidence.detail else ""
    name = name or finding.evidence.symbol
    if not finding.rule.startswith(("naming.", "vocabulary.")) or finding.rule == "naming.case.file":
        return ""
    return name if IDENTIFIER.fullmatch(name or "") else ""


def suggest(patch: str, finding: analyzer_pb2.Finding, line: int) -> Suggestion | None:
    if not finding.suggestion or "\n" in finding.suggestion:
        return None
    lines = hunk_lines(patch, line)
    if lines is None:
        return None
    old = renamed(finding)
    if old:
        new = finding.suggestion
        if not IDENTIFIER.fullmatch(new) or new == old:
            return None
        word = re.compile(rf"(?<![\w$]){re.escape(old)}(?![\w$])")
        hits = [n for n, text in lines.items() if word.search(text)]
        if finding.start_line not in hits:
            return None
        start, end = min(hits), max(hits)
        text = "".join(word.sub(new, lines[n]) + "\n" for n in range(start, end + 1))
        return Suggestion(start, end, text)
    one_line = finding.start_line == max(finding.end_line, finding.start_line)
    if finding.rule.startswith(LINE_FIX_FAMILIES) and one_line and finding.start_line in lines:
        original = lines[finding.start_line]
        text = finding.suggestion
        if finding.rule.startswith("idioms."):  # an idiom's fix replaces the line's text, not its indentation
            text = original[: len(original) - len(original.lstrip())] + text.strip()
        if text == original:
            return None
        return Suggestion(finding.start_line, finding.start_line, text + "\n")
    return None
