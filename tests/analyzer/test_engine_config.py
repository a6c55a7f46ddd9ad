"""`.codereview.yml`: parsing, validation, and its effect on learning and checking."""

from __future__ import annotations

import pytest

from services.analyzer.engine import DEFAULT_THRESHOLDS, ConfigError, check, learn, parse_config
from tests.analyzer.engine_factories import PLANTED_TEXT, planted_facts, py_file, synthetic_repo

CONFIG = """
version: 1
ignore:
  - "legacy/**"
  - "*_pb2.py"
disable:
  - idioms
  - vocabulary.term
conventions:
  naming.case.function: camelCase
  formatting.line_length: 100
severity:
  formatting: warning
thresholds:
  naming: {strict: {min_share: 0.9, min_count: 5}}
"""


def test_parses_a_full_config() -> None:
    cfg = parse_config(CONFIG)

    assert cfg.ignore == ("legacy/**", "*_pb2.py")
    assert cfg.is_ignored("legacy/a/b.py")
    assert cfg.is_ignored("pkg/api_pb2.py")
    assert not cfg.is_ignored("app/legacy.py")
    assert cfg.is_disabled("idioms.print", "idioms")
    assert cfg.is_disabled("vocabulary.term", "vocabulary")
    assert not cfg.is_disabled("naming.case.class", "naming")
    assert cfg.conventions == {"naming.case.function": "camelCase", "formatting.line_length": "100"}
    assert cfg.severity_for("formatting.quotes", "info") == "warning"
    assert cfg.thresholds["naming"].strict.min_count == 5
    # The level the config leaves out keeps its default.
    assert cfg.thresholds["naming"].loose == DEFAULT_THRESHOLDS.bar("naming").loose


def test_empty_config_is_the_default() -> None:
    assert parse_config("") == parse_config("version: 1\n")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("version: 2", "version"),
        ("ignore: vendor", "ignore: expected a list"),
        ("disable: [spelling]", "does not name a known family"),
        ("severity: {naming: fatal}", "severity.naming"),
        ("thresholds: {naming: {strict: {min_share: 2}}}", "min_share"),
        ("colour: blue", "colour: unknown key"),
        ("conventions: [1, 2]", "conventions: expected a mapping"),
        ("[unclosed", "not valid YAML"),
    ],
)
def test_rejects_invalid_configs_with_located_errors(text: str, error: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert any(error in e for e in info.value.errors)


def test_config_changes_learning_and_checking() -> None:
    files = [*synthetic_repo(), py_file("legacy/oldThing.py", functions=[("oldFunc", 1)])]
    model = learn(files, config=CONFIG)
    findings = check(planted_facts(), PLANTED_TEXT, model)
    rules = {f.rule for f in findings}

    assert not any(r.startswith(("idioms.", "vocabulary.")) for r in rules)
    naming = [f for f in findings if f.rule == "naming.case.function"]
    # camelCase is now the rule: the planted getUserName passes, save_record and load_all do not.
    assert sorted(f.suggestion or "" for f in naming) == ["loadAll", "saveRecord"]
    assert "`.codereview.yml` sets naming.case.function" in naming[0].message
    assert all(f.severity == "warning" for f in findings if f.family == "formatting")
    assert check(py_file("legacy/x.py", functions=[("badName", 1)]), "x = 1\n", model) == []
    assert model.files == len(files) - 1
