"""How results leave the CLI: a table on a terminal (colour only there), JSON, or SARIF 2.1.0."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from services.api.analysis import SEVERITIES, AnalysisResult, Convention, Severity

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def console(stderr: bool = False) -> Console:
    # rich colours only a terminal and honours NO_COLOR; highlight=False keeps paths unstyled.
    # Off a terminal rich assumes 80 columns: logs read better with long lines than cut tables.
    out = Console(stderr=stderr, highlight=False, soft_wrap=stderr)
    if not out.is_terminal:
        out.width = 200
    return out


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


SARIF_LEVELS: dict[str, Severity] = {"error": "error", "warning": "warning", "note": "info", "none": "info"}


def reaches(severities: Iterable[str], fail_on: str) -> bool:
    """Whether any finding is at least as severe as ``fail_on`` (``none`` never fails)."""
    if fail_on == "none":
        return False
    bar = SEVERITIES.index(fail_on)  # type: ignore[arg-type]
    return any(SEVERITIES.index(s) >= bar for s in severities)  # type: ignore[arg-type]


def sarif_severities(log: dict[str, Any]) -> list[Severity]:
    # SARIF's default level is "warning" when a result names none.
    # A result the change's base already had ("unchanged") is not the change's: it fails nothing.
    return [
        SARIF_LEVELS.get(r.get("level", "warning"), "warning")
        for run in log["runs"]
        for r in run["results"]
        if r.get("baselineState") != "unchanged"
    ]


def sarif_lines(log: dict[str, Any]) -> None:
    """A SARIF log's results as the findings table prints them off a terminal, one line each."""
    out = console()
    for run in log["runs"]:
        for r in run.get("results", []):
            locations = r.get("locations") or [{}]
            where = locations[0].get("physicalLocation", {})
            path = where.get("artifactLocation", {}).get("uri", "")
            line = where.get("region", {}).get("startLine", 0)
            severity = SARIF_LEVELS.get(r.get("level", "warning"), "warning")
            finding_id = r.get("properties", {}).get("findingId", "")
            text = f"{path}:{line}: {severity} {r.get('ruleId', '')}: {r.get('message', {}).get('text', '')}"
            out.print(f"{text} [{finding_id}]" if finding_id else text, markup=False, soft_wrap=True)


def merge_sarif(logs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several one-run SARIF logs as one log with one run: code scanning wants one run per tool."""
    if len(logs) == 1:
        return logs[0]
    merged = json.loads(json.dumps(logs[0]))
    run = merged["runs"][0]
    rules = run.setdefault("tool", {}).setdefault("driver", {}).setdefault("rules", [])
    known = {rule.get("id") for rule in rules}
    for log in logs[1:]:
        other = log["runs"][0]
        offset = len(rules)
        index_map: dict[int, int] = {}
        for i, rule in enumerate(other.get("tool", {}).get("driver", {}).get("rules", [])):
            if rule.get("id") not in known:
                known.add(rule.get("id"))
                rules.append(rule)
            index_map[i] = next(j for j, r in enumerate(rules) if r.get("id") == rule.get("id"))
        for result in other.get("results", []):
            result = dict(result)
            if "ruleIndex" in result:
                result["ruleIndex"] = index_map.get(result["ruleIndex"], offset)
            run.setdefault("results", []).append(result)
    return merged


def findings_table(result: AnalysisResult) -> None:
    out = console()
    if not result.findings:
        out.print(f"No findings ({result.files_analyzed} file(s) analyzed).")
    elif not out.is_terminal:
        # Off a terminal (pre-commit, CI logs, pipes): one grep-able line per finding, never cut.
        for f in result.findings:
            suggestion = f" (suggestion: {f.suggestion})" if f.suggestion else ""
            line = f"{f.path}:{f.start_line}: {f.severity} {f.rule}: {f.message}{suggestion} [{f.id}]"
            out.print(line, markup=False, soft_wrap=True)
    else:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for column in ("severity", "location", "rule", "message", "id"):
            table.add_column(column, overflow="fold")
        for f in result.findings:
            message = f.message + (f"\n→ {f.suggestion}" if f.suggestion else "")
            location = f"{f.path}:{f.start_line}" if f.start_line else f.path
            severity = f"[{SEVERITY_STYLE[f.severity]}]{f.severity}[/]"
            table.add_row(severity, escape(location), escape(f.rule), escape(message), f.id)
        out.print(table)
    if result.findings:
        counts = {s: sum(f.severity == s for f in result.findings) for s in reversed(SEVERITIES)}
        summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        out.print(f"{len(result.findings)} finding(s): {summary}; {result.files_analyzed} file(s) analyzed.")
    if result.preexisting_count:
        # Findings on the changed lines that the base already had: not this change's doing.
        out.print(f"{result.preexisting_count} already there (not introduced by this change).")
    for skipped in result.skipped:
        console(stderr=True).print(f"skipped {skipped.path}: {skipped.reason}", markup=False)


def conventions_table(conventions: Sequence[Convention]) -> None:
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column in ("rule", "scope", "choice", "share", "level", "description"):
        table.add_column(column, overflow="fold")
    for c in conventions:
        scope = f"{c.scope.kind}:{c.scope.value}" if c.scope else ""
        share = f"{c.share:.0%}"
        table.add_row(*(escape(cell) for cell in (c.rule, scope, c.choice, share, c.level, c.description)))
    console().print(table)
