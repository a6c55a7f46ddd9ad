"""Learning from reports: per-repository calibration of rules, and external findings as conventions.

Pure functions over counts; the analyzer service stores the feedback and passes it in. A rule's
acceptance is estimated with a Beta prior (a rule nobody has judged keeps its learned confidence),
so one dismissal does not sink a rule and a long record of acceptances lifts it.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable

import msgspec

from services.analyzer.engine.conventions import (
    DIRECTORY,
    REPOSITORY,
    Convention,
    ConventionModel,
    Scope,
    make,
)
from services.analyzer.engine.findings import ERROR, INFO, WARNING, Finding
from services.analyzer.engine.thresholds import LOOSE, STRICT, Thresholds, level_at_least

NORMAL = "normal"
DOWNGRADED = "downgraded"
MUTED = "muted"
_LOWER = {ERROR: WARNING, WARNING: INFO, INFO: INFO}


class Feedback(msgspec.Struct, omit_defaults=True):
    """What people said about one rule's findings in one repository."""

    rule: str
    reported: int = 0
    accepted: int = 0
    fixed: int = 0
    dismissed: int = 0
    false_positive: int = 0


class CalibrationPolicy(msgspec.Struct, frozen=True):
    downgrade_after: int = 5  # rejections needed before a rule can be downgraded ...
    downgrade_rate: float = 0.5  # ... when more than this share of its findings is rejected
    mute_after: int = 10
    mute_rate: float = 0.8
    prior_accepted: float = 3.0  # Beta prior pseudo-counts: a fresh rule is trusted, not blindly
    prior_rejected: float = 1.0


DEFAULT_POLICY = CalibrationPolicy()


class RuleCalibration(msgspec.Struct, omit_defaults=True):
    rule: str
    state: str = NORMAL  # normal | downgraded | muted
    confidence_factor: float = 1.0
    false_positive_rate: float = 0.0  # (dismissed + false_positive) / reported
    reported: int = 0
    rejected: int = 0
    accepted: int = 0


class Calibration(msgspec.Struct, omit_defaults=True):
    rules: dict[str, RuleCalibration] = {}
    suppressed: frozenset[str] = frozenset()  # fingerprints dismissed or marked false positive


def false_positive_rate(fb: Feedback) -> float:
    reported = max(fb.reported, fb.accepted + fb.fixed + fb.dismissed + fb.false_positive)
    return (fb.dismissed + fb.false_positive) / reported if reported else 0.0


def calibrate_rule(fb: Feedback, policy: CalibrationPolicy = DEFAULT_POLICY) -> RuleCalibration:
    rejected = fb.dismissed + fb.false_positive
    accepted = fb.accepted + fb.fixed
    rate = false_positive_rate(fb)
    prior_mean = policy.prior_accepted / (policy.prior_accepted + policy.prior_rejected)
    posterior = (accepted + policy.prior_accepted) / (
        accepted + rejected + policy.prior_accepted + policy.prior_rejected
    )
    state = NORMAL
    if rejected >= policy.mute_after and rate > policy.mute_rate:
        state = MUTED
    elif rejected >= policy.downgrade_after and rate > policy.downgrade_rate:
        state = DOWNGRADED
    return RuleCalibration(
        rule=fb.rule,
        state=state,
        confidence_factor=round(posterior / prior_mean, 4),
        false_positive_rate=round(rate, 4),
        reported=max(fb.reported, accepted + rejected),
        rejected=rejected,
        accepted=accepted,
    )


def calibrate(
    feedback: Iterable[Feedback],
    suppressed: Iterable[str] = (),
    policy: CalibrationPolicy = DEFAULT_POLICY,
) -> Calibration:
    merged: dict[str, Feedback] = {}
    for fb in feedback:
        cur = merged.get(fb.rule)
        merged[fb.rule] = (
            fb
            if cur is None
            else Feedback(
                rule=fb.rule,
                reported=cur.reported + fb.reported,
                accepted=cur.accepted + fb.accepted,
                fixed=cur.fixed + fb.fixed,
                dismissed=cur.dismissed + fb.dismissed,
                false_positive=cur.false_positive + fb.false_positive,
            )
        )
    return Calibration(
        rules={rule: calibrate_rule(fb, policy) for rule, fb in merged.items()},
        suppressed=frozenset(suppressed),
    )


def apply_calibration(findings: Iterable[Finding], calibration: Calibration, *, level: str = STRICT) -> list[Finding]:
    """Drop suppressed fingerprints and muted rules, lower downgraded ones, rescale confidence.

    A muted rule still shows on dashboards (``level="loose"``) so people can see what it would say.
    """
    out: list[Finding] = []
    for f in findings:
        if f.fingerprint in calibration.suppressed:
            continue
        cal = calibration.rules.get(f.rule)
        if cal is None:
            out.append(f)
            continue
        confidence = round(min(1.0, f.confidence * cal.confidence_factor), 4)
        if cal.state == MUTED:
            if not level_at_least(LOOSE, level):
                continue
            out.append(msgspec.structs.replace(f, confidence=confidence, severity=INFO, level=LOOSE))
        elif cal.state == DOWNGRADED:
            out.append(msgspec.structs.replace(f, confidence=confidence, severity=_LOWER[f.severity]))
        else:
            out.append(msgspec.structs.replace(f, confidence=confidence))
    return out


class ExternalReport(msgspec.Struct, omit_defaults=True):
    """A finding reported by another reviewer or tool (``report_findings``)."""

    category: str
    path: str
    line: int = 0
    message: str = ""
    source: str = ""


_SLUG = re.compile(r"[^a-z0-9_]+")


def conventions_from_reports(
    reports: Iterable[ExternalReport], thresholds: Thresholds, *, concentration: float = 0.8
) -> list[Convention]:
    """Recurring categories of external findings become conventions of their own.

    When most reports of a category sit under one directory the convention is scoped there.
    """
    by_cat: dict[str, list[ExternalReport]] = {}
    for r in reports:
        if r.category.strip():
            by_cat.setdefault(r.category.strip(), []).append(r)
    out: list[Convention] = []
    for category, items in sorted(by_cat.items()):
        files = {r.path for r in items}
        dirs = Counter(posixpath.dirname(r.path) for r in items)
        top_dir, top_n = dirs.most_common(1)[0]
        scope = Scope(DIRECTORY, top_dir) if top_dir and top_n / len(items) >= concentration else Scope(REPOSITORY)
        rule = "external." + (_SLUG.sub("_", category.lower()).strip("_") or "other")
        conv = make(
            "external",
            rule,
            scope,
            category,
            len(items),
            len(items),
            thresholds,
            subject=f"reports of `{category}`",
            predicate="",
            examples=sorted(files)[:5],
            params={"files": len(files)},
        )
        if conv.level == "off":
            continue
        where = f" under `{top_dir}/`" if scope.kind == DIRECTORY else ""
        text = f"reviewers reported `{category}` {len(items)} times in {len(files)} files{where}"
        out.append(msgspec.structs.replace(conv, description=text, source="reports"))
    return out


def with_conventions(model: ConventionModel, extra: list[Convention]) -> ConventionModel:
    """The model plus conventions from reports (replacing earlier ones with the same id)."""
    ids = {c.id for c in extra}
    kept = [c for c in model.conventions if c.id not in ids]
    return msgspec.structs.replace(model, conventions=kept + extra)
