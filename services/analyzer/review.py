"""The core of every analysis: files under review checked against the repository's model.

A change's findings are split into what it introduced and what its base already had
(``engine/baseline.py``): when any file of the change comes with its base side, the head of each
changed file and the base of each are also checked whole, and the findings on changed lines are
paired with the base's. Files without a base side (added ones, or a review with no base at all)
only add what they report.

Pure CPU work (extraction with the shared source library, then the engine), so a batch runs in a
worker thread while the event loop keeps serving; one small file runs inline, where a thread hop
would cost more than it saves.
"""

from __future__ import annotations

import functools
import posixpath
from dataclasses import dataclass, field

import msgspec

from services.analyzer.engine import (
    CheckPrefs,
    ConventionModel,
    Finding,
    apply_calibration,
    check,
    check_change,
    toolconfig,
)
from services.analyzer.engine.baseline import narrowed, split
from services.analyzer.engine.caps import capped, noted
from services.analyzer.engine.declared import EDITORCONFIG_RULES
from services.analyzer.engine.dependencies import PREFIX, keep_unless_replaced, replaced_jobs
from services.analyzer.engine.learn import command_paths
from services.analyzer.engine.toolconfig import library_key
from services.analyzer.preferences import Effective
from services.analyzer.state import LoadedRepo
from services.source.extract import extract
from services.source.facts import FACTS_SCHEMA_VERSION, FileFacts
from services.source.paths import is_tool_config

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
    base: bytes | None = None  # the content before the change (at old_path), None when it had none
    base_facts: FileFacts | None = None  # the base's facts as the indexer extracted them


@dataclass
class Outcome:
    findings: list[Finding] = field(default_factory=list)  # what the change introduced
    preexisting: list[Finding] = field(default_factory=list)  # on changed lines, already at the base
    preexisting_count: int = 0  # all of them, before the per-rule cap
    baseline: bool = False  # whether the findings were compared with a base at all
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


@functools.lru_cache(maxsize=32)
def _config(path: str, data: bytes) -> toolconfig.ToolConfigs:
    """One tool configuration file of a change, read once: the model's packages, declared
    libraries, exclusions, commands and declarations each ask it of the same files (read-only)."""
    return toolconfig.read({path: text_of(data)})


def review(
    entry: LoadedRepo,
    model: ConventionModel,
    targets: list[Target],
    prefs: Effective,
    *,
    max_bytes: int,
    change_level: bool,
    cap: bool = True,
) -> Outcome:
    """Findings for ``targets`` (limited to their changed lines) plus the change-level ones, with
    those the base already had set apart in ``preexisting``; each list capped per rule for the
    whole change (``cap_change``) unless ``cap`` is False (the caller filters further first)."""
    out = Outcome()
    model = with_change_exclusions(with_change_packages(with_change_stubs(model, targets), targets), targets)
    model = with_change_libraries(model, targets)
    model = with_change_commands(model, targets)
    check_prefs = prefs.check_prefs(model.config.level)
    whole = msgspec.structs.replace(check_prefs, max_per_rule=1 << 30)  # for pairing: nothing capped
    with_base = any(t.base is not None for t in targets)
    reported: list[Finding] = []
    unchanged: list[Finding] = []
    base: list[Finding] = []
    base_sides: dict[str, tuple[FileFacts, list[Finding]]] = {}  # by head path
    for t in targets:
        if with_base and t.base is not None and not prefs.ignores_path(t.old_path or t.path):
            found, facts = _base_findings(t, model, whole, max_bytes)
            base_sides[t.path] = (facts, found)
            base.extend(found)
        if t.status == "deleted":
            continue
        if prefs.ignores_path(t.path):
            out.skipped[t.path] = "ignored"
            continue
        if model.ignores(t.path):
            out.skipped[t.path] = "excluded"  # .codereview.yml, or the project's linters, leave it alone
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
        text = text_of(t.data)
        reported.extend(check(facts, text, model, changed_lines=t.changed, prefs=whole))  # capped per change below
        if with_base and t.changed and t.status != "added":
            lines = t.changed
            head = check(facts, text, model, prefs=whole)
            unchanged.extend(f for f in head if not any(n in lines for n in range(f.start_line, f.end_line + 1)))
        out.analyzed.append(t.path)
        out.facts[t.path] = facts
    for path, (facts, found) in base_sides.items():
        base.extend(narrowed(path, facts, out.facts.get(path), found))
    introduced, preexisting = split(reported, unchanged, base) if with_base else (reported, [])
    if introduced and base_sides:
        sides = [t for t in targets if t.path in base_sides]
        moved = _moved_in(sides, introduced, out.facts, model, whole, max_bytes)
        if moved:
            introduced, preexisting = split(reported, unchanged, base + moved)
    out.findings = introduced
    out.baseline = with_base
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
    redeclared = redeclared_rules(targets)
    if redeclared:
        # The change sets these rules' conventions itself (tenacity's "enable black" ignores E501 in
        # the tox.ini it edits): the model, learned before it, cannot hold it to the settings it
        # replaces.
        out.findings = [f for f in out.findings if f.rule not in redeclared]
        preexisting = [f for f in preexisting if f.rule not in redeclared]
    # A library the change adds to its own manifest is a dependency it declares (express adds
    # `encodeurl` to package.json and requires it), as one the model knew declared would be; and a
    # library whose settled rival the change's files stop importing is a replacement it states
    # (pino's tests converted from tap to node:test).
    added = libraries_declared_by(targets)
    out.findings = [f for f in out.findings if not (f.rule.startswith(PREFIX) and library_key(f.anchor) in added)]
    # A module the change itself adds is the repository's, not a library: filelock's new tests
    # import tests/fork_helpers.py, added beside them (pytest puts their directory on sys.path).
    own = modules_added_by(targets)
    out.findings = [f for f in out.findings if not (f.rule == PREFIX + "new" and f.anchor in own)]
    out.findings = keep_unless_replaced(out.findings, _replaced_with_bases(targets, out, model))
    out.findings = _kept(entry, prefs, check_prefs, out.findings)
    out.preexisting = _kept(entry, prefs, check_prefs, preexisting)
    out.preexisting_count = len(out.preexisting)
    return cap_change(out, check_prefs.max_per_rule) if cap else out


def cap_change(out: Outcome, per_rule: int) -> Outcome:
    """At most ``per_rule`` findings of one rule in the whole change, the last saying how many
    more (``engine/caps.py``), and the same for the pre-existing ones (their count stays whole):
    a change that requotes 28 files is one nit, not 84 comments."""
    kept, left_out = capped(out.findings, per_rule)
    out.findings = noted(kept, left_out, "in this change")
    kept, left_out = capped(out.preexisting, per_rule)
    out.preexisting = noted(kept, left_out, "in this change")
    return out


def with_change_stubs(model: ConventionModel, targets: list[Target]) -> ConventionModel:
    """The model with the ``.pyi`` stubs as the change leaves them: a stub added beside its module
    in the same change types that module (typing.has_stub), one the change deletes no longer does."""
    stubs = set(model.stubs)
    for t in targets:
        if t.path.endswith(".pyi"):
            (stubs.discard if t.status == "deleted" else stubs.add)(t.path)
        if t.old_path.endswith(".pyi") and t.old_path != t.path:
            stubs.discard(t.old_path)
    if stubs == set(model.stubs):
        return model
    return msgspec.structs.replace(model, stubs=tuple(sorted(stubs)))


def with_change_packages(model: ConventionModel, targets: list[Target]) -> ConventionModel:
    """The model with the packages as the change leaves them: a package.json or pyproject.toml the
    change adds below the root makes its directory a package of its own (toolconfig.package_root),
    whose new files have no habits yet rather than the root's; one the change deletes no longer does."""
    packages = set(model.packages)
    for t in targets:
        if posixpath.basename(t.path) not in (toolconfig.PACKAGE_JSON, toolconfig.PYPROJECT):
            continue
        directory = posixpath.dirname(t.path)
        if t.status == "deleted":
            packages.discard(directory)
        elif t.data is not None and directory in _config(t.path, t.data).packages:
            packages.add(directory)
    if packages == set(model.packages):
        return model
    return msgspec.structs.replace(model, packages=tuple(sorted(packages)))


def with_change_libraries(model: ConventionModel, targets: list[Target]) -> ConventionModel:
    """The model with the dependencies as the change's manifests leave them: a library the change
    declares (setup.py's ``install_requires``, a pyproject extra, a local pre-commit hook's
    ``additional_dependencies``, a requirements file beside the new docker app that imports it) is
    no new dependency of the files it declares it for."""
    libraries = set(model.declared_libraries)
    scopes = {d: set(libs) for d, libs in model.declared_scopes.items()}
    for t in targets:
        if t.status == "deleted" or t.data is None or not is_tool_config(t.path):
            continue
        read = _config(t.path, t.data)
        libraries |= read.libraries
        for directory, libs in read.scoped_libraries.items():
            scopes.setdefault(directory, set()).update(libs)
    if libraries == set(model.declared_libraries) and scopes == {
        d: set(libs) for d, libs in model.declared_scopes.items()
    }:
        return model
    return msgspec.structs.replace(
        model,
        declared_libraries=tuple(sorted(libraries)),
        declared_scopes={d: tuple(sorted(libs)) for d, libs in sorted(scopes.items())},
    )


def with_change_exclusions(model: ConventionModel, targets: list[Target]) -> ConventionModel:
    """The model with the linters' exclusions as the change leaves them: a vendored copy added
    together with the ignore-file line that excludes it is not the project's code either."""
    globs = set(model.excluded)
    for t in targets:
        if not is_tool_config(t.path) and not (t.old_path and is_tool_config(t.old_path)):
            continue
        if t.base is not None:
            globs -= set(_config(t.old_path or t.path, t.base).excluded)
        if t.status != "deleted" and t.data is not None and is_tool_config(t.path):
            globs |= set(_config(t.path, t.data).excluded)
    if globs == set(model.excluded):
        return model
    return msgspec.structs.replace(model, excluded=tuple(sorted(globs)))


def with_change_commands(model: ConventionModel, targets: list[Target]) -> ConventionModel:
    """The model with the commands as the change leaves them: a console script or pre-commit hook
    the change declares for a module (gunicorn's new ``gunicornc`` in ``[project.scripts]``, added
    with its ``ctl/cli.py``) makes that module's prints its output, as one the model knew would."""
    declared: set[str] = set()
    for t in targets:
        if t.status != "deleted" and t.data is not None and is_tool_config(t.path):
            declared |= _config(t.path, t.data).commands
    if not declared:
        return model
    paths = {*model.modules.values(), *(t.path for t in targets if t.status != "deleted")}
    commands = set(model.commands) | set(command_paths(declared, paths, model.modules))
    if commands == set(model.commands):
        return model
    return msgspec.structs.replace(model, commands=tuple(sorted(commands)))


def redeclared_rules(targets: list[Target]) -> frozenset[str]:
    """Rules whose declared settings a tool configuration file of the change adds, removes or
    changes (its line length, an ignored code, an exempted path); a version bump in package.json
    changes none."""
    rules: set[str] = set()
    for t in targets:
        if not (is_tool_config(t.path) or (t.old_path and is_tool_config(t.old_path))):
            continue
        if t.data is None and t.status != "deleted":
            continue  # its new content is unknown (skipped, not fetched): nothing to compare
        before = _declared(t.old_path or t.path, t.base)
        after = _declared(t.path, None if t.status == "deleted" else t.data)
        rules.update(rule for rule, _ in before ^ after)
    return frozenset(rules)


def libraries_declared_by(targets: list[Target]) -> frozenset[str]:
    """Libraries (``library_key``) that a manifest of the change (package.json, pyproject.toml)
    lists and its base did not."""
    added: set[str] = set()
    for t in targets:
        if t.status == "deleted" or t.data is None or not is_tool_config(t.path):
            continue
        before = _config(t.old_path or t.path, t.base).libraries if t.base is not None else set()
        added |= _config(t.path, t.data).libraries - before
    return frozenset(added)


def modules_added_by(targets: list[Target]) -> frozenset[str]:
    """Names the Python modules and packages a change adds are imported by (``fork_helpers``
    for ``tests/fork_helpers.py``, ``helpers`` for ``tests/helpers/__init__.py``)."""
    names: set[str] = set()
    for t in targets:
        if t.status in ("added", "renamed", "copied") and t.path.endswith(".py"):
            head, _, name = t.path[:-3].rpartition("/")
            names.add(head.rpartition("/")[2] if name == "__init__" else name)
    return frozenset(n for n in names if n)


def _replaced_with_bases(targets: list[Target], out: Outcome, model: ConventionModel) -> set[tuple[str, str]]:
    """(job, library) pairs the change replaced in a modified file whose base the review has
    (``replacements.py`` reads the others' bases from the indexer)."""
    flagged = {f.path for f in out.findings if f.rule.startswith(PREFIX) and f.rule != PREFIX + "new"}
    replaced: set[tuple[str, str]] = set()
    for t in targets:
        head = out.facts.get(t.path)
        if t.path not in flagged or head is None or t.base is None or t.status not in ("modified", "renamed"):
            continue
        base = usable_facts(t.base_facts, t.old_path or t.path) or extract(t.old_path or t.path, t.base)
        replaced |= replaced_jobs(base, head, model.modules)
    return replaced


def _declared(path: str, data: bytes | None) -> set[tuple[str, str]]:
    """(rule, what the file says about it) for each rule one tool configuration file declares."""
    if data is None or not is_tool_config(path):
        return set()
    if path.rsplit("/", 1)[-1] == ".editorconfig":
        return _editorconfig_declared(text_of(data))
    if path.rsplit("/", 1)[-1] == toolconfig.PRE_COMMIT:
        # Which hooks run decides which tool's line length holds (toolconfig._Runs): pytest-mock's
        # "use ruff" drops black's hook for ruff's, and the [flake8] section left behind with it.
        # A black or ruff-format hook declares that formatter's settings too (toolconfig._formatter_runs).
        hooks = {(toolconfig.LENGTH, f"hook:{h}") for h in toolconfig.length_hooks(text_of(data))}
    else:
        hooks = set()
    read = _config(path, data)
    out = hooks | {(s.rule, f"{t.tool}:{s.choice}:{s.code_only}") for t in read.tools for s in t.settings}
    out.update((rule, f"{t.tool}:exempt:{glob}") for t in read.tools for glob, rules in t.exempt for rule in rules)
    return out


def _editorconfig_declared(text: str) -> set[tuple[str, str]]:
    """(rule, section and value) for each key of an .editorconfig that declares one of our rules:
    a section the change adds (nanoid's `[nanoid.js] insert_final_newline = false` for the
    minified prebuild) changes what the rule asks of the files it matches."""
    out: set[tuple[str, str]] = set()
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line
            continue
        key, eq, value = line.partition("=")
        for rule in EDITORCONFIG_RULES.get(key.strip().lower(), ()) if eq else ():
            out.add((rule, f"editorconfig:{section}:{value.strip().lower()}"))
    return out


def _kept(entry: LoadedRepo, prefs: Effective, check_prefs: CheckPrefs, findings: list[Finding]) -> list[Finding]:
    calibrated = apply_calibration(findings, entry.calibration, level=check_prefs.level)
    return [f for f in calibrated if prefs.keeps(f.rule, f.severity, f.confidence, f.path)]


def _base_findings(
    t: Target, model: ConventionModel, prefs: CheckPrefs, max_bytes: int
) -> tuple[list[Finding], FileFacts]:
    """The base side of one changed file, checked whole (nothing when it cannot be read), and
    its facts."""
    assert t.base is not None
    path = t.old_path or t.path
    facts = usable_facts(t.base_facts, path) or extract(path, t.base, max_bytes=max_bytes)
    if facts.skipped:
        return [], facts
    found = check(facts, text_of(t.base), model, prefs=prefs)
    if t.status == "deleted" or path == t.path:
        return found, facts
    return [msgspec.structs.replace(f, path=t.path) for f in found], facts  # a rename's base, as the head names it


# Base sides checked again under another file's path, at most, per review: a split of a large
# module into many is bounded, not checked file by file against file.
MAX_MOVED_CHECKS = 16


def _moved_in(
    targets: list[Target],
    introduced: list[Finding],
    heads: dict[str, FileFacts],
    model: ConventionModel,
    prefs: CheckPrefs,
    max_bytes: int,
) -> list[Finding]:
    """Base findings of code the change moved into a file from another of ``sides`` (the targets
    whose base is reviewed), or from a renamed file's old path, checked as that file:
    Python-Markdown moved its TOC tests from ``tests/test_extensions.py``, whose directory holds
    no quote habit, into ``tests/test_syntax/extensions/test_toc.py``, whose directory does; the
    old code was never flagged where it was, yet it is old code where it lands.

    A base side is checked as ``path`` when it is of the same language and held what a finding
    of ``path`` flags (its anchor, whitespace aside) more often than the change leaves there; of
    its findings, those with such an anchor are kept (what moved, not what stayed behind).
    """
    anchors: dict[str, set[str]] = {}
    for f in introduced:
        if f.start_line > 0 and f.anchor:
            anchors.setdefault(f.path, set()).add("".join(f.anchor.split()))
    squeezed: dict[str, tuple[str, str]] = {}  # head path -> (base text, head text), whitespace aside
    for t in targets:
        if t.base is not None:
            now = "" if t.status == "deleted" or t.data is None else text_of(t.data)
            squeezed[t.path] = ("".join(text_of(t.base).split()), "".join(now.split()))
    by_path = {t.path: t for t in targets}
    out: list[Finding] = []
    checks = 0
    for path in sorted(anchors):
        head = heads.get(path)
        if head is None:
            continue
        for source in sorted(squeezed):
            t = by_path[source]
            if source == path and (t.old_path or path) == path:
                continue  # its own base, already checked as itself
            before, after = squeezed[source]
            gone = {a for a in anchors[path] if a and before.count(a) > after.count(a)}
            if not gone:
                continue
            if checks >= MAX_MOVED_CHECKS:
                return out
            checks += 1
            assert t.base is not None
            facts = extract(path, t.base, max_bytes=max_bytes)
            if not facts.skipped and facts.language == head.language:
                found = check(facts, text_of(t.base), model, prefs=prefs)
                out.extend(f for f in found if "".join(f.anchor.split()) in gone)
    return out


def _gone(targets: list[Target]) -> list[str]:
    """Paths that no longer exist after the change: deleted files and the old side of renames."""
    out = [t.path for t in targets if t.status == "deleted"]
    return out + [t.old_path for t in targets if t.status == "renamed" and t.old_path]
