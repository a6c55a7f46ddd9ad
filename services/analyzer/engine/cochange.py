"""Co-change family: files that change together, from the indexer's history statistics.

Input pairs are ``(a, b, support, confidence)`` with confidence = P(b changes | a changes) and
support = commits that changed both; a pair given once per direction is read per direction.

Two rules, both association rules ``a -> b`` judged by the thresholds on (confidence, commits of
``a``), as in ROSE (Zimmermann et al., ICSE 2004):

- ``cochange.routine``: ``b`` changes in most commits of the repository (its base rate
  P(b) >= ``ROUTINE_SHARE``: a changelog, the version module). That ``a``'s commits change it too
  says little about ``a``, so the finding says what it is, "this change leaves out a file that
  nearly every change touches", and is reported once per change, not once per changed file.
- ``cochange.partner``: any other ``b``, kept only when the rule's lift, confidence / P(b), is at
  least ``MIN_LIFT``: ``a`` changing must make ``b`` clearly likelier than it is anyway (the
  interest measure of association rules; Brin et al., SIGMOD 1997).

P(b) needs the number of commits the statistics come from. The commits of every file with a pair
follow from its pairs (support / confidence); the number of commits does not, so without
``history_commits`` it is estimated from below by the largest union ``|A or B|`` of any pair. A
low estimate overstates P(b) and understates lift: findings become fewer, never bolder, and the
evidence says "at most" / "at least". Under ``MIN_HISTORY`` commits no base rate is used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from services.analyzer.engine.conventions import FILE, Convention, Scope, make
from services.analyzer.engine.learn_inputs import CoChange
from services.analyzer.engine.thresholds import OFF, Thresholds

FAMILY = "cochange"
RULE = "cochange.partner"
ROUTINE_RULE = "cochange.routine"
RULES = (RULE, ROUTINE_RULE)
MAX_PARTNERS = 5  # per file and rule: beyond the strongest few, a partner list stops being a review aid
# Chosen with ``python -m bench.cochange`` (see docs/review.md, "Co-change replay").
ROUTINE_SHARE = 0.9  # a file changed in at least this share of all commits is routine
MIN_LIFT = 3.0  # a partner must be at least this much likelier after ``a`` changed than overall
MIN_HISTORY = 8  # commits below which base rates are not trusted (both rules then act as one)


def file_commits(pairs: Iterable[CoChange]) -> dict[str, int]:
    """Commits of every file that is the source of a pair (support / confidence)."""
    out: dict[str, int] = {}
    for a, _b, support, confidence in pairs:
        if support > 0 and 0 < confidence <= 1:
            out[a] = max(out.get(a, 0), support, round(support / confidence))
    return out


def commits_lower_bound(pairs: Iterable[CoChange], commits: Mapping[str, int]) -> int:
    """The fewest commits the pairs can come from: the largest ``|A| + |B| - |A and B|``."""
    best = max(commits.values(), default=0)
    for a, b, support, _confidence in pairs:
        if a in commits and b in commits:
            best = max(best, commits[a] + commits[b] - support)
    return best


def learn(
    pairs: list[CoChange],
    thresholds: Thresholds,
    ignored: set[str] | None = None,
    *,
    history_commits: int = 0,
    min_lift: float = MIN_LIFT,
    routine_share: float = ROUTINE_SHARE,
) -> list[Convention]:
    """Conventions of both rules; ``history_commits``: commits the pairs were counted over, if known.

    The indexer counts pairs over the commits of at most 30 files, so ``history_commits`` is its
    history document's ``commits - huge_commits``.
    """
    valid = [p for p in pairs if p[0] != p[1] and p[2] > 0 and 0 < p[3] <= 1]
    per_file = file_commits(valid)
    bound = commits_lower_bound(valid, per_file)
    exact = history_commits >= bound and history_commits > 0
    total = history_commits if exact else bound
    if total < MIN_HISTORY:
        total = 0  # too few commits for a base rate: no lift bar, no routine files
    by_file: dict[tuple[str, str], list[Convention]] = {}
    for a, b, support, confidence in valid:
        if ignored and (a in ignored or b in ignored):
            continue
        commits = max(support, round(support / confidence))
        partner_commits = per_file.get(b, 0)
        base_rate = partner_commits / total if total and partner_commits else 0.0
        lift = confidence / base_rate if base_rate else 0.0
        routine = base_rate >= routine_share - 1e-9
        if not routine and base_rate and lift < min_lift - 1e-9:
            continue  # b is about as likely to change without a: no evidence of coupling
        rule = ROUTINE_RULE if routine else RULE
        conv = make(
            FAMILY,
            rule,
            Scope(FILE, a),
            b,
            support,
            commits,
            thresholds,
            subject=f"commits changing `{a}`",
            predicate=f"also change `{b}`",
            key=b,
            params={
                "partner": b,
                "partner_commits": partner_commits,
                "history_commits": total,
                "history_commits_exact": exact,
                "base_rate": round(base_rate, 4),
                "lift": round(lift, 2),
            },
        )
        if conv.level == OFF:
            continue
        pair_text = f"{support} of {commits} commits that changed `{a}` ({conv.share:.0%}) also changed `{b}`"
        if routine:
            text = f"`{b}` changes in {_rate(partner_commits, total, exact)}; {pair_text}"
        elif base_rate:
            at = "" if exact else "at least "
            text = f"{pair_text}, {at}{lift:.1f}x its rate over all commits ({_rate(partner_commits, total, exact)})"
        else:
            text = pair_text
        by_file.setdefault((a, rule), []).append(msgspec.structs.replace(conv, description=text))
    out: list[Convention] = []
    for convs in by_file.values():
        convs.sort(key=lambda c: (-c.share, -c.support, c.choice))
        out.extend(convs[:MAX_PARTNERS])
    return out


def _rate(partner_commits: int, total: int, exact: bool) -> str:
    share = partner_commits / total if total else 0.0
    if exact:
        return f"{partner_commits} of {total} commits ({share:.0%})"
    return f"{partner_commits} of at least {total} commits (at most {share:.0%})"


def partners(model_conventions: list[Convention]) -> dict[str, list[Convention]]:
    """Conventions of both rules by changed file, strongest first within each rule."""
    out: dict[str, list[Convention]] = {}
    for conv in model_conventions:
        if conv.rule in RULES:
            out.setdefault(conv.scope.value, []).append(conv)
    return out


def evidence_detail(conv: Convention) -> dict[str, str | int | float | bool]:
    """The numbers a finding carries besides support and confidence (share)."""
    keys = ("partner", "partner_commits", "history_commits", "history_commits_exact", "base_rate", "lift")
    return {k: conv.params[k] for k in keys if k in conv.params}
