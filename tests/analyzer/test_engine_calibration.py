"""Learning from reports: suppression, downgrade, mute, confidence, external categories."""

from __future__ import annotations

from services.analyzer.engine import (
    DEFAULT_THRESHOLDS,
    CheckPrefs,
    ExternalReport,
    Feedback,
    apply_calibration,
    calibrate,
    check,
    conventions_from_reports,
    learn,
    with_conventions,
)
from services.analyzer.engine.calibration import calibrate_rule, false_positive_rate
from tests.analyzer.engine_factories import HELD_RAISED, PLANTED_TEXT, planted_facts, synthetic_repo


def _findings():
    model = learn(synthetic_repo(), thresholds=HELD_RAISED)  # layering is held loose (earned.py)
    return model, check(planted_facts(), PLANTED_TEXT, model)


def test_dismissed_fingerprint_stays_quiet() -> None:
    _, findings = _findings()
    quotes = next(f for f in findings if f.rule == "formatting.quotes")

    kept = apply_calibration(findings, calibrate([], suppressed=[quotes.fingerprint]))

    assert quotes.fingerprint not in {f.fingerprint for f in kept}
    assert len(kept) == len(findings) - 1


def test_rejected_rules_are_downgraded_then_muted() -> None:
    _, findings = _findings()
    cal = calibrate(
        [
            Feedback("idioms.print", reported=12, dismissed=8, false_positive=3, accepted=1),
            Feedback("idioms.bare_except", reported=8, dismissed=5, accepted=2),
            Feedback("dependencies.layering", reported=3, dismissed=3),  # too few to act on
        ]
    )
    strict = {f.rule: f for f in apply_calibration(findings, cal)}
    loose = {f.rule: f for f in apply_calibration(findings, cal, level="loose")}

    assert cal.rules["idioms.print"].state == "muted"
    assert cal.rules["idioms.bare_except"].state == "downgraded"
    assert cal.rules["dependencies.layering"].state == "normal"
    assert "idioms.print" not in strict
    assert loose["idioms.print"].level == "loose"
    assert strict["idioms.bare_except"].severity == "info"
    before = next(f for f in findings if f.rule == "dependencies.layering")
    assert strict["dependencies.layering"].confidence < before.confidence


def test_accepted_rules_gain_confidence() -> None:
    _, findings = _findings()
    cal = calibrate([Feedback("naming.case.function", reported=20, accepted=15, fixed=5)])
    before = next(f for f in findings if f.rule == "naming.case.function")
    after = next(f for f in apply_calibration(findings, cal) if f.rule == "naming.case.function")

    assert after.confidence > before.confidence
    assert after.confidence <= 1.0


def test_false_positive_rate() -> None:
    fb = Feedback("x.y", reported=10, accepted=4, dismissed=3, false_positive=2)

    assert false_positive_rate(fb) == 0.5
    assert calibrate_rule(fb).false_positive_rate == 0.5
    assert (
        calibrate([Feedback("x.y", reported=5, dismissed=1), Feedback("x.y", reported=5, dismissed=4)])
        .rules["x.y"]
        .rejected
        == 5
    )


def test_recurring_external_findings_become_conventions() -> None:
    reports = [ExternalReport("SQL injection", f"app/db/q{i}.py", 3) for i in range(6)]
    reports += [ExternalReport("typo", "README.md")]

    convs = conventions_from_reports(reports, DEFAULT_THRESHOLDS)

    assert [(c.rule, c.scope.kind, c.scope.value, c.level, c.source) for c in convs] == [
        ("external.sql_injection", "directory", "app/db", "strict", "reports")
    ]
    assert "6 times in 6 files" in convs[0].description
    model, _ = _findings()
    merged = with_conventions(model, convs)
    assert len(merged.conventions) == len(model.conventions) + 1
    # Conventions from reports inform review_context; they add no file findings of their own.
    assert check(planted_facts(), PLANTED_TEXT, merged, prefs=CheckPrefs()) == check(
        planted_facts(), PLANTED_TEXT, model
    )
