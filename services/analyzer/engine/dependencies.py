"""Dependencies family, libraries: which library the repository uses for each job.

Counted in files: a repository where 40 files import ``httpx`` and none import ``requests`` has
chosen its HTTP client, and the first ``import requests`` deserves a question.
"""

from __future__ import annotations

from collections import Counter

from services.analyzer.engine.context import FileCheck
from services.analyzer.engine.conventions import Convention, Scope, make
from services.analyzer.engine.findings import WARNING
from services.analyzer.engine.learning import Build, LearnInput, Tally, scoped_conventions
from services.analyzer.engine.libraries import classify
from services.source.facts import FileFacts, Import

FAMILY = "dependencies"
PREFIX = "dependencies.library."


_JOB_LABELS = {
    "http_client": "HTTP client",
    "json": "JSON",
    "cli": "command-line",
    "orm": "ORM",
    "yaml": "YAML",
    "toml": "TOML",
    "web_framework": "web framework",
    "datetime": "date/time",
}


def rule_for(job: str) -> str:
    return PREFIX + job


def _external(imp: Import) -> bool:
    return not imp.resolved_path and not imp.is_relative and imp.group != "local"


def _modules(language: str, imp: Import) -> list[str]:
    module = imp.module
    if language != "python":
        return [module[5:] if module.startswith("node:") and module != "node:test" else module]
    # "from urllib import request" uses urllib.request.
    return [module, *(f"{module}.{n}" for n in imp.names if n and n != "*")]


def file_choices(f: FileFacts) -> dict[str, dict[str, int]]:
    """job -> label -> first line importing it, for one file."""
    out: dict[str, dict[str, int]] = {}
    for imp in f.imports:
        if not _external(imp):
            continue
        for module in _modules(f.language, imp):
            for job, label in classify(f.language, module):
                out.setdefault(job, {}).setdefault(label, imp.line)
    return out


def _build(job: str, inp: LearnInput, examples: dict[tuple[str, str, str], list[str]]) -> Build:
    rule = rule_for(job)
    what = _JOB_LABELS.get(job, job.replace("_", " "))
    article = "an" if what[:1] in "aeiouHO" else "a"

    def build(language: str, scope: Scope, counts: Counter[str]) -> Convention | None:
        if not counts:
            return None
        choice = max(counts, key=lambda k: (counts[k], k))
        # A file importing two alternatives counts once for each: it is evidence against either.
        return make(
            FAMILY,
            rule,
            scope,
            choice,
            counts[choice],
            sum(counts.values()),
            inp.thresholds,
            language=language,
            subject=f"files importing {article} {what} library",
            predicate=f"use `{choice}`",
            examples=examples.get((job, language, choice), []),
            alternatives={k: n for k, n in counts.items() if k != choice},
        )

    return build


def learn(inp: LearnInput) -> list[Convention]:
    tallies: dict[str, Tally] = {}
    examples: dict[tuple[str, str, str], list[str]] = {}
    for f in inp.files:
        for job, labels in file_choices(f).items():
            tally = tallies.setdefault(job, Tally())
            dom = inp.domains.get(f.path, "")
            for label in labels:
                tally.add(f.language, f.path, dom, label)
                ex = examples.setdefault((job, f.language, label), [])
                if len(ex) < 5:
                    ex.append(f.path)
    out: list[Convention] = []
    for job, tally in tallies.items():
        build = _build(job, inp, examples)
        out.extend(scoped_conventions(tally, build, inp, rule_for(job), with_domains=True))
    return out


def settled_otherwise(fc: FileCheck, job: str, label: str) -> Convention | None:
    """The reportable convention of ``job`` in this file's scope, when it chose another library."""
    conv = fc.find(rule_for(job))
    return conv if conv is not None and conv.choice != label and fc.wants(conv) else None


def check(fc: FileCheck) -> None:
    for job, labels in file_choices(fc.facts).items():
        for label, line in labels.items():
            conv = settled_otherwise(fc, job, label)
            if conv is None:
                continue
            fc.emit(
                conv,
                line,
                f"imports `{label}` as its {_JOB_LABELS.get(job, job.replace('_', ' '))} library, "
                f"but {conv.description}",
                severity=WARNING,
                key=label,
                detail={"library": label, "job": job},
            )
