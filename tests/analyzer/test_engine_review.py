"""Learning from a small synthetic repository and reviewing files and changes against it."""

from __future__ import annotations

import time

import pytest

from services.analyzer.engine import (
    DEFAULT_THRESHOLDS,
    Bar,
    CheckPrefs,
    ConventionModel,
    Threshold,
    check,
    check_change,
    decode_model,
    encode_model,
    learn,
)
from tests.analyzer.engine_factories import HELD_RAISED, PLANTED, PLANTED_TEXT, planted_facts, py_file, synthetic_repo


@pytest.fixture(scope="module")
def model() -> ConventionModel:
    return learn(
        synthetic_repo(),
        cochange_pairs=[("app/api/handler1.py", "app/core/store1.py", 9, 0.9)],
        thresholds=HELD_RAISED,  # the planted short form and long line, as a repository raising them
    )


def _summary(findings: list) -> set[tuple[str, int, str | None]]:
    return {(f.rule, f.start_line, f.suggestion) for f in findings}


def test_flags_exactly_the_planted_deviations(model: ConventionModel) -> None:
    findings = check(planted_facts(), PLANTED_TEXT, model)

    assert _summary(findings) == PLANTED


def test_findings_carry_evidence_and_scope(model: ConventionModel) -> None:
    findings = {f.rule: f for f in check(planted_facts(), PLANTED_TEXT, model)}

    naming = findings["naming.case.function"]
    assert naming.evidence is not None
    assert (naming.evidence.support, naming.evidence.count, naming.evidence.share) == (125, 125, 1.0)
    assert naming.evidence.scope.kind == "language"
    assert "125 of 125 python functions (100%) are snake_case" in naming.message
    assert naming.severity == "warning"
    assert 0.9 < naming.confidence < 1.0
    assert naming.symbol == "getUserName"

    vocab = findings["vocabulary.term"]
    assert "`usr`" in vocab.message
    assert "`user`" in vocab.message
    layering = findings["dependencies.layering"]
    assert "inverts the layering" in layering.message
    assert layering.evidence is not None
    assert layering.evidence.count == 25
    http = findings["dependencies.library.http_client"]
    assert "`requests`" in http.message
    assert "`httpx`" in http.message


def test_consistent_file_has_no_findings(model: ConventionModel) -> None:
    text = '''import logging
import httpx


def get_user_99(user_name: str) -> str:
    """Return a user."""
    message = "hello"
    return message
'''
    facts = py_file(
        "app/api/handler99.py",
        functions=[("get_user_99", 5)],
        variables=[("message", 7)],
        params=[("user_name", 5)],
        lines=8,
    )

    assert check(facts, text, model) == []


def test_learned_repository_files_are_clean(model: ConventionModel) -> None:
    text = "\n".join(f"x{i} = {i}" for i in range(60)) + "\n"

    noisy = [f for facts in synthetic_repo() for f in check(facts, text, model)]

    assert noisy == []


def test_changed_lines_limit_findings(model: ConventionModel) -> None:
    findings = check(planted_facts(), PLANTED_TEXT, model, changed_lines={16, 17})

    assert {f.rule for f in findings} == {"idioms.logging_format", "formatting.quotes"}


def test_loose_level_reports_more_than_strict() -> None:
    # The 25 test function names clear the loose bar (10) but not the strict one (30).
    bars = DEFAULT_THRESHOLDS.merged({"naming": Bar(Threshold(0.95, 30), Threshold(0.9, 10))})
    model = learn(synthetic_repo(), thresholds=bars)
    facts = py_file("tests/test_extra.py", functions=[("testGetUser", 5)], is_test=True, documented=False)
    text = "def testGetUser():\n    pass\n"

    strict = check(facts, text, model)
    loose = check(facts, text, model, prefs=CheckPrefs(level="loose"))

    assert [f.rule for f in strict] == []
    assert [(f.rule, f.suggestion, f.level) for f in loose] == [("naming.case.test_function", "test_get_user", "loose")]


def test_model_round_trips_through_msgpack(model: ConventionModel) -> None:
    data = encode_model(model)
    again = decode_model(data)

    assert again.conventions == model.conventions
    assert check(planted_facts(), PLANTED_TEXT, again) == check(planted_facts(), PLANTED_TEXT, model)


def test_check_is_fast(model: ConventionModel) -> None:
    facts = planted_facts()
    check(facts, PLANTED_TEXT, model)
    times = []
    for _ in range(100):
        start = time.perf_counter()
        check(facts, PLANTED_TEXT, model)
        times.append(time.perf_counter() - start)
    # A low percentile: other processes on a shared machine only ever add time.
    assert sorted(times)[10] < 0.001


def test_change_flags_a_missed_cochange_partner(model: ConventionModel) -> None:
    loose = CheckPrefs(level="loose")
    assert check_change(["app/api/handler1.py"], [], model) == []  # cochange.partner is loose only
    missed = check_change(["app/api/handler1.py"], [], model, prefs=loose)
    together = check_change(["app/api/handler1.py", "app/core/store1.py"], [], model, prefs=loose)

    assert [(f.rule, f.path, f.evidence.choice if f.evidence else "") for f in missed] == [
        ("cochange.partner", "app/api/handler1.py", "app/core/store1.py")
    ]
    assert "9 of 10 commits" in missed[0].message
    assert together == []


def test_change_flags_a_new_module_without_test(model: ConventionModel) -> None:
    without = check_change([], ["app/api/handler_new.py"], model)
    with_test = check_change([], ["app/api/handler_new.py", "tests/test_handler_new.py"], model)
    untested_dir = check_change([], ["app/core/store_new.py"], model)

    assert [(f.rule, f.path) for f in without] == [("structure.tests.coverage", "app/api/handler_new.py")]
    assert with_test == []
    assert untested_dir == []  # app/core does not test its modules
