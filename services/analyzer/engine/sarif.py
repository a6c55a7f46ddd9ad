"""Findings as a SARIF 2.1.0 log, for code-scanning uploads and CI tools."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from services.analyzer.engine.findings import ERROR, INFO, WARNING, Finding

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {ERROR: "error", WARNING: "warning", INFO: "note"}


def _rule_descriptor(f: Finding) -> dict[str, Any]:
    return {
        "id": f.rule,
        "name": "".join(p.capitalize() for p in f.rule.replace("-", "_").replace(".", "_").split("_")),
        "shortDescription": {"text": f"Repository convention: {f.rule}"},
        "defaultConfiguration": {"level": _LEVEL.get(f.severity, "note")},
        "properties": {"category": f.family, "tags": [f.family, "convention"]},
    }


def _result(f: Finding, rule_index: int, baseline: bool) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": _LEVEL.get(f.severity, "note"),
        "message": {"text": f.message},
        "partialFingerprints": {"conventionFingerprint/v1": f.fingerprint},
        "properties": {"confidence": f.confidence, "category": f.family, "findingId": f.id},
    }
    if baseline:  # compared with the change's base: SARIF's own word for "already there"
        result["baselineState"] = "unchanged" if f.preexisting else "new"
    location: dict[str, Any] = {"artifactLocation": {"uri": f.path, "uriBaseId": "%SRCROOT%"}}
    if f.start_line > 0:
        location["region"] = {"startLine": f.start_line, "endLine": max(f.start_line, f.end_line)}
    result["locations"] = [{"physicalLocation": location}]
    if f.evidence is not None:
        result["properties"]["evidence"] = {
            "convention": f.evidence.convention,
            "scope": f"{f.evidence.scope.kind}:{f.evidence.scope.value}",
            "choice": f.evidence.choice,
            "share": f.evidence.share,
            "count": f.evidence.count,
            "description": f.evidence.description,
        }
    if f.suggestion is not None:
        # Suggestions replace an identifier or a line depending on the rule: all travel as a
        # property; a formatting fix is the whole new line, so it is also a SARIF fix (a region
        # of startLine/endLine alone is that line without its newline).
        result["properties"]["suggestion"] = f.suggestion
        if f.family == "formatting" and 0 < f.start_line == max(f.end_line, f.start_line):
            result["fixes"] = [_line_fix(f)]
    return result


def _line_fix(f: Finding) -> dict[str, Any]:
    region = {"startLine": f.start_line, "endLine": f.start_line}
    return {
        "description": {"text": f"Apply the repository's convention ({f.rule})"},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": f.path, "uriBaseId": "%SRCROOT%"},
                "replacements": [{"deletedRegion": region, "insertedContent": {"text": f.suggestion}}],
            }
        ],
    }


def to_sarif(
    findings: Iterable[Finding],
    *,
    tool_name: str = "codereview",
    tool_version: str = "0.1.0",
    information_uri: str = "",
    baseline: bool = False,
) -> dict[str, Any]:
    """The log; with ``baseline`` each result says whether the change's base had it."""
    items = list(findings)
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for f in items:
        if f.rule not in index:
            index[f.rule] = len(rules)
            rules.append(_rule_descriptor(f))
    driver: dict[str, Any] = {"name": tool_name, "version": tool_version, "rules": rules}
    if information_uri:
        driver["informationUri"] = information_uri
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {"driver": driver},
                "columnKind": "unicodeCodePoints",
                "results": [_result(f, index[f.rule], baseline) for f in items],
            }
        ],
    }
