"""One rule's repeats, capped: the first few findings of a rule are shown, the last of them says
how many more there are.

A file's check caps per file (``CheckPrefs.max_per_rule``); a review of a change caps the same
way per change (``review.cap_change``): mistune's type-hint pull request requoted the lines it
touched in 28 files and got 84 quote findings at three a file, one nit said 84 times.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import msgspec

from services.analyzer.engine.findings import Finding
from services.analyzer.engine.thresholds import level_rank


def capped(findings: Sequence[Finding], cap: int) -> tuple[list[Finding], Counter[str]]:
    """At most ``cap`` findings per rule, strict ones first, then in path and line order (a loose
    finding earlier in the file must not push a strict one out: loose reports all that strict
    does, and more); the kept ones in their own order, and how many of each rule were left out."""
    total = Counter(f.rule for f in findings)
    if all(n <= cap for n in total.values()):
        return list(findings), Counter()
    ranked = sorted(
        range(len(findings)), key=lambda i: (-level_rank(findings[i].level), findings[i].path, findings[i].start_line)
    )
    shown: Counter[str] = Counter()
    keep: set[int] = set()
    for i in ranked:
        rule = findings[i].rule
        if shown[rule] < cap:
            shown[rule] += 1
            keep.add(i)
    left_out = Counter({rule: n - shown[rule] for rule, n in total.items() if n > shown[rule]})
    return [f for i, f in enumerate(findings) if i in keep], left_out


def noted(findings: list[Finding], left_out: Counter[str], where: str) -> list[Finding]:
    """``findings`` with the last one of each rule in ``left_out`` saying how many more there are
    ``where`` ("in this file", "in this change"), in its message and in ``more``."""
    out = list(findings)
    for rule, extra in left_out.items():
        at = next((i for i in range(len(out) - 1, -1, -1) if out[i].rule == rule), None)
        if at is not None and extra > 0:
            last = out[at]
            out[at] = msgspec.structs.replace(last, message=f"{last.message} ({extra} more {where})", more=extra)
    return out
