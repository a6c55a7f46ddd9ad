"""Co-change family: files that change together, from the indexer's history statistics.

Input pairs are ``(a, b, support, confidence)`` with confidence = P(b changes | a changes) and
support = commits that changed both; a pair given once per direction is read per direction.
"""

from __future__ import annotations

import msgspec

from services.analyzer.engine.conventions import FILE, Convention, Scope, make
from services.analyzer.engine.learning import CoChange
from services.analyzer.engine.thresholds import OFF, Thresholds

FAMILY = "cochange"
RULE = "cochange.partner"
MAX_PARTNERS = 5  # per file: beyond the strongest few, a partner list stops being a review aid


def learn(pairs: list[CoChange], thresholds: Thresholds, ignored: set[str] | None = None) -> list[Convention]:
    by_file: dict[str, list[Convention]] = {}
    for a, b, support, confidence in pairs:
        if a == b or support <= 0 or not 0 < confidence <= 1:
            continue
        if ignored and (a in ignored or b in ignored):
            continue
        commits = max(support, round(support / confidence))
        conv = make(
            FAMILY,
            RULE,
            Scope(FILE, a),
            b,
            support,
            commits,
            thresholds,
            subject=f"commits changing `{a}`",
            predicate=f"also change `{b}`",
            key=b,
            params={"partner": b},
        )
        if conv.level != OFF:
            text = f"{support} of {commits} commits that changed `{a}` ({conv.share:.0%}) also changed `{b}`"
            conv = msgspec.structs.replace(conv, description=text)
            by_file.setdefault(a, []).append(conv)
    out: list[Convention] = []
    for convs in by_file.values():
        convs.sort(key=lambda c: (-c.share, -c.support, c.choice))
        out.extend(convs[:MAX_PARTNERS])
    return out


def partners(model_conventions: list[Convention]) -> dict[str, list[Convention]]:
    out: dict[str, list[Convention]] = {}
    for conv in model_conventions:
        if conv.rule == RULE:
            out.setdefault(conv.scope.value, []).append(conv)
    return out
