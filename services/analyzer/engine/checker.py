"""Reviewing: one file's facts and text against a learned model, and a change as a whole."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from services.analyzer.engine import dependencies, documentation, formatting, idioms, naming, structure, vocabulary
from services.analyzer.engine import typing as typing_family
from services.analyzer.engine.cochange import ROUTINE_RULE, evidence_detail, partners
from services.analyzer.engine.conventions import Convention, ConventionModel
from services.analyzer.engine.dependencies import layering, new_libraries
from services.analyzer.engine.file_check import CheckPrefs, FileCheck, index_of
from services.analyzer.engine.findings import INFO, Finding
from services.analyzer.engine.formatting import imports as imports_order
from services.source.facts import FileFacts

FILE_CHECKS: tuple[Callable[[FileCheck], None], ...] = (
    naming.check,
    vocabulary.check,
    formatting.check,
    imports_order.check,
    dependencies.check,
    new_libraries.check,
    layering.check,
    structure.check,
    documentation.check,
    typing_family.check,
    idioms.check,
)


def _prefs(model: ConventionModel, prefs: CheckPrefs | None) -> CheckPrefs:
    return prefs if prefs is not None else CheckPrefs(level=model.config.level)


def check(
    facts: FileFacts,
    text: str,
    model: ConventionModel,
    *,
    changed_lines: set[int] | None = None,
    prefs: CheckPrefs | None = None,
) -> list[Finding]:
    """Findings for one file; with ``changed_lines`` only those touching the changed lines."""
    if facts.skipped or model.ignores(facts.path):
        return []
    if changed_lines is not None and not changed_lines:
        return []
    fc = FileCheck(facts, text, index_of(model), _prefs(model, prefs), changed_lines)
    for run in FILE_CHECKS:
        run(fc)
    return fc.finish()


def check_change(
    changed_paths: Iterable[str],
    added_paths: Iterable[str],
    model: ConventionModel,
    *,
    deleted_paths: Iterable[str] = (),
    prefs: CheckPrefs | None = None,
) -> list[Finding]:
    """Change-level findings: a usual co-change partner left out (``cochange.partner`` per changed
    file; ``cochange.routine`` once per change for a file most commits touch), a new module
    without a test.

    ``changed_paths`` are modified files, ``added_paths`` new ones (a path may be in both).
    """
    idx = index_of(model)
    p = _prefs(model, prefs)
    changed = {x for x in changed_paths if not model.ignores(x)}
    added = {x for x in added_paths if not model.ignores(x)}
    touched = changed | added | set(deleted_paths)
    out: list[Finding] = []
    pairs = idx.extra.get("cochange")
    if pairs is None:
        pairs = partners(model.conventions)
        idx.extra["cochange"] = pairs
    routine: dict[str, list[tuple[str, Convention]]] = {}  # left-out routine file -> (changed file, rule)
    for path in sorted(changed - added):
        fc = FileCheck(_stub(path), "", idx, p, None)
        for conv in pairs.get(path, ()):
            partner = conv.choice
            if partner in touched or model.ignores(partner):
                continue
            if conv.rule == ROUTINE_RULE:
                if fc.wants(conv):
                    routine.setdefault(partner, []).append((path, conv))
                continue
            fc.emit(
                conv,
                0,
                f"`{path}` changed but `{partner}` did not: {conv.description}",
                severity=INFO,
                key=partner,
                detail=evidence_detail(conv),
            )
        out.extend(fc.finish())
    routine_checks: dict[str, FileCheck] = {}
    for partner, sources in sorted(routine.items()):
        # Once per change: the file most changes touch, with the strongest rule as its evidence.
        path, conv = min(sources, key=lambda s: (-s[1].share, -s[1].support, s[0]))
        others = f" (and {len(sources) - 1} other changed files)" if len(sources) > 1 else ""
        fc = routine_checks.setdefault(path, FileCheck(_stub(path), "", idx, p, None))
        fc.emit(
            conv,
            0,
            f"this change leaves out `{partner}`, which most changes touch: {conv.description}{others}",
            severity=INFO,
            key=partner,
            detail={**evidence_detail(conv), "changed_files_with_rule": len(sources)},
        )
    for fc in routine_checks.values():
        out.extend(fc.finish())
    for path in structure.untested_modules(added, changed):
        language = structure.language_of(path)
        fc = FileCheck(_stub(path, language), "", idx, p, None)
        conv = fc.find(structure.COVERAGE)
        if conv is not None and conv.choice == "tested" and fc.wants(conv):
            fc.emit(
                conv,
                0,
                f"new module `{path}` comes without a test, but {conv.description}",
                severity=INFO,
            )
        out.extend(fc.finish())
    return out


def _stub(path: str, language: str = "") -> FileFacts:
    return FileFacts(path=path, language=language or structure.language_of(path), size=0, lines=0)
