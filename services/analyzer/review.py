"""The core of every analysis: files under review checked against the repository's model.

Pure CPU work (extraction with the shared source library, then the engine), so a batch runs in a
worker thread while the event loop keeps serving; one small file runs inline, where a thread hop
would cost more than it saves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from services.analyzer.engine import (
    ConventionModel,
    Finding,
    apply_calibration,
    check,
    check_change,
)
from services.analyzer.preferences import Effective
from services.analyzer.state import LoadedRepo
from services.source.extract import extract
from services.source.facts import FACTS_SCHEMA_VERSION, FileFacts

_BOM = b"\xef\xbb\xbf"
# Why a file is not analyzable at all (as opposed to deliberately not learned from).
UNSUPPORTED = frozenset({"binary", "oversized", "unsupported_language", "invalid_encoding"})


@dataclass
class Target:
    """One file of an analysis: its head-side content and the lines a review may comment on."""

    path: str
    status: str = "modified"  # added | modified | deleted | renamed
    data: bytes | None = None
    changed: set[int] | None = None  # None: the whole file
    facts: FileFacts | None = None  # as the indexer extracted them, when it did
    old_path: str = ""
    skip: str = ""  # why it cannot be reviewed, when that is known before extraction


@dataclass
class Outcome:
    findings: list[Finding] = field(default_factory=list)
    analyzed: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    facts: dict[str, FileFacts] = field(default_factory=dict)  # of the files reviewed, head side


def usable_facts(facts: FileFacts | None, path: str) -> FileFacts | None:
    """The indexer's facts when they describe this path with the current schema."""
    if facts is None or facts.schema != FACTS_SCHEMA_VERSION or facts.path != path:
        return None
    return facts


def text_of(data: bytes) -> str:
    if data.startswith(_BOM):
        data = data[3:]
    return data.decode("utf-8", "replace")


def review(
    entry: LoadedRepo,
    model: ConventionModel,
    targets: list[Target],
    prefs: Effective,
    *,
    max_bytes: int,
    change_level: bool,
) -> Outcome:
    """Findings for ``targets`` (limited to their changed lines) plus the change-level ones."""
    out = Outcome()
    check_prefs = prefs.check_prefs(model.config.level)
    for t in targets:
        if t.status == "deleted":
            continue
        if prefs.ignores_path(t.path):
            out.skipped[t.path] = "ignored"
            continue
        if t.skip:
            out.skipped[t.path] = t.skip
            continue
        if t.data is None:
            out.skipped[t.path] = "content_unavailable"
            continue
        facts = usable_facts(t.facts, t.path) or extract(t.path, t.data, max_bytes=max_bytes)
        if facts.skipped:
            out.skipped[t.path] = facts.skipped
            continue
        out.findings.extend(check(facts, text_of(t.data), model, changed_lines=t.changed, prefs=check_prefs))
        out.analyzed.append(t.path)
        out.facts[t.path] = facts
    if change_level:
        live = [t for t in targets if t.status != "deleted" and not prefs.ignores_path(t.path)]
        out.findings.extend(
            check_change(
                [t.path for t in live],
                [t.path for t in live if t.status == "added"],
                model,
                deleted_paths=_gone(targets),
                prefs=check_prefs,
            )
        )
    calibrated = apply_calibration(out.findings, entry.calibration, level=check_prefs.level)
    out.findings = [f for f in calibrated if prefs.keeps(f.rule, f.severity, f.confidence, f.path)]
    return out


def _gone(targets: list[Target]) -> list[str]:
    """Paths that no longer exist after the change: deleted files and the old side of renames."""
    out = [t.path for t in targets if t.status == "deleted"]
    return out + [t.old_path for t in targets if t.status == "renamed" and t.old_path]
