"""Dependencies family, libraries: which library the repository uses for each job.

Counted in files: a repository where 40 files import ``httpx`` and none import ``requests`` has
chosen its HTTP client, and the first ``import requests`` deserves a question.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Iterable

from services.analyzer.engine.conventions import Convention, Scope, from_counts
from services.analyzer.engine.dependencies.layering import module_map
from services.analyzer.engine.dependencies.libraries import classify, jobs_for
from services.analyzer.engine.file_check import FileCheck
from services.analyzer.engine.findings import WARNING, Finding
from services.analyzer.engine.learn_inputs import Build, LearnInput, Tally, scoped_conventions
from services.analyzer.engine.toolconfig import library_key
from services.source.facts import FileFacts, Import
from services.source.stdlib import group_of

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


def local_tops(modules: dict[str, str]) -> frozenset[str]:
    """Names an import can start with and still mean the repository's own code: its top-level
    Python packages, and every directory holding JavaScript/TypeScript modules (``baseUrl`` and
    path-alias imports such as ``components/Button`` look like package names)."""
    out: set[str] = set()
    for name, path in modules.items():
        if path.endswith(".py"):
            out.add(name.split(".", 1)[0])
        else:
            out.update(path.split("/")[:-1])
    out.discard("")
    return frozenset(out)


def tops_of(fc: FileCheck) -> frozenset[str]:
    """``local_tops`` of the model under check, computed once per loaded model."""
    tops: frozenset[str] | None = fc.index.extra.get("local_tops")
    if tops is None:
        tops = fc.index.extra["local_tops"] = local_tops(fc.index.model.modules)
    return tops


def _external(language: str, imp: Import, tops: frozenset[str]) -> bool:
    if imp.resolved_path or imp.is_relative or imp.group == "local":
        return False
    # A file sent for review is not resolved against the repository: its tests' ``import
    # requests`` in the requests repository is the repository's own package, not a library.
    sep = "." if language == "python" else "/"
    return imp.module.split(sep, 1)[0] not in tops


def _modules(language: str, imp: Import) -> list[str]:
    module = imp.module
    if language != "python":
        return [module[5:] if module.startswith("node:") and module != "node:test" else module]
    # "from urllib import request" uses urllib.request; "from unittest import mock" uses
    # unittest.mock (a mocking library), not unittest (a test runner).
    names = [f"{module}.{n}" for n in imp.names if n and n != "*"]
    return names or [module]


def file_choices(f: FileFacts, tops: frozenset[str] = frozenset()) -> dict[str, dict[str, int]]:
    """job -> label -> first line importing it, for one file."""
    out: dict[str, dict[str, int]] = {}
    for imp in f.imports:
        if not _external(f.language, imp, tops):
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
        # A file importing two alternatives counts once for each: it is evidence against either.
        return from_counts(
            FAMILY,
            rule,
            scope,
            counts,
            inp.thresholds,
            language=language,
            subject=f"files importing {article} {what} library",
            predicate=lambda choice: f"use `{choice}`",
            examples=lambda choice: examples.get((job, language, choice), []),
        )

    return build


def learn(inp: LearnInput) -> list[Convention]:
    tallies: dict[str, Tally] = {}
    examples: dict[tuple[str, str, str], list[str]] = {}
    tops = local_tops(module_map(inp.files))
    for f in inp.files:
        for job, labels in file_choices(f, tops).items():
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


def _in_stdlib(language: str, job: str, label: str) -> bool:
    prefixes = jobs_for(language).get(job, {}).get(label, ())
    return bool(prefixes) and group_of(language, prefixes[0], relative=False) == "stdlib"


# Jobs whose library is a framework the code is written in, not a helper it calls: a
# ``unittest.TestCase`` in a pytest suite or an argparse parser in a click application is a second
# way of writing the same thing, whether or not it adds a dependency.
FRAMEWORK_JOBS = frozenset({"testing", "cli"})


def settled_otherwise(fc: FileCheck, job: str, label: str) -> Convention | None:
    """The reportable convention of ``job`` in this file's scope, when it chose another library.

    A standard-library helper does not compete with a third-party choice: it adds no dependency,
    and ``urllib.request``, ``logging`` or ``json`` serve more than the job (``pathname2url``,
    configuring a library's logger) where the repository settled on ``requests`` or ``loguru``.
    A standard-library framework (``FRAMEWORK_JOBS``) still does.
    """
    conv = fc.find(rule_for(job))
    if conv is None or conv.choice == label or not fc.wants(conv) or declared_library(fc, label):
        return None
    helper = job not in FRAMEWORK_JOBS
    if helper and _in_stdlib(fc.language, job, label) and not _in_stdlib(fc.language, job, conv.choice):
        return None
    return conv


def declared_names(language: str, library: str, modules: Iterable[str] = ()) -> set[str]:
    """The ``library_key`` names under which a project may declare the library an import belongs
    to: its own; its distribution's when the job table knows it by another (``yaml`` is
    ``pyyaml``); for Python, the dotted module's (``from backports import zstd`` is
    ``backports.zstd``, one distribution of a namespace package); for an npm scope, the package of
    the scope's name (``@eslint/js`` comes with ``eslint``, which depends on it)."""
    names = {library_key(library)}
    names.update(library_key(label) for _, label in classify(language, library))
    if language == "python":
        for module in modules:
            parts = module.split(".")
            names.update(library_key(".".join(parts[:i])) for i in range(2, len(parts) + 1))
    elif library.startswith("@") and "/" in library:
        names.add(library_key(library[1:].split("/", 1)[0]))
    return names


def declares(declared: Iterable[str], language: str, library: str, modules: Iterable[str] = ()) -> bool:
    keys = declared if isinstance(declared, frozenset | set) else frozenset(declared)
    return bool(keys) and not keys.isdisjoint(declared_names(language, library, modules))


def declared_library(fc: FileCheck, library: str, modules: Iterable[str] = ()) -> bool:
    """Whether the project lists ``library`` among its dependencies (pyproject.toml, setup.py,
    package.json, a local pre-commit hook's environment), or a manifest below the root lists it
    for the directory of the file under check (``ConventionModel.declared_scopes``)."""
    model = fc.index.model
    cache: dict[str, frozenset[str]] = fc.index.extra.setdefault("declared_for", {})
    directory = posixpath.dirname(fc.path)
    keys = cache.get(directory)
    if keys is None:
        scoped = [
            lib
            for d, libs in model.declared_scopes.items()
            if directory == d or directory.startswith(d + "/")
            for lib in libs
        ]
        keys = cache[directory] = frozenset(model.declared_libraries) | frozenset(scoped)
    return declares(keys, fc.language, library, modules)


def check(fc: FileCheck) -> None:
    for job, labels in file_choices(fc.facts, tops_of(fc)).items():
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


def replaced_jobs(base: FileFacts, head: FileFacts, modules: dict[str, str]) -> set[tuple[str, str]]:
    """(job, settled library) pairs a change replaced in one file: the base imported the library,
    the head imports none of it but another library for the same job (a migration from
    ``unittest`` to ``pytest`` file by file). Findings that the change "imports `pytest` where the
    repository uses `unittest`" question a decision the change states plainly."""
    tops = local_tops(modules)
    before, after = file_choices(base, tops), file_choices(head, tops)
    return {
        (job, label)
        for job, labels in before.items()
        for label in labels
        if label not in after.get(job, {}) and any(other != label for other in after.get(job, {}))
    }


def keep_unless_replaced(findings: list[Finding], replaced: set[tuple[str, str]]) -> list[Finding]:
    """Drop job findings whose settled choice the change itself replaced (in any of its files)."""
    if not replaced:
        return findings
    return [
        f
        for f in findings
        if not (
            f.rule.startswith(PREFIX)
            and f.evidence is not None
            and (f.rule[len(PREFIX) :], f.evidence.choice) in replaced
        )
    ]
