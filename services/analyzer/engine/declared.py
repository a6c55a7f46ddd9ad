"""Conventions the repository declares in its tools' configuration, beside what it was seen to do.

Every source file is given the settings of the tool configurations that govern it (the nearest
file of each tool above it; every ``.editorconfig`` up to the one marked ``root``). Where tools
disagree, the line length is the most lenient limit any formatter or linter enforces (a line
black leaves at 95 passes a flake8 set to 100) and EditorConfig only counts without them; other
rules follow the formatter, then the linter, then EditorConfig. The values are then laid over
the directory tree: the language scope gets the value most files have, a directory gets its own
only where its files mostly differ from the scope above (a nested ``pyproject.toml``).

A declared convention is enforced at the strict level and replaces the learned one of its rule
and scope (and the learned directory conventions it covers); its description says where it is
declared and whether the code agrees with it or it overrides the learned habit. A line length is
never declared for prose and data files (Markdown, YAML, JSON, ...): a formatter's width for
Python says nothing about a CI workflow.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace

import msgspec

from services.analyzer.engine.config import path_glob
from services.analyzer.engine.conventions import DIRECTORY, DOMAIN, LANGUAGE, Convention, Scope
from services.analyzer.engine.thresholds import STRICT
from services.analyzer.engine.toolconfig import (
    CUSTOMARY_LIMITS,
    EDITOR,
    KEPT_ONLY,
    LENGTH,
    Setting,
    ToolConfigs,
    ToolSettings,
    editorconfig_settings,
)
from services.source.facts import FileFacts

SOURCE = "declared"
# The choice of an EditorConfig key its file's sections turn off (``off``, ``unset``; ``false`` for
# trim_trailing_whitespace and insert_final_newline): that file is held to no declared value of the
# rule, and keeps the habit learned for its directory, as a file no tool declares for.
OFF = "off"
# Formatting-only languages where a line length learned or declared for code does not apply.
PROSE_AND_DATA: frozenset[str] = frozenset({"markdown", "yaml", "json", "toml", "xml", "html"})


@dataclass(frozen=True, slots=True)
class Declared:
    rule: str
    choice: str
    file: str
    setting: str
    code_only: bool = False  # a line length that string literals and comments may exceed
    scope: tuple[str, ...] = ()  # the paths the declaring tool is run on (toolconfig.ToolSettings.scope)
    type_ignore_whole: bool = False  # a line length no tool holds a line ending in `# type: ignore` to
    params: tuple[tuple[str, str], ...] = ()  # toolconfig.Setting.params

    @property
    def sort_key(self) -> tuple[str, str, str]:
        return (self.choice, self.file, self.setting)

    @property
    def off(self) -> bool:
        """EditorConfig turning the rule off for the file (``max_line_length = off`` in a later section)."""
        return self.choice == OFF


def per_file(configs: ToolConfigs, files: Iterable[FileFacts]) -> dict[tuple[str, str], dict[str, Declared | None]]:
    """(rule, language) -> path -> the value declared for that file (None: nothing declared)."""
    by_tool: dict[str, dict[str, ToolSettings]] = {}
    for t in configs.tools:
        by_tool.setdefault(t.tool, {}).setdefault(t.directory, t)
    out: dict[tuple[str, str], dict[str, Declared | None]] = {}
    paths: dict[str, list[str]] = {}
    for f in files:
        if not f.language or f.skipped:
            continue
        paths.setdefault(f.language, []).append(f.path)
        found: dict[str, list[tuple[int, int, str, Declared]]] = {}
        dirs = [*_ancestors(f.path), ""]
        for tool, by_dir in sorted(by_tool.items()):
            ts = next((by_dir[d] for d in dirs if d in by_dir), None)
            if ts is None or f.language not in ts.languages:
                continue
            if ts.scope and not any(re.match(r, f.path) for r in ts.scope):
                continue  # a linter run on named paths only (tox's `flake8 markdown tests`)
            exempt = {r for glob, rules in ts.exempt if _matches(glob, f.path, ts.directory) for r in rules}
            for s in ts.settings:
                if s.rule not in exempt:
                    found.setdefault(s.rule, []).append((ts.rank, _number(s), tool, _declared(s, ts.path, ts.scope)))
        if configs.editorconfigs:
            for s, path in _editorconfig(configs, f.path, dirs):
                found.setdefault(s.rule, []).append((EDITOR, _number(s), "editorconfig", _declared(s, path)))
        for rule, candidates in found.items():
            value = _resolve(rule, candidates, f.language)
            if value is not None:
                out.setdefault((rule, f.language), {})[f.path] = value
    for (_rule, language), values in out.items():
        for path in paths[language]:
            values.setdefault(path, None)  # undeclared files vote too
    return out


_EDITOR_RULES = frozenset(
    {
        "formatting.indent.unit",
        "formatting.indent.width",
        LENGTH,
        "formatting.trailing_whitespace",
        "formatting.final_newline",
        "formatting.line_endings",
    }
)


def _declared(s: Setting, path: str, scope: tuple[str, ...] = ()) -> Declared:
    return Declared(s.rule, s.choice, path, s.evidence, s.code_only, scope, s.type_ignore_whole, s.params)


def _number(s: Setting) -> int:
    return int(s.choice) if s.choice.isdigit() else 0


def _resolve(rule: str, candidates: list[tuple[int, int, str, Declared]], language: str) -> Declared | None:
    if not candidates:
        return None
    if rule == LENGTH:
        if language in PROSE_AND_DATA:
            return None
        tools = [c for c in candidates if c[0] != EDITOR]
        pool = tools or candidates
        chosen = max(pool, key=lambda c: (c[1], -c[0], c[2]))
        # A linter reporting every line at that limit binds strings and comments too.
        code_only = all(c[3].code_only for c in pool if c[1] == chosen[1])
        # A line the formatter keeps whole for its type-ignore pragma is long only where a tool
        # declaring any limit reports it (flake8 at 79 beside black at 88 would).
        whole = all(c[3].type_ignore_whole for c in pool)
        return replace(chosen[3], code_only=code_only, type_ignore_whole=whole)
    return min(candidates, key=lambda c: (c[0], c[2]))[3]


def _ancestors(path: str) -> list[str]:
    out: list[str] = []
    d = posixpath.dirname(path)
    while d:
        out.append(d)
        d = posixpath.dirname(d)
    return out


def _matches(glob: str, path: str, base: str) -> bool:
    rel = path[len(base) + 1 :] if base and path.startswith(base + "/") else path
    return bool(path_glob(glob).match(rel))


def _editorconfig(configs: ToolConfigs, path: str, dirs: list[str]) -> list[tuple[Setting, str]]:
    """EditorConfig's own lookup: nearer files override farther ones, up to one marked root."""
    chain = []
    for d in dirs:
        ec = configs.editorconfigs.get(d)
        if ec is not None:
            chain.append(ec)
            if ec.root:
                break
    options: dict[str, str] = {}
    origin: dict[str, str] = {}
    for ec in reversed(chain):  # farthest first, so nearer files overwrite
        for key, value in ec.options(path).items():
            options[key] = value
            origin[key] = ec.path
    out: list[tuple[Setting, str]] = []
    for key in sorted(options):
        if options[key] in _OFF_VALUES.get(key, ()):
            out += [(Setting(rule, OFF, f"{key} = {options[key]}"), origin[key]) for rule in EDITORCONFIG_RULES[key]]
            continue
        where = f"[{posixpath.basename(origin[key])}]"
        for s in editorconfig_settings({key: options[key], **_style(options, key)}, where):
            if s.rule in EDITORCONFIG_RULES.get(key, ()):
                out.append((Setting(s.rule, s.choice, s.evidence.removeprefix(where + " ")), origin[key]))
    return out


# EditorConfig key -> the rules it declares (review.py also reads which keys a change edits).
EDITORCONFIG_RULES = {
    "indent_style": ("formatting.indent.unit",),
    "indent_size": ("formatting.indent.width",),
    "max_line_length": (LENGTH,),
    "trim_trailing_whitespace": ("formatting.trailing_whitespace",),
    "insert_final_newline": ("formatting.final_newline",),
    "end_of_line": ("formatting.line_endings",),
}


# What turns a key off: EditorConfig's ``off`` (max_line_length) and ``unset`` (any key), and a
# ``false`` of the two keys that are booleans.
_OFF_VALUES: dict[str, tuple[str, ...]] = {
    "indent_style": ("off", "unset"),
    "indent_size": ("off", "unset"),
    "max_line_length": ("off", "unset"),
    "trim_trailing_whitespace": ("false", "unset"),
    "insert_final_newline": ("false", "unset"),
    "end_of_line": ("off", "unset"),
}


def _style(options: dict[str, str], key: str) -> dict[str, str]:
    # indent_size depends on indent_style (no width for tabs).
    return {"indent_style": options["indent_style"]} if key == "indent_size" and "indent_style" in options else {}


# --- laying the values over the tree ----------------------------------------------------------


def scoped(values: dict[str, Declared | None]) -> list[tuple[str, Declared]]:
    """(directory, value): "" for the language scope, then directories that mostly differ."""
    kinds: dict[Declared | None, int] = {}  # values counted as small ints: hashing them is the cost
    order: list[Declared | None] = []
    chains: dict[str, list[str]] = {}
    counts: dict[str, Counter[int]] = {}
    for path, value in values.items():
        kind = kinds.setdefault(value, len(order))
        if kind == len(order):
            order.append(value)
        directory = posixpath.dirname(path)
        chain = chains.get(directory)
        if chain is None:
            chain = chains[directory] = ["", *_ancestors(path)]
        for d in chain:
            counts.setdefault(d, Counter())[kind] += 1
    keys = [v.sort_key if v is not None else ("", "", "") for v in order]
    chosen: dict[str, int] = {}
    out: list[tuple[str, Declared]] = []
    for d in sorted(counts, key=lambda x: (x.count("/") + 1 if x else 0, x)):
        best = max(counts[d].items(), key=lambda kv: (kv[1], keys[kv[0]]))[0]
        if d:
            inherited = next((chosen[a] for a in _ancestors(d + "/x") if a in chosen), chosen.get(""))
            if best == inherited:
                continue
        chosen[d] = best
        value = order[best]
        if value is not None:
            out.append((d, value))
    return out


def exemptions(configs: ToolConfigs) -> dict[tuple[str, str], str]:
    """(rule, language) -> the globs (one a line, from the repository root) of the files every
    tool declaring that rule leaves alone (ruff ``exclude``, flake8 ``exclude``, E501 per-file
    ignores): a file one tool skips is still held to another's setting."""
    globs: dict[tuple[str, str], list[set[str]]] = {}
    for t in configs.tools:
        for rule in sorted({s.rule for s in t.settings}):
            mine = {_rooted(t.directory, g) for g, rules in t.exempt if rule in rules}
            for language in t.languages:
                globs.setdefault((rule, language), []).append(mine)
    out: dict[tuple[str, str], str] = {}
    for key, sets in globs.items():
        common = set.intersection(*sets)
        if common:
            out[key] = "\n".join(sorted(common))
    return out


def _rooted(directory: str, glob: str) -> str:
    # An ignore file's `/test/*/fixtures/**` is anchored at its own directory.
    return posixpath.join(directory, glob.lstrip("/")) if directory else glob


def apply(
    convs: list[Convention],
    declared: dict[tuple[str, str], dict[str, Declared | None]],
    files: list[FileFacts],
    kept_share: float = 0.95,
    exempt: dict[tuple[str, str], str] | None = None,
) -> list[Convention]:
    """``convs`` with the declared conventions laid over the learned ones.

    ``kept_share``: the share of files whose longest line must stay within a limit for it to be
    the one the repository keeps (the strict bar of the learned line length).
    """
    if not declared:
        return convs
    placed: dict[tuple[str, str], list[tuple[str, Declared]]] = {k: scoped(v) for k, v in declared.items()}
    learned = {(c.rule, c.language, c.scope.kind, c.scope.value): c for c in convs}
    maxima = {f.path: f.formatting.max_judged_line_length for f in files if f.formatting is not None}
    for (rule, language), values in placed.items():
        placed[(rule, language)] = [(d, v) for d, v in values if not _not_kept(learned, rule, language, d, v)]
    out: list[Convention] = []
    for c in convs:
        where = placed.get((c.rule, c.language))
        if where is not None and _covered(c, where):
            continue
        out.append(c)
    for (rule, language), where in sorted(placed.items()):
        unreached = _turned_off(declared[(rule, language)], where)
        for directory, value in where:
            if value.off:
                kept = _learned_below(learned, rule, language, directory, where)
                if kept is not None:
                    out.append(kept)
                continue
            scope = Scope(DIRECTORY, directory) if directory else Scope(LANGUAGE, language)
            base = learned.get((rule, language, scope.kind, scope.value)) or learned.get(
                (rule, language, LANGUAGE, language)
            )
            paths = [
                p
                for p, v in declared[(rule, language)].items()
                if v == value and (not directory or p.startswith(directory + "/"))
            ]
            made = _convention(rule, language, scope, value, base, paths, maxima, kept_share)
            globs = [exempt[(rule, language)]] if exempt and (rule, language) in exempt else []
            globs += unreached.get(directory, [])
            if globs:
                made.params["exempt"] = "\n".join(globs)
            out.append(made)
    return out


def _not_kept(
    learned: dict[tuple[str, str, str, str], Convention], rule: str, language: str, directory: str, value: Declared
) -> bool:
    """Whether a formatter's setting read from a pre-commit hook alone (no table of its own, so
    nothing but a contributor's local hook may ever run it) is one the code does not keep: pyparsing's
    black hook (`rev: stable`, run by no CI) beside examples whose lines run to 120 columns gave 11
    fair comments of 38. Where the learned habit of that scope chose otherwise, the hook is not in
    force and the learned convention stays."""
    if not dict(value.params).get(KEPT_ONLY):
        return False
    scope = Scope(DIRECTORY, directory) if directory else Scope(LANGUAGE, language)
    base = learned.get((rule, language, scope.kind, scope.value)) or learned.get((rule, language, LANGUAGE, language))
    if base is None:
        return False
    if rule == LENGTH and base.choice.isdigit() and value.choice.isdigit():
        return int(base.choice) > int(value.choice)  # lines past the formatter's width are the habit
    return base.choice != value.choice


def _nearest(where: list[tuple[str, Declared]], directory: str) -> tuple[str, Declared] | None:
    """The placed value that governs ``directory``: its own, else the nearest above it."""
    placed = dict(where)
    for d in _ancestors(directory + "/x") if directory else []:
        if d in placed:
            return d, placed[d]
    return ("", placed[""]) if "" in placed else None


def _covered(c: Convention, where: list[tuple[str, Declared]]) -> bool:
    """Whether a declared value replaces the learned ``c``: one governs its scope, and is no
    EditorConfig ``off`` (under which the learned habit stays)."""
    if c.scope.kind in (LANGUAGE, DOMAIN):
        governing = _nearest(where, "")
    elif c.scope.kind == DIRECTORY:
        governing = _nearest(where, c.scope.value)
    else:
        return False
    return governing is not None and not governing[1].off


def _learned_below(
    learned: dict[tuple[str, str, str, str], Convention],
    rule: str,
    language: str,
    directory: str,
    where: list[tuple[str, Declared]],
) -> Convention | None:
    """The learned habit for a directory whose files EditorConfig turns the rule off for (qs'
    `[test/*] max_line_length = off` under `[*] max_line_length = 180`), where a declared value
    above it replaced that habit: the nearest learned convention of its chain, scoped to it.
    None where the learned one stays as it is (its own directory's, or nothing declared above)."""
    if not directory or learned.get((rule, language, DIRECTORY, directory)) is not None:
        return None
    above = _nearest(where, posixpath.dirname(directory))
    if above is None or above[1].off:
        return None
    chain = [(DIRECTORY, d) for d in _ancestors(directory)] + [(LANGUAGE, language)]
    base = next((learned[(rule, language, *k)] for k in chain if (rule, language, *k) in learned), None)
    if base is None:
        return None
    lang = f"[{language}]" if language else ""
    return msgspec.structs.replace(base, id=f"{rule}@{DIRECTORY}:{directory}{lang}", scope=Scope(DIRECTORY, directory))


def _turned_off(values: dict[str, Declared | None], where: list[tuple[str, Declared]]) -> dict[str, list[str]]:
    """Placed directory -> the files under it that EditorConfig turns the rule off for though the
    value placed there is a declared one (nanoid's `[nanoid.js] insert_final_newline = false` in a
    directory held to a final newline): exempt from it."""
    out: dict[str, list[str]] = {}
    for path, value in sorted(values.items()):
        if value is None or not value.off:
            continue
        governing = _nearest(where, posixpath.dirname(path))
        if governing is not None and not governing[1].off:
            out.setdefault(governing[0], []).append(_literal_glob(path))
    return out


def _literal_glob(path: str) -> str:
    """``path`` as a glob naming that file alone (anchored: a bare name would match at any depth)."""
    return "/" + path


def _convention(
    rule: str,
    language: str,
    scope: Scope,
    value: Declared,
    learned: Convention | None,
    paths: list[str],
    maxima: dict[str, int],
    kept_share: float,
) -> Convention:
    params: dict[str, str | int | float | bool] = {"declared_in": value.file, "setting": value.setting}
    params.update(value.params)
    if value.scope:
        params["scope"] = "\n".join(value.scope)
    count = support = 0
    if rule == LENGTH:
        limit = int(value.choice)
        params["limit"] = limit
        kept = [maxima[p] for p in paths if p in maxima]
        count, support = len(kept), sum(1 for m in kept if m <= limit)
        if value.type_ignore_whole:
            params["type_ignore_whole"] = True
        if value.code_only:
            # The formatter leaves a line long when a string or comment makes it so; such a line
            # is held to the limit the repository's files keep in fact (0: none is kept).
            params["content_limit"] = _kept_limit(kept, limit, kept_share)
    elif learned is not None:
        count = learned.count
        support = learned.support if learned.choice == value.choice else learned.alternatives.get(value.choice, 0)
    agreement = "declared"
    suffix = ""
    if learned is not None:
        params["learned"] = learned.choice
        agreement = "agrees" if learned.choice == value.choice else "overrides"
        suffix = (
            f"; the code agrees: {learned.description}"
            if agreement == "agrees"
            else f"; it overrides the learned habit: {learned.description}"
        )
    params["agreement"] = agreement
    lang = f"[{language}]" if language else ""
    return Convention(
        id=f"{rule}@{scope.kind}:{scope.value}{lang}",
        family=rule.split(".", 1)[0],  # formatting, typing (mypy, ruff ANN), documentation (ruff D)
        rule=rule,
        scope=scope,
        choice=value.choice,
        share=round(support / count, 4) if count else 1.0,
        count=count,
        support=support,
        language=language,
        level=STRICT,
        confidence=1.0,
        description=f"declared in {value.file}: {value.setting}{suffix}",
        alternatives=dict(learned.alternatives) if learned is not None else {},
        params=params,
        source=SOURCE,
    )


def _kept_limit(maxima: list[int], limit: int, share: float) -> int:
    """The smallest customary limit from ``limit`` up that ``share`` of the files keep (0: none)."""
    if not maxima:
        return limit
    for candidate in (limit, *(c for c in CUSTOMARY_LIMITS if c > limit)):
        if sum(1 for m in maxima if m <= candidate) >= share * len(maxima):
            return candidate
    return 0


def with_declared(
    convs: list[Convention], configs: ToolConfigs | None, files: list[FileFacts], kept_share: float = 0.95
) -> list[Convention]:
    if configs is None or not (configs.tools or configs.editorconfigs):
        return convs
    return apply(convs, per_file(configs, files), files, kept_share, exemptions(configs))
