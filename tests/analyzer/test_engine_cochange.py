"""Co-change conventions: the lift bar, the routine rule and their evidence."""

from __future__ import annotations

from services.analyzer.engine import CheckPrefs, ConventionModel, check_change, cochange
from services.analyzer.engine.thresholds import DEFAULT_THRESHOLDS, LOOSE


def _pair(a: str, b: str, support: int, a_commits: int) -> tuple[str, str, int, float]:
    return (a, b, support, round(support / a_commits, 4))


# 40 commits: CHANGELOG.rst in 38, api.py in 10, store.py in 8 (7 with api.py), util.py in 20.
PAIRS = [
    _pair("src/api.py", "CHANGELOG.rst", 10, 10),
    _pair("CHANGELOG.rst", "src/api.py", 10, 38),
    _pair("src/api.py", "src/store.py", 7, 10),
    _pair("src/store.py", "src/api.py", 7, 8),
    _pair("src/store.py", "CHANGELOG.rst", 8, 8),
    _pair("CHANGELOG.rst", "src/store.py", 8, 38),
    _pair("src/util.py", "CHANGELOG.rst", 20, 20),
    _pair("CHANGELOG.rst", "src/util.py", 20, 38),
    # util.py changes in half of all commits: 9 of 10 commits of api.py is only 1.8x that.
    _pair("src/api.py", "src/util.py", 9, 10),
    _pair("src/util.py", "src/api.py", 9, 20),
]


def _model(history_commits: int = 0) -> ConventionModel:
    convs = cochange.learn(PAIRS, DEFAULT_THRESHOLDS, history_commits=history_commits)
    return ConventionModel(conventions=convs)


def _rules(model: ConventionModel) -> dict[tuple[str, str], str]:
    return {(c.scope.value, c.choice): c.rule for c in model.conventions}


def test_base_rates_follow_from_the_pairs() -> None:
    per_file = cochange.file_commits(PAIRS)

    assert per_file == {"src/api.py": 10, "CHANGELOG.rst": 38, "src/store.py": 8, "src/util.py": 20}
    # |CHANGELOG or util| = 38 + 20 - 20: fewer than the 40 commits there were, never more.
    assert cochange.commits_lower_bound(PAIRS, per_file) == 38


def test_routine_partners_and_low_lift_partners_are_told_apart() -> None:
    rules = _rules(_model(history_commits=40))

    assert rules[("src/api.py", "CHANGELOG.rst")] == cochange.ROUTINE_RULE
    assert rules[("src/store.py", "CHANGELOG.rst")] == cochange.ROUTINE_RULE
    assert rules[("src/store.py", "src/api.py")] == cochange.RULE  # 7 of 8 vs 10 of 40: lift 3.5
    assert ("src/api.py", "src/util.py") not in rules  # lift 1.8: util.py changes anyway
    assert ("src/api.py", "src/store.py") in rules  # 7 of 10 vs 8 of 40: lift 3.5


def test_partner_evidence_carries_base_rate_and_lift() -> None:
    model = _model(history_commits=40)
    # Loose only until a replay of real pull requests measures it precise: PR comments stay quiet.
    assert check_change(["src/store.py", "CHANGELOG.rst"], [], model) == []
    findings = check_change(["src/store.py", "CHANGELOG.rst"], [], model, prefs=CheckPrefs(level=LOOSE))

    assert [(f.rule, f.path, f.evidence.choice if f.evidence else "", f.level) for f in findings] == [
        (cochange.RULE, "src/store.py", "src/api.py", LOOSE)
    ]
    evidence = findings[0].evidence
    assert evidence is not None
    assert (evidence.support, evidence.count, evidence.share) == (7, 8, 0.875)
    assert evidence.detail["base_rate"] == 0.25
    assert evidence.detail["lift"] == 3.5
    assert evidence.detail["history_commits_exact"] is True
    assert "7 of 8 commits that changed `src/store.py` (88%) also changed `src/api.py`" in findings[0].message
    assert "3.5x its rate over all commits (10 of 40 commits (25%))" in findings[0].message


def test_a_routine_file_is_reported_once_per_change() -> None:
    model = _model(history_commits=40)
    findings = check_change(["src/api.py", "src/store.py"], [], model)

    routine = [f for f in findings if f.rule == cochange.ROUTINE_RULE]
    assert len(routine) == 1
    assert routine[0].evidence is not None
    assert routine[0].evidence.choice == "CHANGELOG.rst"
    assert routine[0].evidence.detail["changed_files_with_rule"] == 2
    assert "leaves out `CHANGELOG.rst`, which most changes touch" in routine[0].message
    assert "38 of 40 commits (95%)" in routine[0].message
    assert [f.rule for f in findings if f.rule != cochange.ROUTINE_RULE] == []  # api.py and store.py both there


def test_without_the_number_of_commits_the_evidence_says_at_most() -> None:
    model = _model()
    findings = check_change(["src/api.py"], [], model, prefs=CheckPrefs(level=LOOSE))

    routine = next(f for f in findings if f.rule == cochange.ROUTINE_RULE)
    assert routine.evidence is not None
    assert routine.evidence.detail["history_commits"] == 38
    assert routine.evidence.detail["history_commits_exact"] is False
    assert "38 of at least 38 commits (at most 100%)" in routine.message


def test_short_histories_use_no_base_rate() -> None:
    # Two files that always changed together, six times: no base rate to judge lift against.
    pairs = [("a.py", "b.py", 6, 1.0), ("b.py", "a.py", 6, 1.0)]
    convs = cochange.learn(pairs, DEFAULT_THRESHOLDS)

    assert {(c.scope.value, c.rule) for c in convs} == {("a.py", cochange.RULE), ("b.py", cochange.RULE)}
    found = check_change(["a.py"], [], ConventionModel(conventions=convs), prefs=CheckPrefs(level=LOOSE))
    assert "lift" not in found[0].message


def test_a_pair_given_in_one_direction_is_judged_as_before() -> None:
    convs = cochange.learn([("a.py", "b.py", 9, 0.9)], DEFAULT_THRESHOLDS)

    assert [(c.rule, c.choice, c.description) for c in convs] == [
        (cochange.RULE, "b.py", "9 of 10 commits that changed `a.py` (90%) also changed `b.py`")
    ]
