"""Fingerprints identify the same problem across unrelated edits."""

from __future__ import annotations

from services.analyzer.engine import check, learn
from tests.analyzer.engine_factories import HELD_RAISED, PLANTED_TEXT, planted_facts, synthetic_repo


def test_fingerprint_survives_an_unrelated_edit_above() -> None:
    model = learn(synthetic_repo(), thresholds=HELD_RAISED)
    before = check(planted_facts(), PLANTED_TEXT, model)
    edited = '"""A new module docstring."""\n# comment\n\n' + PLANTED_TEXT
    after = check(planted_facts(shift=3), edited, model)

    assert len(before) == len(after) > 5
    assert [f.fingerprint for f in before] == [f.fingerprint for f in after]
    assert [f.start_line + 3 for f in before] == [f.start_line for f in after]
    assert len({f.fingerprint for f in before}) == len(before)


def test_fingerprint_changes_when_the_flagged_line_changes() -> None:
    model = learn(synthetic_repo(), thresholds=HELD_RAISED)  # quotes are held loose (earned.py)
    before = {f.rule: f.fingerprint for f in check(planted_facts(), PLANTED_TEXT, model)}
    text = PLANTED_TEXT.replace("return 'saved'", "return 'stored'")
    after = {f.rule: f.fingerprint for f in check(planted_facts(), text, model)}

    assert before["formatting.quotes"] != after["formatting.quotes"]
    assert before["naming.case.function"] == after["naming.case.function"]
