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


def test_a_formatting_fix_is_a_sarif_fix_that_rewrites_its_line() -> None:
    from services.analyzer.engine.findings import Finding

    base = {"id": "f1", "fingerprint": "fp", "severity": "info", "confidence": 0.9, "message": "m", "path": "a.py"}
    indent = Finding(rule="formatting.indent.width", family="formatting", start_line=3, end_line=3,
                     suggestion="    return 1", **base)  # fmt: skip
    rename = Finding(rule="naming.case.function", family="naming", start_line=2, end_line=2,
                     suggestion="load_names", **base)  # fmt: skip
    fixed, renamed = to_sarif([indent, rename])["runs"][0]["results"]
    (fix,) = fixed["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "a.py"
    assert change["replacements"] == [
        {"deletedRegion": {"startLine": 3, "endLine": 3}, "insertedContent": {"text": "    return 1"}}
    ]
    # A rename's region would need the identifier's columns: a property only, no SARIF fix.
    assert "fixes" not in renamed
    assert renamed["properties"]["suggestion"] == "load_names"
    lines = ["def f():", "  x = 0", "  return 1"]
    region = change["replacements"][0]["deletedRegion"]
    lines[region["startLine"] - 1] = change["replacements"][0]["insertedContent"]["text"]
    assert lines[2] == "    return 1"
