"""From stored reports to what the engine applies: rule calibration and conventions from reports."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from services.analyzer.engine import (
    Calibration,
    Convention,
    ExternalReport,
    Feedback,
    Thresholds,
    calibrate,
    conventions_from_reports,
)

VERDICTS = ("accepted", "fixed", "dismissed", "false_positive")
REJECTED = frozenset({"dismissed", "false_positive"})


def rule_feedback(counts: Iterable[tuple[str, str, int]]) -> list[Feedback]:
    """``(rule, verdict, n)`` rows -> one :class:`Feedback` per rule; ``reported`` = findings judged."""
    per_rule: dict[str, dict[str, int]] = {}
    for rule, verdict, n in counts:
        per_rule.setdefault(rule, dict.fromkeys(VERDICTS, 0))[verdict] = int(n)
    return [Feedback(rule=rule, reported=sum(c.values()), **c) for rule, c in sorted(per_rule.items())]


def build_calibration(counts: Iterable[tuple[str, str, int]], suppressed: Iterable[str]) -> Calibration:
    return calibrate(rule_feedback(counts), suppressed)


def calibration_rows(feedback: Sequence[Feedback], calibration: Calibration) -> list[dict[str, Any]]:
    """What ``rule_calibration`` stores: the counts people reported and the engine's verdict on them."""
    rows = []
    for fb in feedback:
        cal = calibration.rules[fb.rule]
        rows.append(
            {
                "rule": fb.rule,
                "state": cal.state,
                "reported": cal.reported,
                "accepted": fb.accepted,
                "fixed": fb.fixed,
                "dismissed": fb.dismissed,
                "false_positive": fb.false_positive,
                "false_positive_rate": cal.false_positive_rate,
                "confidence_factor": cal.confidence_factor,
            }
        )
    return rows


def report_conventions(rows: Iterable[Any], thresholds: Thresholds) -> list[Convention]:
    """External findings (rows with category/rule, path, start_line, message, source) that recur."""
    reports = [
        ExternalReport(
            category=(r.category or r.rule).strip(),
            path=r.path,
            line=r.start_line,
            message=r.message,
            source=r.source,
        )
        for r in rows
        if (r.category or r.rule).strip()
    ]
    return conventions_from_reports(reports, thresholds) if reports else []
