"""The judged real-change set: verdicts are read, matched to findings and counted per rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.replay import verdicts


def _finding(fp: str, rule: str, text: str = "x = 1", commit: str = "c1") -> dict[str, object]:
    return {
        "repository": "acme/app",
        "language": "python",
        "commit": commit,
        "fingerprint": fp,
        "rule": rule,
        "path": "app/x.py",
        "line": 3,
        "text": text,
        "message": "m",
    }


def test_fair_share_per_rule_and_unjudged_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    judged = tmp_path / "verdicts.tsv"
    judged.write_text(
        "# header\n"
        + verdicts.line_of(_finding("a", "naming.case.function"), "fair", "camelCase in new code")
        + "\n"
        + verdicts.line_of(_finding("b", "vocabulary.term"), "unfair", "ttl is time-to-live")
        + "\n"
        # the fingerprint scheme changed since: matched by commit, rule, path and line text
        + verdicts.line_of(_finding("old", "vocabulary.term", "y = 2"), "debatable", "msg is universal")
        + "\n"
    )
    findings = [
        _finding("a", "naming.case.function"),
        _finding("b", "vocabulary.term"),
        _finding("new", "vocabulary.term", "y = 2"),
        _finding("c", "formatting.line_length"),
    ]
    out = verdicts.report(findings, verdicts.load(judged))
    assert (out["judged"], out["unjudged"], out["fair"], out["debatable"], out["unfair"]) == (3, 1, 1, 1, 1)
    assert out["by_rule"]["vocabulary.term"] == {"unfair": 1, "debatable": 1}
    printed = capsys.readouterr().out
    assert "formatting.line_length" in printed.split("unjudged strict findings")[1]


def test_a_verdict_line_must_say_fair_debatable_or_unfair(tmp_path: Path) -> None:
    bad = tmp_path / "verdicts.tsv"
    bad.write_text(verdicts.line_of(_finding("a", "r"), "maybe", "unsure") + "\n")
    with pytest.raises(ValueError, match="verdict"):
        verdicts.load(bad)


def test_the_committed_verdicts_parse() -> None:
    assert len(verdicts.load()) >= 95
