"""SARIF 2.1.0 output is structurally valid."""

from __future__ import annotations

import json

from services.analyzer.engine import check, check_change, learn, to_sarif
from tests.analyzer.engine_factories import PLANTED_TEXT, planted_facts, synthetic_repo

_LEVELS = {"none", "note", "warning", "error"}


def test_sarif_log_structure() -> None:
    model = learn(synthetic_repo())
    findings = check(planted_facts(), PLANTED_TEXT, model) + check_change([], ["app/api/new_mod.py"], model)

    log = json.loads(json.dumps(to_sarif(findings)))

    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert run["tool"]["driver"]["name"] == "codereview"
    assert len({r["id"] for r in rules}) == len(rules) == len({f.rule for f in findings})
    assert len(run["results"]) == len(findings)
    for result, finding in zip(run["results"], findings, strict=True):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == finding.rule
        assert result["level"] in _LEVELS
        assert result["message"]["text"]
        assert result["partialFingerprints"]["conventionFingerprint/v1"] == finding.fingerprint
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == finding.path
        if finding.start_line:
            assert 1 <= location["region"]["startLine"] <= location["region"]["endLine"]
        else:
            assert "region" not in location
