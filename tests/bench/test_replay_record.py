"""A rule's record on real changes: pooled and out of sample, against the bar earned.py keeps."""

from __future__ import annotations

from bench.replay import record, verdicts


def _finding(n: int, rule: str, repository: str) -> dict[str, object]:
    return {
        "repository": repository,
        "commit": f"c{n}",
        "fingerprint": f"f{n}",
        "rule": rule,
        "path": "a.py",
        "text": "x",
    }


def _judged(rows: list[tuple[int, str, str, str]]) -> tuple[list[dict[str, object]], list[verdicts.Verdict]]:
    findings, judged = [], []
    for n, rule, repository, verdict in rows:
        f = _finding(n, rule, repository)
        findings.append(f)
        judged.append(verdicts.Verdict(repository, f"c{n}", f"f{n}", rule, "a.py", "x", verdict, "why"))
    return findings, judged


IN, OUT = "Delgan/loguru", "urllib3/urllib3"  # the default set, and fresh3 (bench/corpora.toml)


def test_a_rule_earns_strict_only_when_out_of_sample_agrees() -> None:
    rows = [(n, "idioms.print", IN, "fair") for n in range(6)]
    rows += [(10 + n, "idioms.print", OUT, v) for n, v in enumerate(("unfair", "unfair", "unfair", "fair"))]
    rows += [(20 + n, "documentation.docstring.function", IN, "fair") for n in range(3)]
    rows += [(30 + n, "documentation.docstring.function", OUT, v) for n, v in enumerate(("fair", "debatable"))]
    findings, judged = _judged(rows)
    got = {r.rule: r for r in record.records(findings, judged, outside={"fresh3"})}
    # 7 of 10 pooled, but 1 of 4 on the repositories nobody tuned on: it stays loose
    assert (got["idioms.print"].pooled["fair"], got["idioms.print"].outside["fair"]) == (7, 1)
    assert got["idioms.print"].decision == "stays loose"
    # 4 of 5 pooled; 2 out of sample decide nothing against it
    assert got["documentation.docstring.function"].decision == "earns strict"
    assert got["documentation.docstring.function"].held  # earned.py holds it today


def test_unjudged_findings_and_thin_records_decide_nothing() -> None:
    findings, judged = _judged([(n, "vocabulary.term", IN, "fair") for n in range(3)])
    assert record.records(findings, judged, outside=set())[0].decision == "too few judged"
    findings.append(_finding(9, "vocabulary.term", IN))
    findings.append(_finding(9, "vocabulary.term", IN))  # the same finding in two runs counts once
    (row,) = record.records(findings, judged, outside=set())
    assert (row.unjudged, row.decision) == (1, "judge first")


def test_a_convention_a_tool_declares_has_its_own_record() -> None:
    findings, judged = _judged([(1, "formatting.quotes", IN, "fair"), (2, "formatting.quotes", IN, "unfair")])
    findings[0]["message"] = "string literal uses single quotes, but declared in pyproject.toml: [tool.black]"
    got = {r.rule: r for r in record.records(findings, judged, outside=set())}
    assert not got["formatting.quotes (declared)"].held
    assert got["formatting.quotes"].held
    assert (got["formatting.quotes (declared)"].pooled["fair"], got["formatting.quotes"].pooled["unfair"]) == (1, 1)
