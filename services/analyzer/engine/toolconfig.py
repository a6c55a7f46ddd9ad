"""What the repository's own tools are configured to enforce, read from their configuration files.

Each reader parses one tool's file with the library the tool itself uses (``tomllib`` for
``pyproject.toml`` and ``rustfmt.toml``, ``configparser`` for ``setup.cfg`` / ``tox.ini`` /
``.flake8`` / ``.pylintrc``, YAML/JSON for Prettier, ESLint and ``.clang-format``, the
``editorconfig`` package's parser for ``.editorconfig``) and returns :class:`Setting` values in
our rule vocabulary. A tool's defaults count when the tool is configured: a ``[tool.black]``
table without ``line-length`` declares 88.

Pure: texts in, settings out. Which file applies to which source file is ``declared``'s job.
"""

from __future__ import annotations

import ast
import configparser
import io
import json
import posixpath
import re
import shlex
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import yaml
from editorconfig.exceptions import ParsingError
from editorconfig.ini import EditorConfigParser

from services.source.paths import SETUP_PY, TOOL_CONFIG_NAMES, is_requirements, is_run_file

LENGTH = "formatting.line_length"
UNIT = "formatting.indent.unit"
WIDTH = "formatting.indent.width"
QUOTES = "formatting.quotes"
TRAILING = "formatting.trailing_whitespace"
FINAL_NEWLINE = "formatting.final_newline"
LINE_ENDINGS = "formatting.line_endings"
IMPORT_ORDER = "formatting.imports.order"
# Rules a type checker or linter declares besides formatting (typing.py, documentation.py).
ANNOTATED_FUNCTION = "typing.annotations.function"
ANNOTATED_METHOD = "typing.annotations.method"
TYPING_RULES: tuple[str, ...] = (ANNOTATED_FUNCTION, ANNOTATED_METHOD)
DOCUMENTED_FUNCTION = "documentation.docstring.function"
DOCUMENTED_METHOD = "documentation.docstring.method"

PYTHON: tuple[str, ...] = ("python",)
JS: tuple[str, ...] = ("javascript", "typescript", "tsx")
PRETTIER_LANGUAGES: tuple[str, ...] = (*JS, "css", "scss", "vue", "svelte")
RUST: tuple[str, ...] = ("rust",)

# Line lengths people actually configure (a learned limit is the smallest one the files keep).
CUSTOMARY_LIMITS: tuple[int, ...] = (79, 80, 88, 99, 100, 110, 119, 120)

# Ranks when tools disagree on a rule other than line length: the formatter rewrites the file,
# a linter only complains, an editor setting only suggests.
FORMATTER, LINTER, EDITOR = 0, 1, 2

# Files read, by base name. JavaScript-module configs (``prettier.config.js``,
# ``eslint.config.js``) are code: they are listed so the analyzer can say they were not read.
PYPROJECT = "pyproject.toml"
# ruff's own files: [tool.ruff]'s table at the top level. Where one sits beside a pyproject.toml,
# ruff reads it and ignores the pyproject's [tool.ruff] (ruff.toml before .ruff.toml before it).
RUFF_FILES = ("ruff.toml", ".ruff.toml")
INI_FILES = ("setup.cfg", "tox.ini", ".flake8", ".pylintrc", "pylintrc", ".isort.cfg")
# mypy's own files, in the order mypy looks for its configuration in a directory: the first one
# found is the one read (pyproject.toml only with [tool.mypy], setup.cfg only with [mypy]).
MYPY_FILES = ("mypy.ini", ".mypy.ini")
PRETTIER_FILES = (".prettierrc", ".prettierrc.json", ".prettierrc.yaml", ".prettierrc.yml")
ESLINT_FILES = (".eslintrc", ".eslintrc.json", ".eslintrc.yaml", ".eslintrc.yml")
RUSTFMT_FILES = ("rustfmt.toml", ".rustfmt.toml")
CLANG_FORMAT_FILES = (".clang-format", "_clang-format")
EDITORCONFIG = ".editorconfig"
BIOME_FILES = ("biome.json", "biome.jsonc")
# Not settings but how the tools are run: which hooks run on which files (black straight or through
# darker, flake8 on named paths) and which files Prettier is told to leave alone.
PRE_COMMIT = ".pre-commit-config.yaml"
PRETTIER_IGNORE = ".prettierignore"
# Linters' ignore files (gitignore syntax): the files listed are not linted at all.
LINT_IGNORE_FILES = (".eslintignore", ".jshintignore")
CODESPELL_RC = ".codespellrc"
PACKAGE_JSON = "package.json"
JS_MODULE_CONFIGS = (
    ".prettierrc.js",
    ".prettierrc.cjs",
    ".prettierrc.mjs",
    "prettier.config.js",
    "prettier.config.cjs",
    "prettier.config.mjs",
    ".eslintrc.js",
    ".eslintrc.cjs",
)
# JavaScript-module configs read for the style preset they call (neostandard) or xo's options.
ESLINT_FLAT_FILES = ("eslint.config.js", "eslint.config.cjs", "eslint.config.mjs", "eslint.config.ts")
XO_FILES: tuple[str, ...] = (
    ".xo-config",
    ".xo-config.json",
    ".xo-config.js",
    ".xo-config.cjs",
    "xo.config.js",
    "xo.config.cjs",
    "xo.config.mjs",
    "xo.config.ts",
)
# Every name read above (the indexer serves these files although it extracts no facts from them).
CONFIG_NAMES: frozenset[str] = TOOL_CONFIG_NAMES


@dataclass(frozen=True, slots=True)
class Setting:
    rule: str
    choice: str
    evidence: str  # "[tool.black] line-length = 88"
    # A line length that binds code only: the tool keeping it reflows code but cannot split a
    # string literal or a comment (black, ruff format, Prettier, rustfmt), or is told to ignore
    # them (ESLint max-len with ignoreStrings/ignoreTemplateLiterals/ignoreComments). A linter
    # that reports every long line (flake8, pycodestyle, pylint, ruff E501) leaves it False.
    code_only: bool = False
    # Black leaves a line whole, however long, when it ends in a ``# type: ignore`` comment (its
    # "unsplittable type ignore": splitting would move the pragma off the expression it silences).
    # Ruff format measures the line without the pragma and splits it all the same.
    type_ignore_whole: bool = False
    # Further parameters of the declared convention (``Convention.params``): the import sorter's
    # first-party modules and source roots (``first_party``, ``source_roots``, one a line).
    params: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class ToolSettings:
    """One tool's settings from one file, for the files under ``directory`` in ``languages``."""

    tool: str  # black, ruff, flake8, prettier, ... (the nearest file of a tool wins)
    path: str  # the configuration file
    rank: int
    languages: tuple[str, ...]
    settings: list[Setting] = field(default_factory=list)
    # (glob, rules) the tool does not apply to matching files (ruff/flake8 per-file-ignores).
    exempt: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    # Regular expressions (matched from the repository root) of the paths the tool is run on,
    # where every invocation found names its paths (tox's ``flake8 markdown tests``, a pre-commit
    # hook's ``files:``); empty: the whole directory.
    scope: tuple[str, ...] = ()

    @property
    def directory(self) -> str:
        return posixpath.dirname(self.path)


@dataclass(slots=True)
class ToolConfigs:
    tools: list[ToolSettings] = field(default_factory=list)
    editorconfigs: dict[str, EditorConfigFile] = field(default_factory=dict)  # directory -> file
    notes: list[str] = field(default_factory=list)  # files not read and why
    # Distributions the project declares it depends on (pyproject.toml, package.json), named as
    # ``library_key`` spells them: a library the project lists is a choice it made.
    libraries: set[str] = field(default_factory=set)
    # Directory -> libraries a manifest below the root declares for the files under it: a
    # ``requirements*.txt`` beside a docker test app (what its container installs), a test
    # fixture package's pyproject.toml or setup.py (what its code, a build backend, imports).
    scoped_libraries: dict[str, set[str]] = field(default_factory=dict)
    # Directories below the root holding a package of their own (``package_root``): a monorepo's
    # packages, a docs site, a benchmark harness with its own package.json.
    packages: set[str] = field(default_factory=set)
    # Globs (gitignore flavour, from the repository root) of the files the project tells its tools
    # are not its own, each with where it is said: ESLint's and JSHint's ignore files (and
    # ``ignorePatterns``, ``eslintIgnore``) and codespell's ``skip``. Such a file is not the
    # project's code for style (mkdocs' verbatim copy of an upstream release): it is neither
    # reviewed for conventions nor learned from. A Python linter's ``exclude`` (ruff, flake8,
    # isort, pylint) is not read so: it names the project's own examples, fixtures and generated
    # migrations that it chose not to lint, which keep the habits learned for them (issue #24:
    # a tool's exclusion of `examples/` must not silence what the service learned there); the
    # tool's own settings do not reach them (``ToolSettings.exempt``).
    excluded: dict[str, str] = field(default_factory=dict)
    # What the project runs as a command: the dotted modules of its console scripts (pyproject's
    # ``[project.scripts]``, setup.cfg's ``console_scripts``) and the files its local pre-commit
    # hooks run (``entry: python src/pkg/_tools/sync.py``). Their prints are their output.
    commands: set[str] = field(default_factory=set)

    @property
    def files(self) -> list[str]:
        return sorted({t.path for t in self.tools} | {e.path for e in self.editorconfigs.values()})


@dataclass(slots=True)
class EditorConfigFile:
    path: str
    text: str
    root: bool

    def options(self, file_path: str) -> dict[str, str]:
        """Options of this file's sections matching ``file_path`` (later sections win)."""
        parser = EditorConfigParser("/" + file_path)
        # The package reads from disk; its own line parser is fed the stored text instead.
        parser._read(cast(Any, io.StringIO(self.text)), "/" + self.path)
        return {k: v.lower() for k, v in parser.options.items()}


# A manifest under a test directory describes a fixture (pip-tools' tests/test_data/packages/
# fake_with_deps/pyproject.toml lists simplejson), not what the project depends on.
_FIXTURE_DIRS = frozenset({"tests", "test", "__tests__", "testing", "fixtures", "test_data", "testdata"})


def fixture(path: str) -> bool:
    """Whether ``path`` lies under a test or fixture directory."""
    return bool(_FIXTURE_DIRS & set(path.split("/")[:-1]))


_PACKAGE_KEYS = {
    PACKAGE_JSON: ("name", "dependencies", "devDependencies"),
    PYPROJECT: ("project", "build-system"),
}


def package_root(path: str, doc: Any) -> bool:
    """Whether the manifest at ``path`` makes its directory a package of its own: below the root,
    it names a package or installs dependencies of its own (immer's ``perf-testing/package.json``,
    h3's ``playground/``, a docs site), or declares a Python project or build. A package.json that
    only sets the module type of its directory (yargs's ``helpers/``: ``{"type": "commonjs"}``) or
    a pyproject.toml that only configures a tool for its directory is no package."""
    keys = _PACKAGE_KEYS.get(posixpath.basename(path), ())
    return bool(posixpath.dirname(path)) and isinstance(doc, dict) and any(k in doc for k in keys)


def read(texts: Mapping[str, str]) -> ToolConfigs:
    """Every tool setting found in ``texts`` (path -> file content), with notes on what was not read."""
    out = ToolConfigs()
    runs = _Runs()
    ruff_tables: dict[str, tuple[dict[str, Any], str]] = {}  # path -> (ruff's table, its header)
    for path in sorted(texts):
        name = posixpath.basename(path)
        text = texts[path]
        try:
            if name == PYPROJECT:
                doc = tomllib.loads(text)
                out.tools += _pyproject(path, doc)
                _pyproject_excluded(out, path, doc)
                if isinstance(doc.get("tool"), dict) and isinstance(doc["tool"].get("ruff"), dict):
                    ruff_tables[path] = (doc["tool"]["ruff"], "tool.ruff")
                if isinstance(doc.get("tool"), dict) and "darker" in doc["tool"]:
                    runs.darker.add(posixpath.dirname(path))
                if not fixture(path):
                    out.libraries.update(_python_requirements(doc))
                    out.commands.update(_pyproject_scripts(doc))
                    if package_root(path, doc):
                        out.packages.add(posixpath.dirname(path))
                _scoped(out, path, _python_requirements(doc) | _build_requirements(doc))
            elif name in RUFF_FILES:
                doc = tomllib.loads(text)
                out.tools += _ruff(path, doc, table="")
                ruff_tables[path] = (doc, "")
                _pyproject_excluded(out, path, {"tool": {"ruff": doc}})
            elif name == SETUP_PY:
                libraries = setup_py_requirements(text)
                if not fixture(path):
                    out.libraries.update(libraries)
                    out.commands.update(setup_py_scripts(text))
                _scoped(out, path, libraries)
            elif is_requirements(path):
                _requirements_file(out, path, text)
            elif name in MYPY_FILES:
                out.tools += _mypy_ini(path, text)
            elif name in INI_FILES or name == CODESPELL_RC:
                out.tools += _ini(path, text) if name in INI_FILES else []
                _ini_excluded(out, path, text)
                if name == "tox.ini":
                    _tox_runs(runs, path, text)
                if name == "setup.cfg" and not fixture(path):
                    out.commands.update(_setup_cfg_scripts(text))
            elif is_run_file(path):
                _run_file(runs, text)
                if name == NOXFILE:
                    continue
            elif name == PRE_COMMIT:
                doc = yaml.safe_load(text)
                _pre_commit_runs(runs, path, doc)
                if not fixture(path):
                    out.libraries.update(local_hook_dependencies(doc))
                out.commands.update(_hook_scripts(path, doc))
            elif name == PRETTIER_IGNORE:
                runs.prettier_ignored.append((path, _ignore_globs(text)))
            elif name in LINT_IGNORE_FILES:
                _exclude(out, path, _ignore_globs(text), "")
            elif name in PRETTIER_FILES:
                _prettier(out, path, _json_or_yaml(text), f"{name}: ")
            elif name == PACKAGE_JSON:
                doc = json.loads(text)
                if not fixture(path):
                    out.libraries.update(_node_dependencies(doc))
                    if package_root(path, doc):
                        out.packages.add(posixpath.dirname(path))
                _scoped(out, path, _node_dependencies(doc))
                if isinstance(doc, dict) and "prettier" in doc:
                    _prettier(out, path, doc["prettier"], 'package.json "prettier": ')
                if isinstance(doc, dict) and not fixture(path):
                    runs.packages[posixpath.dirname(path)] = doc
                    runs.scripts[posixpath.dirname(path)] = _script_runs(path, doc)
                if isinstance(doc, dict) and isinstance(doc.get("eslintConfig"), dict):
                    _eslint_config(out, runs, path, doc["eslintConfig"], 'package.json "eslintConfig" ')
                    _exclude(
                        out, path, _globs(doc["eslintConfig"].get("ignorePatterns")), "eslintConfig.ignorePatterns"
                    )
                if isinstance(doc, dict):
                    _exclude(out, path, _globs(doc.get("eslintIgnore")), '"eslintIgnore"')
            elif name in ESLINT_FILES:
                doc = _json_or_yaml(text)
                if isinstance(doc, dict):
                    _eslint_config(out, runs, path, doc, f"{name} ")
                    _exclude(out, path, _globs(doc.get("ignorePatterns")), "ignorePatterns")
            elif name in ESLINT_FLAT_FILES:
                preset = _eslint_flat(path, text)
                if preset is not None:
                    runs.presets.append(preset)
                else:
                    out.notes.append(f"{path}: not read (a JavaScript module; only a neostandard call is recognized)")
            elif name in XO_FILES:
                runs.xo_files.setdefault(posixpath.dirname(path), (path, text))
            elif name in BIOME_FILES:
                _biome(out, path, json.loads(_without_jsonc(text)))
            elif name in RUSTFMT_FILES:
                out.tools.append(_rustfmt(path, tomllib.loads(text)))
            elif name in CLANG_FORMAT_FILES:
                out.tools += _clang_format(path, text)
            elif name == EDITORCONFIG:
                out.editorconfigs[posixpath.dirname(path)] = _editorconfig(path, text)
        except (ValueError, SyntaxError, yaml.YAMLError, configparser.Error, ParsingError, TypeError, KeyError) as exc:
            out.notes.append(f"{path}: not read ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})")
    _formatter_runs(out, runs, ruff_tables)
    _js_presets(out, runs)
    _ruff_file_wins(out)
    _mypy_file_wins(out, texts)
    runs.apply(out)
    return out


def _mypy_file_wins(out: ToolConfigs, texts: Mapping[str, str]) -> None:
    """Keep the mypy configuration mypy reads in each directory: mypy.ini, then .mypy.ini, then
    pyproject.toml with [tool.mypy], then setup.cfg with [mypy] (a mypy.ini that does not ask for
    annotations leaves a pyproject's ``strict = true`` unread)."""
    order = (*MYPY_FILES, PYPROJECT, "setup.cfg")
    marks = {PYPROJECT: "[tool.mypy", "setup.cfg": "[mypy]"}
    best: dict[str, int] = {}
    for path, text in texts.items():
        name = posixpath.basename(path)
        if name in order and marks.get(name, "") in text:
            d = posixpath.dirname(path)
            best[d] = min(best.get(d, len(order)), order.index(name))
    out.tools = [
        t
        for t in out.tools
        if t.tool != "mypy" or order.index(posixpath.basename(t.path)) <= best.get(t.directory, len(order))
    ]


def _ruff_file_wins(out: ToolConfigs) -> None:
    """Keep one ruff configuration per directory, the one ruff reads: ruff.toml, then .ruff.toml,
    then pyproject.toml's [tool.ruff]."""
    rank = {name: i for i, name in enumerate((*RUFF_FILES, PYPROJECT))}
    best: dict[str, int] = {}
    for t in out.tools:
        if t.tool == "ruff":
            d, r = posixpath.dirname(t.path), rank.get(posixpath.basename(t.path), len(rank))
            best[d] = min(best.get(d, r), r)
    out.tools = [
        t
        for t in out.tools
        if t.tool != "ruff" or rank.get(posixpath.basename(t.path), len(rank)) == best[posixpath.dirname(t.path)]
    ]


# --- how the tools are run: pre-commit hooks, tox commands, Prettier's ignore file ------------------

# Linters whose scope an invocation naming paths narrows (a formatter's scope is its own config's).
_SCOPED_LINTERS = ("flake8", "pycodestyle")
# How ruff's linter is run: its pre-commit hook ids (`ruff` until 0.12, then `ruff-check`) and its
# command. Ruff re-implements flake8 and pycodestyle: a project whose hooks run it and not them has
# moved to ruff, and a [flake8] section left behind is enforced by nothing.
_RUFF_LINT = frozenset({"ruff", "ruff-check"})
# Prettier's rules: what a file it ignores keeps from before, and is not held to.
_PRETTIER_RULES: tuple[str, ...] = (LENGTH, UNIT, WIDTH, QUOTES, TRAILING, LINE_ENDINGS)


@dataclass(frozen=True, slots=True)
class _Formatting:
    """One run of a formatter that the project makes: a pre-commit hook, a tox command."""

    tool: str  # "black" or "ruff-format"
    path: str  # the file that runs it
    name: str  # "hook black", "command black": the evidence
    args: tuple[str, ...]
    scope: tuple[str, ...] = ()  # regexes of the paths it is run on (``ToolSettings.scope``); empty: all


@dataclass(slots=True)
class _Runs:
    # directory -> pre-commit hook ids run from there
    hooks: dict[str, set[str]] = field(default_factory=dict)
    darker: set[str] = field(default_factory=set)  # directories whose black runs through darker
    # (directory, tool) -> each invocation's path regexes (empty: the whole directory)
    invocations: dict[tuple[str, str], list[tuple[str, ...]]] = field(default_factory=dict)
    prettier_ignored: list[tuple[str, list[str]]] = field(default_factory=list)  # (.prettierignore, globs)
    # directory -> the commands its tox.ini runs (the first word of each testenv command)
    commands: dict[str, set[str]] = field(default_factory=dict)
    # directory -> the runs of black and ruff format from there (hooks first, then tox commands)
    formatting: dict[str, list[_Formatting]] = field(default_factory=dict)
    # directory -> the commands of its package.json's scripts, and the package.json itself
    scripts: dict[str, list[_ScriptRun]] = field(default_factory=dict)
    packages: dict[str, dict[str, Any]] = field(default_factory=dict)
    xo_files: dict[str, tuple[str, str]] = field(default_factory=dict)  # directory -> (xo's file, its text)
    presets: list[_Preset] = field(default_factory=list)  # named by ESLint configs, declared if eslint runs

    def _runs(self, directory: str, names: frozenset[str] | set[str]) -> bool:
        """Whether a pre-commit hook or tox command at ``directory`` or above runs one of ``names``."""
        ups = [directory, *_parents(directory)]
        return any(names & (self.hooks.get(d, set()) | self.commands.get(d, set())) for d in ups)

    def _stale(self, t: ToolSettings) -> bool:
        """A flake8 or pycodestyle section whose linter nothing runs, where ruff's linter runs instead."""
        return (
            t.tool in _SCOPED_LINTERS and self._runs(t.directory, _RUFF_LINT) and not self._runs(t.directory, {t.tool})
        )

    def _format_only(self, t: ToolSettings) -> bool:
        """A ruff configuration whose formatter the project runs (a ``ruff-format`` hook, ``ruff
        format`` in tox) and whose linter nothing seen runs: coverage.py selects ``ALL`` in
        ``[tool.ruff.lint]`` while only ``ruff format`` runs, so its lint selection enforces nothing."""
        return t.tool == "ruff" and self._runs(t.directory, {"ruff-format"}) and not self._runs(t.directory, _RUFF_LINT)

    def apply(self, out: ToolConfigs) -> None:
        # darker reformats only the lines a change touches: black's settings are the style of new
        # lines, not of the code, which keeps whatever it had (dateutil). Black run as a hook of
        # its own formats every file again.
        darker = self.darker | {d for d, ids in self.hooks.items() if "darker" in ids}
        if darker:
            kept = []
            for t in out.tools:
                under = [d for d in darker if not d or t.directory == d or t.directory.startswith(d + "/")]
                if t.tool == "black" and under and not any("black" in self.hooks.get(d, ()) for d in under):
                    out.notes.append(f"{t.path}: black runs through darker (changed lines only); not declared")
                    continue
                kept.append(t)
            out.tools = kept
        stale = [t for t in out.tools if self._stale(t)]
        for t in stale:
            out.notes.append(f"{t.path}: {t.tool} is not run (ruff's linter runs instead); not declared")
        out.tools = [t for t in out.tools if not any(t is x for x in stale)]
        unrun = [t for t in out.tools if t.tool in _RUN_NEEDED and not self._runs(t.directory, {t.tool})]
        for t in unrun:
            out.notes.append(f"{t.path}: {t.tool} is not run by any hook, tox command, task or workflow; not declared")
        out.tools = [t for t in out.tools if not any(t is x for x in unrun)]
        for t in out.tools:
            if t.tool == "ruff" and not self._runs(t.directory, _RUFF_LINT):
                # Annotations and docstrings are new declarations: they need ruff's linter seen run
                # (its line length and import order are read as before, where nothing is seen).
                t.settings = [s for s in t.settings if s.rule not in _RUN_NEEDED_RULES]
            if self._format_only(t):
                formatted = [_as_formatted(s) for s in t.settings if s.rule not in _LINT_ONLY_RULES]
                if formatted != t.settings:
                    out.notes.append(f"{t.path}: only ruff format is run; ruff's lint rules not declared")
                t.settings = formatted
        for t in out.tools:
            if t.tool in _SCOPED_LINTERS:
                runs = self.invocations.get((t.directory, t.tool), [])
                if t.directory:
                    runs = runs + self.invocations.get(("", t.tool), [])
                if runs and all(runs):
                    t.scope = tuple(sorted({r for run in runs for r in run}))
        for path, globs in self.prettier_ignored:
            base = posixpath.dirname(path)
            exempt: list[tuple[str, tuple[str, ...]]] = [(g, _PRETTIER_RULES) for g in globs]
            for t in out.tools:
                if t.tool == "prettier" and t.directory == base:
                    t.exempt += exempt


# What only ruff's linter enforces (ruff format neither sorts imports nor asks for annotations or
# docstrings); its line length binds code alone where only the formatter runs.
_LINT_ONLY_RULES = frozenset({IMPORT_ORDER, *TYPING_RULES, DOCUMENTED_FUNCTION, DOCUMENTED_METHOD})


def _as_formatted(s: Setting) -> Setting:
    return replace(s, code_only=True) if s.rule == LENGTH else s


# Tools whose configuration declares only where the project is seen to run them (a hook, a tox
# command, a task runner or a CI workflow): a type checker configured and never invoked (cattrs'
# `strict = true`) enforces nothing. The rules they declare, for ruff's part too.
_RUN_NEEDED = frozenset({"mypy", "pydocstyle"})
_RUN_NEEDED_RULES = frozenset({*TYPING_RULES, DOCUMENTED_FUNCTION, DOCUMENTED_METHOD})
NOXFILE = "noxfile.py"
# An invocation in a workflow step, a make/just recipe or a nox session (`session.run("mypy", ...)`):
# the tool's name as a word of its own (not `types-mypy`, `mypy_extensions`, `flake8-pydocstyle`).
_INVOKED = {
    "mypy": re.compile(r"(?<![\w.-])mypy(?![\w.-])"),
    "pydocstyle": re.compile(r"(?<![\w.-])pydocstyle(?![\w.-])"),
    # ruff's linter: `ruff check`, the bare `ruff .`/`ruff src` of old releases, nox's "ruff", "check".
    "ruff": re.compile(r"(?<![\w.-])ruff[\"']?(?:,\s*[\"']|\s+)(?:check\b|\.(?:\s|$)|--|src\b)"),
}


def _run_file(runs: _Runs, text: str) -> None:
    """The tools a task runner (noxfile.py, Makefile, justfile) or a CI workflow invokes, from the root."""
    for tool, pattern in _INVOKED.items():
        if any(pattern.search(line) for line in text.splitlines() if not line.lstrip().startswith("#")):
            runs.commands.setdefault("", set()).add(tool)


def _parents(directory: str) -> list[str]:
    out = []
    while directory:
        directory = posixpath.dirname(directory)
        out.append(directory)
    return out


def _path_regex(directory: str, path: str) -> str:
    path = path.strip().removeprefix("./").rstrip("/")
    full = posixpath.normpath(posixpath.join(directory, path)) if path not in ("", ".") else directory
    return "^" + (re.escape(full) + "(?:/|$)" if full and full != "." else "")


def _tox_runs(runs: _Runs, path: str, text: str) -> None:
    """Each ``[testenv*]`` command running a scoped linter, with the paths it names."""
    parser = configparser.RawConfigParser(strict=False)
    parser.read_string(text, source=path)
    directory = posixpath.dirname(path)
    for section in parser.sections():
        if not section.startswith("testenv") or not parser.has_option(section, "commands"):
            continue
        for line in parser.get(section, "commands").splitlines():
            try:
                words = shlex.split(line.replace("{toxinidir}/", "").replace("{toxinidir}", "."))
            except ValueError:
                continue
            if len(words) > 2 and words[1] == "-m":  # python -m flake8, {envpython} -m flake8
                words = words[2:]
            tool, args = ("black", words[1:]) if words[:1] == ["black"] else ("", [])
            if words[:2] == ["ruff", "format"]:
                # `ruff format` runs the formatter only: "ruff" names the linter (`ruff check`, `ruff .`).
                tool, args = "ruff-format", words[2:]
                runs.commands.setdefault(directory, set()).add(tool)
            elif words:
                runs.commands.setdefault(directory, set()).add(words[0])
            if tool:
                paths = _positional(args)
                whole = not paths or any(p.strip("./") == "" for p in paths)
                scope = () if whole else tuple(_path_regex(directory, p) for p in paths)
                name = "command " + " ".join(words[: 2 if tool == "ruff-format" else 1])
                runs.formatting.setdefault(directory, []).append(_Formatting(tool, path, name, tuple(args), scope))
            if words and words[0] in _SCOPED_LINTERS:
                paths = [w for w in words[1:] if not w.startswith("-") and "{" not in w]
                regexes = tuple(_path_regex(directory, p) for p in paths)
                runs.invocations.setdefault((directory, words[0]), []).append(regexes)


def _pre_commit_runs(runs: _Runs, path: str, doc: Any) -> None:
    """The hooks of ``.pre-commit-config.yaml`` (its ``files:`` are regexes from the repository root)."""
    directory = posixpath.dirname(path)
    repos = doc.get("repos") if isinstance(doc, dict) else None
    for repo in repos if isinstance(repos, list) else []:
        hooks = repo.get("hooks") if isinstance(repo, dict) else None
        for hook in hooks if isinstance(hooks, list) else []:
            if not isinstance(hook, dict) or not isinstance(hook.get("id"), str):
                continue
            runs.hooks.setdefault(directory, set()).add(hook["id"])
            entry = hook.get("entry")  # a local hook runs its entry (`entry: flake8 --max-line-length 100`)
            if isinstance(entry, str) and entry.split():
                runs.hooks[directory].add(posixpath.basename(entry.split()[0]))
            if hook["id"] in _SCOPED_LINTERS:
                files = hook.get("files")
                regexes = (str(files),) if isinstance(files, str) and files.strip() else ()
                runs.invocations.setdefault((directory, hook["id"]), []).append(regexes)
            formatter = _formatter_hook(hook)
            if formatter is not None and hook.get("stages") != ["manual"]:  # a manual hook runs only when asked
                tool, args = formatter
                runs.hooks[directory].add(tool)
                scope = _hook_scope(doc, hook)
                run = _Formatting(tool, path, f"hook {hook['id']}", args, scope)
                runs.formatting.setdefault(directory, []).append(run)


# --- formatters run by a hook or a command, configured or not ------------------------------------

_FORMATTER_HOOK_IDS = {"black": "black", "black-jupyter": "black", "ruff-format": "ruff-format"}
# Options of black and ruff format that take a value (the next word, unless given with `=`).
_VALUED_OPTIONS = frozenset(
    {
        "-l",
        "--line-length",
        "-t",
        "--target-version",
        "--include",
        "--exclude",
        "--extend-exclude",
        "--force-exclude",
        "--stdin-filename",
        "-W",
        "--workers",
        "--config",
        "--required-version",
        "--python-cell-magics",
        "--enable-unstable-feature",
        "--extension",
        "--range",
        "--cache-dir",
    }
)
_SKIP_STRINGS = ("-S", "--skip-string-normalization")


def _formatter_hook(hook: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """(black or ruff-format, its arguments) for a hook that runs one: by its id (psf/black,
    psf/black-pre-commit-mirror, astral-sh/ruff-pre-commit) or a local hook's entry."""
    entry = hook.get("entry")
    words = entry.split() if isinstance(entry, str) else []
    raw = hook.get("args")
    args = [w for a in (raw if isinstance(raw, list) else []) for w in str(a).split()]
    tool = _FORMATTER_HOOK_IDS.get(str(hook.get("id")))
    if tool is not None and not words:
        return tool, tuple(args)
    if words and posixpath.basename(words[0]) == "black":
        return "black", (*words[1:], *args)
    if words and posixpath.basename(words[0]) == "ruff" and words[1:2] == ["format"]:
        return "ruff-format", (*words[2:], *args)
    return None


def _scoped_regex(pattern: str) -> str:
    """``pattern`` as a group, its leading global flags (pre-commit's ``(?x)``) made local to it,
    on one line: a scope is kept one regex a line (``Declared.scope``), and a verbose pattern
    written over lines (multidict's folded `exclude: >-` block, coverage.py's mypy `exclude`) would
    split into broken halves. Its lines are joined without their comments (whitespace means nothing
    there); a newline in any other pattern is written ``\\n``."""
    pattern = pattern.strip()
    m = re.match(r"\(\?([aiLmsux]+)\)", pattern)
    body = pattern[m.end() :] if m else pattern
    if m and "x" in m.group(1):
        body = " ".join(re.sub(r"(?:^|(?<=\s))#.*$", "", line) for line in body.splitlines())
    else:
        body = body.replace("\n", "\\n")
    return f"(?{m.group(1)}:{body})" if m else f"(?:{body})"


def _hook_scope(doc: Mapping[str, Any], hook: Mapping[str, Any]) -> tuple[str, ...]:
    """One regex (``re.match`` from the repository root) of the files a hook is run on: pre-commit
    searches each path for the ``files`` patterns of the configuration and of the hook, and skips
    those its ``exclude`` patterns find. Empty: every file of its types."""
    parts: list[str] = []
    for where in (doc, hook):
        files, exclude = where.get("files"), where.get("exclude")
        if isinstance(exclude, str) and exclude.strip() and exclude != "^$":
            parts.append(f"(?!.*?{_scoped_regex(exclude)})")
        if isinstance(files, str) and files.strip():
            parts.append(f"(?=.*?{_scoped_regex(files)})")
    if not parts:
        return ()
    try:
        re.compile("".join(parts))
    except re.error:
        return ()  # pre-commit would refuse it too: nothing to narrow
    return ("".join(parts),)


def _positional(args: list[str] | tuple[str, ...]) -> list[str]:
    """The paths a black or ruff format command names (its words that are no option or value)."""
    out: list[str] = []
    skip = False
    for word in args:
        if skip:
            skip = False
        elif word in _VALUED_OPTIONS:
            skip = True
        elif not word.startswith("-") and "{" not in word:
            out.append(word)
    return out


def _length_arg(args: tuple[str, ...]) -> tuple[int, str] | None:
    """The line length a formatter's arguments set (``--line-length=100``, ``-l 100``, ``-l100``)
    and how they say it."""
    for i, word in enumerate(args):
        if word in ("-l", "--line-length") and i + 1 < len(args):
            value, said = args[i + 1], f"{word} {args[i + 1]}"
        elif word.startswith("--line-length="):
            value, said = word.partition("=")[2], word
        elif word.startswith("-l") and word[2:].lstrip("=").isdigit():
            value, said = word[2:].lstrip("="), word
        else:
            continue
        if _int(value):
            return cast(int, _int(value)), said
    return None


def _within(directory: str, top: str) -> bool:
    return not top or directory == top or directory.startswith(top + "/")


def _override_length(t: ToolSettings, length: tuple[int, str], where: str) -> None:
    """A formatter's width set on its command line, which wins over its configuration file's."""
    t.settings = [
        replace(x, choice=str(length[0]), evidence=f"{where} {length[1]}") if x.rule == LENGTH and x.code_only else x
        for x in t.settings
    ]


# A Setting param marking what a hook alone declares: in force only where the code keeps it
# (``declared._not_kept``).
KEPT_ONLY = "kept_only"


def _kept_only(s: Setting) -> Setting:
    """A setting only a pre-commit hook declares: a contributor's local hook, which CI may never run,
    is in force where the code keeps its style (``declared._not_kept``)."""
    return replace(s, params=(*s.params, (KEPT_ONLY, "1")))


def _ruff_quotes_differ(ruff_tables: Mapping[str, tuple[dict[str, Any], str]], directory: str) -> bool:
    """Whether a ruff configuration in ``directory`` sets ruff format's quote-style to other than black's."""
    for path, (table, _) in ruff_tables.items():
        fmt = table.get("format")
        if (
            posixpath.dirname(path) == directory
            and isinstance(fmt, dict)
            and fmt.get("quote-style", "double") not in ("double", "preserve")
        ):
            return True
    return False


def _formatter_runs(out: ToolConfigs, runs: _Runs, ruff_tables: Mapping[str, tuple[dict[str, Any], str]]) -> None:
    """Black and ruff format run by a pre-commit hook or a tox command format every file they are
    run on, configured or not: at their defaults where no ``[tool.black]`` or ruff configuration
    says otherwise (python-tabulate's black hook, no ``[tool.black]``: double quotes, 88 columns),
    with what the run's arguments set (``-l 100``; ``-S`` leaves quotes as written). A
    configuration the run reads keeps its own entry (and its file as the evidence), with the
    arguments laid over it; the run's own entry is made only where none is."""
    for directory, found in sorted(runs.formatting.items()):
        for tool in ("black", "ruff-format"):
            mine = [r for r in found if r.tool == tool]
            if not mine:
                continue
            run = mine[0]  # the hook before a tox command: the one that rewrites the files
            scope = tuple(sorted({x for r in mine for x in r.scope})) if all(r.scope for r in mine) else ()
            length = _length_arg(run.args)
            own = f"{run.path} {run.name}"
            if tool == "black":
                configured = [t for t in out.tools if t.tool == "black" and _within(t.directory, directory)]
                for t in configured:
                    if any(a in _SKIP_STRINGS for a in run.args):
                        t.settings = [x for x in t.settings if x.rule != QUOTES]
                    if length:
                        _override_length(t, length, own)
                if not any(t.directory == directory for t in configured):
                    why = f"{run.name} {length[1]}" if length else f"{run.name} (default line-length 88)"
                    normalizes = not any(a in _SKIP_STRINGS for a in run.args)
                    if normalizes and _ruff_quotes_differ(ruff_tables, directory):
                        # rq: a black hook left behind while `[tool.ruff.format] quote-style =
                        # "single"` says how the project formats now; two formatters cannot both
                        # hold the quotes, and the one configured by hand is the project's choice.
                        normalizes = False
                        out.notes.append(
                            f"{run.path}: {run.name} and ruff format's quote-style disagree; black declares no quotes"
                        )
                    made = _black(run.path, run.name, length[0] if length else 88, why, normalizes)
                    made.scope = scope
                    if run.name.startswith("hook"):
                        made.settings = [_kept_only(s) for s in made.settings]
                    out.tools.append(made)
                continue
            tables = {p: t for p, t in ruff_tables.items() if _within(posixpath.dirname(p), directory)}
            rebuilt: list[ToolSettings] = []
            for p, (table, header) in sorted(tables.items()):
                rebuilt += _ruff(p, table, header, run=own)
            unconfigured = not any(posixpath.dirname(p) == directory for p in tables)
            defaults = _ruff(run.path, {}, "", run.name) if unconfigured else []
            for t in defaults:
                t.scope = scope
                if run.name.startswith("hook"):
                    t.settings = [_kept_only(s) for s in t.settings]
            if length:
                for t in rebuilt:
                    _override_length(t, length, own)
                for t in defaults:
                    _override_length(t, length, run.name)
            out.tools = [t for t in out.tools if not (t.tool == "ruff" and t.path in tables)] + rebuilt + defaults


def _hook_scripts(path: str, doc: Any) -> set[str]:
    """The files of the repository a local pre-commit hook runs (``entry: python
    src/trio/_tools/sync_requirements.py``, ``entry: ./scripts/check.py``, ``entry: python -m
    pkg.tool``), as paths from the root, or dotted modules for ``-m``."""
    out: set[str] = set()
    directory = posixpath.dirname(path)
    for hook in local_hooks(doc):
        entry = hook.get("entry")
        words = entry.split() if isinstance(entry, str) else []
        for i, word in enumerate(words):
            if word.endswith(".py") and not word.startswith("-"):
                out.add(posixpath.normpath(posixpath.join(directory, word)))
            elif word == "-m" and i + 1 < len(words) and _DOTTED.fullmatch(words[i + 1]):
                out.add(words[i + 1])
    return out


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
# A console script's object reference: ``pkg.module:function`` (the module is what runs).
_ENTRY_POINT = re.compile(r"^\s*[\w.-]+\s*=\s*([A-Za-z_][\w.]*)\s*(?::|$)")


def _pyproject_scripts(doc: Mapping[str, Any]) -> set[str]:
    """The modules of the console scripts a pyproject.toml declares (``[project.scripts]``,
    ``[project.gui-scripts]``, Poetry's ``[tool.poetry.scripts]``)."""
    tables = [_table(_table(doc, "project"), "scripts"), _table(_table(doc, "project"), "gui-scripts")]
    tables.append(_table(_table(_table(doc, "tool"), "poetry"), "scripts"))
    out: set[str] = set()
    for table in tables:
        for value in table.values():
            ref = value.get("reference") if isinstance(value, dict) else value
            if isinstance(ref, str):
                module = ref.split(":", 1)[0].strip()
                if _DOTTED.fullmatch(module):
                    out.add(module)
    return out


def _setup_cfg_scripts(text: str) -> set[str]:
    """The modules of setup.cfg's ``[options.entry_points] console_scripts`` (and gui_scripts)."""
    parser = configparser.RawConfigParser(strict=False, inline_comment_prefixes=(" #", " ;"))
    parser.read_string(text)
    out: set[str] = set()
    for key in ("console_scripts", "gui_scripts"):
        if parser.has_option("options.entry_points", key):
            for line in parser.get("options.entry_points", key).splitlines():
                m = _ENTRY_POINT.match(line)
                if m:
                    out.add(m.group(1))
    return out


# Hooks whose presence decides which declared line length holds: black (or darker instead), the
# linters ruff replaces, and ruff's linter.
_LENGTH_HOOKS = frozenset({"black", "darker", *_SCOPED_LINTERS, *_RUFF_LINT})


def length_hooks(text: str) -> set[str]:
    """The hooks of a ``.pre-commit-config.yaml`` that decide which tool's line length holds (a
    change adding ruff's hook and dropping black's moves the limit without editing a setting)."""
    runs = _Runs()
    try:
        _pre_commit_runs(runs, PRE_COMMIT, yaml.safe_load(text))
    except yaml.YAMLError:
        return set()
    return {h for ids in runs.hooks.values() for h in ids} & _LENGTH_HOOKS


def _ignore_globs(text: str) -> list[str]:
    """An ignore file's patterns (gitignore syntax). A file that re-includes with `!` (commander's
    `**.*` then `!**.js`) cannot be read as a list of exemptions: it exempts nothing."""
    lines = [x.strip() for x in text.splitlines() if x.strip() and not x.strip().startswith("#")]
    return [] if any(x.startswith("!") for x in lines) else lines


# --- files the project says are not its own ------------------------------------------------------

# JavaScript linters' ignore files and codespell's skip (``ToolConfigs.excluded`` says why these
# and not a Python linter's exclude), and of them only the entries naming files: a project lists
# what it copied in one file or one file pattern at a time (mkdocs' `lunr.**.js`,
# `jquery-**.min.js`), while a directory it lists is where it keeps its own examples, helpers,
# fixtures and build output (yargs' `example/`, `helpers/`, `test/fixtures/**/**`), which keep the
# habits learned for them.


def _names_files(glob: str) -> bool:
    """Whether an ignore entry names files (its last segment has an extension) or a directory."""
    return not glob.endswith("/") and "." in glob.rsplit("/", 1)[-1].strip("*")


def _exclude(out: ToolConfigs, path: str, globs: list[str], where: str) -> None:
    """Record ``globs`` (relative to ``path``'s directory; one without a slash names a file or
    directory at any depth, as gitignore, ruff, flake8 and codespell read it) from the root."""
    if fixture(path):
        return  # a test's sample project (tomlkit's tests/examples/pyproject.toml) lints nothing here
    directory = posixpath.dirname(path)
    for glob in globs:
        glob = glob.strip()
        if glob.startswith("!") or glob.strip("/*.") == "" or not _names_files(glob):
            continue  # a re-inclusion, a pattern naming everything, or a directory: not foreign files
        if directory:
            anchored = "/" in glob.rstrip("/")
            glob = posixpath.join(directory, glob.lstrip("/") if anchored else "**/" + glob)
        out.excluded.setdefault(glob, f"{path} {where}".strip())


def _pyproject_excluded(out: ToolConfigs, path: str, doc: Mapping[str, Any]) -> None:
    tool = doc.get("tool")
    if not isinstance(tool, dict):
        return
    table = tool.get("codespell")
    if isinstance(table, dict):
        _exclude(out, path, _globs(table.get("skip")), "[tool.codespell] skip")


def _ini_excluded(out: ToolConfigs, path: str, text: str) -> None:
    parser = configparser.RawConfigParser(strict=False, inline_comment_prefixes=(" #", " ;"))
    parser.read_string(text, source=path)
    sections: list[tuple[str, tuple[str, ...]]] = [("codespell", ("skip",)), ("tool:codespell", ("skip",))]
    for section, keys in sections:
        if not parser.has_section(section):
            continue
        for key in keys:
            if parser.has_option(section, key):
                _exclude(out, path, _globs(parser.get(section, key)), f"[{section}] {key}")


def library_key(name: str) -> str:
    """A distribution or import name compared as PEP 503 does (``pytest-mypy-plugins`` is
    ``pytest_mypy_plugins``); an npm scope is kept (``@scope/pkg``)."""
    return re.sub(r"[-_.]+", "_", name.strip().lower())


_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def requirement_keys(specs: Any) -> set[str]:
    """The ``library_key`` of each PEP 508 requirement string in ``specs`` (``"rich>=13"``)."""
    if not isinstance(specs, list):
        return set()
    return {library_key(m.group(1)) for x in specs if isinstance(x, str) and (m := _REQUIREMENT_NAME.match(x))}


# PEP 723 inline script metadata, as the specification's reference regular expression reads it.
_INLINE_METADATA = re.compile(r"(?m)^# /// script\s*$\s(?P<content>(?:^#(?:| .*)$\s)+)^# ///\s*$")


def inline_script_requirements(text: str) -> set[str]:
    """The ``library_key`` of each dependency a PEP 723 script lists in its ``# /// script`` block
    (none without a block, or when the block is not valid TOML)."""
    m = _INLINE_METADATA.search(text) if "# /// script" in text else None
    if m is None:
        return set()
    body = "".join(line[2:] if line.startswith("# ") else line[1:] for line in m.group("content").splitlines(True))
    try:
        doc = tomllib.loads(body)
    except tomllib.TOMLDecodeError:
        return set()
    return requirement_keys(doc.get("dependencies"))


def _python_requirements(doc: Mapping[str, Any]) -> set[str]:
    """[project] dependencies and optional-dependencies, [dependency-groups], Poetry's tables."""
    specs: list[Any] = []
    project = doc.get("project")
    if isinstance(project, dict):
        specs += project.get("dependencies") or []
        optional = project.get("optional-dependencies")
        if isinstance(optional, dict):
            specs += [x for v in optional.values() if isinstance(v, list) for x in v]
    groups = doc.get("dependency-groups")
    if isinstance(groups, dict):
        specs += [x for v in groups.values() if isinstance(v, list) for x in v]
    out = requirement_keys(specs)
    tool = doc.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if isinstance(poetry, dict):
        tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
        group = poetry.get("group")
        if isinstance(group, dict):
            tables += [g.get("dependencies") for g in group.values() if isinstance(g, dict)]
        out.update(library_key(k) for t in tables if isinstance(t, dict) for k in t if k != "python")
    return out


def _build_requirements(doc: Mapping[str, Any]) -> set[str]:
    """[build-system] requires: what an in-tree build backend (``backend-path``) imports."""
    build = doc.get("build-system")
    return requirement_keys(build.get("requires")) if isinstance(build, dict) else set()


def _scoped(out: ToolConfigs, path: str, libraries: set[str]) -> None:
    """Record what a manifest below the root declares for the files of its directory."""
    directory = posixpath.dirname(path)
    if directory and libraries:
        out.scoped_libraries.setdefault(directory, set()).update(libraries)


def requirements_file_keys(text: str) -> set[str]:
    """The ``library_key`` of each requirement a pip requirements file lists (options such as
    ``-r other.txt``, ``-e .`` and URLs are not libraries)."""
    out: set[str] = set()
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")) or "://" in line:
            continue
        m = _REQUIREMENT_NAME.match(line)
        if m:
            out.add(library_key(m.group(1)))
    return out


def _requirements_file(out: ToolConfigs, path: str, text: str) -> None:
    """A requirements file declares for its directory (``requirements/dev.txt`` for the one above
    ``requirements/``); at the root, for the project. One under a test directory is a fixture's."""
    directory = posixpath.dirname(path)
    if posixpath.basename(directory) == "requirements":
        directory = posixpath.dirname(directory)
    libraries = requirements_file_keys(text)
    if not libraries:
        return
    if directory:
        out.scoped_libraries.setdefault(directory, set()).update(libraries)
    elif not fixture(path):
        out.libraries.update(libraries)


_SETUP_KEYWORDS = ("install_requires", "extras_require", "tests_require")


def setup_py_requirements(text: str) -> set[str]:
    """The ``library_key`` of each requirement a ``setup.py`` passes to ``setup()`` as a literal
    (``install_requires``, ``extras_require``, ``tests_require``), directly or through a
    module-level name bound to a literal; read with ``ast``, never run."""
    tree = ast.parse(text)
    bound: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            bound[node.target.id] = node.value
    specs: list[Any] = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name != "setup":
            continue
        for kw in call.keywords:
            if kw.arg in _SETUP_KEYWORDS:
                specs += _literal_strings(kw.value, bound, 0)
    return requirement_keys(specs)


def setup_py_scripts(text: str) -> set[str]:
    """The modules of the console scripts a ``setup.py`` passes to ``setup(entry_points=...)`` as
    a literal (``{"console_scripts": ["name = pkg.cli:main"]}``, or the same as INI text)."""
    tree = ast.parse(text)
    bound = {
        node.targets[0].id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    }
    out: set[str] = set()
    for call in ast.walk(tree):
        func = call.func if isinstance(call, ast.Call) else None
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name != "setup" or not isinstance(call, ast.Call):
            continue
        for kw in call.keywords:
            value = bound.get(kw.value.id, kw.value) if isinstance(kw.value, ast.Name) else kw.value
            if kw.arg != "entry_points":
                continue
            if isinstance(value, ast.Dict):
                entries = [
                    s
                    for k, v in zip(value.keys, value.values, strict=True)
                    if isinstance(k, ast.Constant) and k.value in ("console_scripts", "gui_scripts")
                    for s in _literal_strings(v, bound, 0)
                ]
            elif isinstance(value, ast.Constant) and isinstance(value.value, str):
                entries, section = [], ""
                for line in value.value.splitlines():
                    section = line.strip()[1:-1].strip() if line.strip().startswith("[") else section
                    if section in ("console_scripts", "gui_scripts"):
                        entries.append(line)
            else:
                continue
            out.update(m.group(1) for m in map(_ENTRY_POINT.match, entries) if m)
    return out


def _literal_strings(node: ast.expr, bound: Mapping[str, ast.expr], depth: int) -> list[str]:
    """The strings of a literal list, tuple or dict of lists (its values), following module-level
    names and ``+`` of lists; anything computed contributes nothing."""
    if depth > 8:
        return []
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else []
    if isinstance(node, ast.Name):
        target = bound.get(node.id)
        return _literal_strings(target, bound, depth + 1) if target is not None else []
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [s for e in node.elts for s in _literal_strings(e, bound, depth + 1)]
    if isinstance(node, ast.Dict):
        return [s for v in node.values for s in _literal_strings(v, bound, depth + 1)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal_strings(node.left, bound, depth + 1) + _literal_strings(node.right, bound, depth + 1)
    return []


def local_hook_dependencies(doc: Any) -> set[str]:
    """The ``additional_dependencies`` of a pre-commit configuration's ``repo: local`` hooks: the
    environment in which such a hook runs the repository's own script (a ``language: python``
    hook whose entry is ``python tools/sync.py`` with ``pyyaml``). Another repository's hook
    installs its own tool, whose extra dependencies say nothing of the project's code."""
    specs: list[Any] = []
    for hook in local_hooks(doc):
        if isinstance(hook.get("additional_dependencies"), list):
            specs += hook["additional_dependencies"]
    return requirement_keys(specs)


def local_hooks(doc: Any) -> Iterator[dict[str, Any]]:
    """The hooks of a pre-commit configuration's ``repo: local`` entries: the repository's own
    commands, run in an environment the hook declares."""
    repos = doc.get("repos") if isinstance(doc, dict) else None
    for repo in repos if isinstance(repos, list) else []:
        if isinstance(repo, dict) and repo.get("repo") == "local":
            hooks = repo.get("hooks")
            yield from (h for h in (hooks if isinstance(hooks, list) else []) if isinstance(h, dict))


def _node_dependencies(doc: Any) -> set[str]:
    if not isinstance(doc, dict):
        return set()
    keys = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
    out = {library_key(k) for key in keys if isinstance(doc.get(key), dict) for k in doc[key]}
    # A package may import itself by its own name (Node's self-reference: execa's test fixtures
    # import 'execa'); that is no dependency either.
    if isinstance(doc.get("name"), str) and doc["name"].strip():
        out.add(library_key(doc["name"]))
    return out


def _json_or_yaml(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return yaml.safe_load(text)  # YAML is a superset of JSON; also covers `.prettierrc` in YAML


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip()) or None
    return None


def _get(table: Mapping[str, Any], *keys: str) -> tuple[str, Any] | None:
    for key in keys:
        if key in table:
            return key, table[key]
    return None


# --- pyproject.toml ---------------------------------------------------------------------------


def _pyproject(path: str, doc: dict[str, Any]) -> list[ToolSettings]:
    tool = doc.get("tool")
    if not isinstance(tool, dict):
        return []
    out: list[ToolSettings] = []
    black = tool.get("black")
    if isinstance(black, dict):
        got = _get(black, "line-length", "line_length")
        why = f"[tool.black] {got[0]} = {got[1]}" if got else "[tool.black] (default line-length 88)"
        skip = _get(black, "skip-string-normalization", "skip_string_normalization")
        out.append(_black(path, "[tool.black]", _int(got[1]) if got else 88, why, not (skip and skip[1] is True)))
    ruff = tool.get("ruff")
    if isinstance(ruff, dict):
        out += _ruff(path, ruff)
    isort = tool.get("isort")
    if isinstance(isort, dict):
        s = ToolSettings("isort", path, FORMATTER, PYTHON)
        why = "[tool.isort] (isort groups stdlib, third party, local)"
        options = {k.replace("-", "_"): v for k, v in isort.items()}
        first = _first_party(path, options.get("known_first_party"), options.get("src_paths"))
        s.settings.append(Setting(IMPORT_ORDER, "ordered", why, params=first))
        out.append(s)
    flake8 = tool.get("flake8")
    if isinstance(flake8, dict):  # the Flake8-pyproject plugin's table
        # TOML arrays (pytest-xdist's `ignore = ["E501", "W503", "E203"]`) as flake8's comma lists.
        values = {k: ",".join(map(str, v)) if isinstance(v, list) else str(v) for k, v in flake8.items()}
        out += _flake8_like(path, "flake8", values, "[tool.flake8]")
    mypy = tool.get("mypy")
    if isinstance(mypy, dict):
        overrides = mypy.get("overrides")
        per_module = [
            (_globs(o.get("module")), o)
            for o in (overrides if isinstance(overrides, list) else [])
            if isinstance(o, dict)
        ]
        out += _mypy(path, mypy, per_module, "[tool.mypy]")
    pydocstyle = tool.get("pydocstyle")
    if isinstance(pydocstyle, dict):
        values = {k: ",".join(map(str, v)) if isinstance(v, list) else str(v) for k, v in pydocstyle.items()}
        out += _pydocstyle(path, values, "[tool.pydocstyle]")
    pylint = tool.get("pylint")
    if isinstance(pylint, dict):
        fmt = pylint.get("format") or pylint.get("FORMAT") or {}
        got = _get(fmt, "max-line-length") if isinstance(fmt, dict) else None
        if got and _int(got[1]):
            s = ToolSettings("pylint", path, LINTER, PYTHON)
            s.settings.append(Setting(LENGTH, str(_int(got[1])), f"[tool.pylint.format] max-line-length = {got[1]}"))
            out.append(s)
    return out


def _black(path: str, where: str, length: int | None, length_why: str, normalizes: bool) -> ToolSettings:
    """Black's settings, from a ``[tool.black]`` table or a hook or command that runs it (``where``):
    its line length, 4-space indentation, no trailing whitespace and, unless told to skip string
    normalization, double quotes."""
    s = ToolSettings("black", path, FORMATTER, PYTHON)
    if length:
        s.settings.append(Setting(LENGTH, str(length), length_why, code_only=True, type_ignore_whole=True))
    s.settings += [
        Setting(UNIT, "space", f"{where} (black indents with spaces)"),
        Setting(WIDTH, "4", f"{where} (black indents by 4 spaces)"),
        Setting(TRAILING, "none", f"{where} (black strips trailing whitespace)"),
    ]
    if normalizes:
        s.settings.append(Setting(QUOTES, "double", f"{where} (black normalizes strings to double quotes)"))
    return s


def _codes(value: Any) -> list[str]:
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    return [str(v).strip().upper() for v in value or () if str(v).strip()]


def _covers(codes: list[str], code: str) -> bool:
    return any(code.startswith(c) for c in codes) or "ALL" in codes


def _selects(selector: str, code: str) -> bool:
    """Whether a ruff selector (``ALL``, a linter ``ANN``, a prefix ``D1``, a code) names ``code``:
    a prefix of the same linter, so ``A`` (flake8-builtins) does not name ``ANN001``."""
    if selector == "ALL":
        return True
    mine, theirs = re.match(r"([A-Z]+)(\d*)$", selector), re.match(r"([A-Z]+)(\d*)$", code)
    return bool(mine and theirs and mine[1] == theirs[1] and theirs[2].startswith(mine[2]))


def _specificity(selector: str) -> int:
    return -1 if selector == "ALL" else len(selector)


def _enabled(selected: list[str], ignored: list[str], code: str) -> str | None:
    """The selector that enables ``code`` in ruff, None when it is off: the most specific selector
    naming the code decides, and an ignore wins a tie (ruff's rule resolution)."""
    on = max((x for x in selected if _selects(x, code)), key=_specificity, default=None)
    off = max((x for x in ignored if _selects(x, code)), key=_specificity, default=None)
    if on is None or (off is not None and _specificity(off) >= _specificity(on)):
        return None
    return on


# Our rule -> the ruff codes that must all be on for the tool to report what the rule finds: a
# parameter (ANN001, *args ANN002, **kwargs ANN003) or the return (ANN201) of a public function
# or method unannotated; a public function (D103) or method (D102) without a docstring. The
# pydocstyle conventions (google, numpy, pep257) keep D102 and D103.
_CODES: dict[str, tuple[str, ...]] = {
    ANNOTATED_FUNCTION: ("ANN001", "ANN002", "ANN003", "ANN201"),
    ANNOTATED_METHOD: ("ANN001", "ANN002", "ANN003", "ANN201"),
    DOCUMENTED_FUNCTION: ("D103",),
    DOCUMENTED_METHOD: ("D102",),
}


def _ruff_declares(
    selected: list[str], ignored: list[str], lint: Mapping[str, Any], ruff: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """(rule, evidence) for the annotation and docstring rules ruff's linter enforces.

    flake8-annotations' ``ignore-fully-untyped`` passes a function with no annotation, and
    ``suppress-none-returning`` one returning None without saying so: we cannot tell, so neither
    declares annotations. pydocstyle's ``ignore-decorators`` spares functions we cannot tell
    apart either: it declares no docstring rule."""

    def table(name: str) -> Mapping[str, Any]:
        value = lint.get(name, ruff.get(name))
        return value if isinstance(value, dict) else {}

    annotations, pydocstyle = table("flake8-annotations"), table("pydocstyle")
    spared = {
        ANNOTATED_FUNCTION: annotations.get("ignore-fully-untyped") is True
        or annotations.get("suppress-none-returning") is True,
        DOCUMENTED_FUNCTION: bool(pydocstyle.get("ignore-decorators")),
    }
    spared[ANNOTATED_METHOD] = spared[ANNOTATED_FUNCTION]
    spared[DOCUMENTED_METHOD] = spared[DOCUMENTED_FUNCTION]
    out: list[tuple[str, str]] = []
    for rule, codes in _CODES.items():
        by = [_enabled(selected, ignored, c) for c in codes]
        if spared[rule] or None in by:
            continue
        named = sorted({b for b in by if b is not None})
        out.append((rule, f"select {', '.join(json.dumps(n) for n in named)} ({', '.join(codes)})"))
    return out


# [tool.ruff.format] settings that keep the code as written.
_PRESERVING: dict[str, Any] = {"quote-style": "preserve"}


def _ruff(path: str, ruff: dict[str, Any], table: str = "tool.ruff", run: str = "") -> list[ToolSettings]:
    """``table``: where the settings sit, for the evidence ("" in ruff.toml, the top level).
    ``run``: the hook or command that runs ruff format (``_formatter_runs``), which formats with
    these settings whether or not a format table says anything."""

    def at(sub: str = "") -> str:  # the table's header and a space; nothing at the top level
        if sub == "format" and run and not isinstance(raw_fmt, dict):
            return f"{run} (ruff format's defaults): "
        name = ".".join(part for part in (table, sub) if part)
        return f"[{name}] " if name else ""

    raw_lint, raw_fmt = ruff.get("lint"), ruff.get("format")
    lint: dict[str, Any] = raw_lint if isinstance(raw_lint, dict) else {}
    fmt: dict[str, Any] | None = raw_fmt if isinstance(raw_fmt, dict) else None
    if fmt and all(_PRESERVING.get(k) == v for k, v in fmt.items()) and not run:
        # A format table that only tells ruff format to keep what it finds (babel's
        # quote-style = "preserve") says nothing of a formatter being run: hundreds of babel's
        # lines exceed the width ruff format would keep.
        fmt = None
    if fmt is None and run:
        fmt = {}

    def option(key: str) -> Any:
        return lint.get(key, ruff.get(key))

    selected = _codes(option("select")) + _codes(option("extend-select"))
    ignored = _codes(option("ignore")) + _codes(option("extend-ignore"))
    e501 = _covers(selected, "E501") and not _covers(ignored, "E501")
    got = _get(ruff, "line-length", "line_length")
    s = ToolSettings("ruff", path, FORMATTER if fmt is not None else LINTER, PYTHON)
    # Without E501, only ruff format keeps the length, and it leaves long strings and comments.
    code_only = not e501
    # An explicit line length is a statement, unless E501 is ignored and no formatter keeps it
    # (babel's line-length = 95: hundreds of lines past it); the default 88 is one only where
    # ruff enforces it.
    # E501 reports past ``lint.pycodestyle.max-line-length`` where it is set, ``line-length`` being
    # the formatter's width then (pytest-xdist: format at 88, lines reported past 120): the linter's
    # limit is the one every line is held to.
    raw_style = lint.get("pycodestyle", ruff.get("pycodestyle"))
    e501_max = _get(raw_style, "max-line-length", "max_line_length") if isinstance(raw_style, dict) else None
    if e501 and e501_max and _int(e501_max[1]):
        where = f"{at('lint.pycodestyle')}{e501_max[0]} = {e501_max[1]}"
        s.settings.append(Setting(LENGTH, str(_int(e501_max[1])), where))
    elif got and _int(got[1]) and (fmt is not None or not _covers(ignored, "E501")):
        s.settings.append(Setting(LENGTH, str(_int(got[1])), f"{at()}{got[0]} = {got[1]}", code_only))
    elif fmt is not None or e501:
        why = (run or "ruff format") if fmt is not None else "E501 selected"
        s.settings.append(Setting(LENGTH, "88", f"{at()}(default line-length 88, {why})", code_only))
    if fmt is not None:
        style = fmt.get("quote-style", "double")
        if style in ("double", "single"):
            s.settings.append(Setting(QUOTES, style, f"{at('format')}quote-style = {style!r}"))
        indent = fmt.get("indent-style", "space")
        unit = "tab" if indent == "tab" else "space"
        s.settings.append(Setting(UNIT, unit, f"{at('format')}indent-style = {indent!r}"))
        width = _int(ruff.get("indent-width", 4))
        if indent != "tab" and width:
            s.settings.append(Setting(WIDTH, str(width), f"{at()}indent-width = {width}"))
        s.settings.append(Setting(TRAILING, "none", f"{at('format')}(ruff format strips trailing whitespace)"))
    if _covers(selected, "I001") and not _covers(ignored, "I001"):
        raw_isort = lint.get("isort", ruff.get("isort"))  # [tool.ruff.lint.isort], before it [tool.ruff.isort]
        known = raw_isort.get("known-first-party") if isinstance(raw_isort, dict) else None
        first = _first_party(path, known, ruff.get("src"))
        s.settings.append(Setting(IMPORT_ORDER, "ordered", f"{at()}(rule I001 selected)", params=first))
    declares = _ruff_declares(selected, ignored, lint, ruff)
    where = at("lint") if "select" in lint or "extend-select" in lint else at()
    for rule, evidence in declares:
        s.settings.append(Setting(rule, "annotated" if rule in TYPING_RULES else "documented", where + evidence))
    for key in ("per-file-ignores", "extend-per-file-ignores"):
        per_file = option(key)
        for glob, codes in sorted(per_file.items()) if isinstance(per_file, dict) else []:
            if _covers(_codes(codes), "E501"):
                s.exempt.append((str(glob), (LENGTH,)))
            off = tuple(
                rule for rule, _ in declares if any(_selects(c, x) for c in _codes(codes) for x in _CODES[rule])
            )
            if off:
                s.exempt.append((str(glob), off))
    # Files ruff never looks at (neither lint nor format): none of its settings applies there.
    rules = tuple(sorted({x.rule for x in s.settings}))
    for key in ("exclude", "extend-exclude"):
        s.exempt += [(glob, rules) for glob in _globs(ruff.get(key))]
    return [s] if s.settings else []


def _globs(value: Any) -> list[str]:
    """A tool's list of path globs: a TOML array, or a comma- or line-separated INI value."""
    if isinstance(value, str):
        value = value.replace("\n", ",").split(",")
    if not isinstance(value, list):
        return []
    return [g.strip().removeprefix("./") for g in (str(v) for v in value) if g.strip()]


# --- mypy ----------------------------------------------------------------------------------------


def _true(value: Any) -> bool:
    """A boolean as TOML writes it, or as mypy's INI reader accepts it (``True``, ``yes``, ``1``)."""
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "1"))


def _false(value: Any) -> bool:
    return value is False or (isinstance(value, str) and value.strip().lower() in ("false", "no", "off", "0"))


def _untyped_defs_off(options: Mapping[str, Any]) -> bool:
    """Whether a per-module section stops mypy asking that module for annotations."""
    codes = _codes(options.get("disable_error_code", ""))
    return (
        _false(options.get("disallow_untyped_defs"))
        or _true(options.get("allow_untyped_defs"))
        or _true(options.get("ignore_errors"))
        or _false(options.get("strict"))
        or "NO-UNTYPED-DEF" in codes
    )


def _module_globs(module: str) -> list[str]:
    """Path globs (from the configuration's directory) of the files of a mypy module pattern:
    ``pkg.vendor.*`` is the package and every module below it, a ``*`` inside a pattern spans any
    number of components; the package may sit under a source directory (``src/pkg/vendor``)."""
    module = module.strip()
    if not module or module == "*":
        return []
    below = module.endswith(".*")
    parts = [("**" if p == "*" else p) for p in module.removesuffix(".*").split(".")]
    stem = "/".join(["**", *parts] if parts[0] != "**" else parts)
    if below:
        return [stem + ".py", stem + ".pyi", stem + "/"]
    return [stem + ".py", stem + ".pyi", stem + "/__init__.py", stem + "/__init__.pyi"]


def _mypy(
    path: str,
    raw: Mapping[str, Any],
    per_module: Sequence[tuple[list[str], Mapping[str, Any]]],
    where: str,
) -> list[ToolSettings]:
    """mypy asking every function for annotations: ``disallow_untyped_defs`` (which ``strict``
    turns on) reports a function with any parameter or the return unannotated. ``disallow_incomplete_defs``
    alone does not: it passes a function with no annotation at all."""
    options = {str(k).replace("-", "_").lower(): v for k, v in raw.items()}
    if "NO-UNTYPED-DEF" in _codes(_listed(options.get("disable_error_code"))):
        return []
    untyped = options.get("disallow_untyped_defs")
    if _true(options.get("allow_untyped_defs")):
        return []  # mypy's inverse form (pyjwt: `strict = true`, then `allow_untyped_defs = true`)
    if _true(untyped):
        evidence = f"{where} disallow_untyped_defs = {_shown(untyped)}"
    elif _true(options.get("strict")) and not _false(untyped):
        evidence = f"{where} strict = {_shown(options['strict'])}"
    else:
        return []
    s = ToolSettings("mypy", path, LINTER, PYTHON, [Setting(rule, "annotated", evidence) for rule in TYPING_RULES])
    for modules, section in per_module:
        opts = {str(k).replace("-", "_").lower(): v for k, v in section.items()}
        if "disable_error_code" in opts:
            opts["disable_error_code"] = _listed(opts["disable_error_code"])
        if _untyped_defs_off(opts):
            # A section turning it on again below a pattern turned off (structlog's `tests.typing.*`
            # under `tests.*`) is not followed: fewer files held, none held wrongly.
            s.exempt += [(g, TYPING_RULES) for m in modules for g in _module_globs(m)]
    directory = posixpath.dirname(path)
    regexes = [_path_regex(directory, p) for p in _globs(options.get("files"))]
    for package in _globs(options.get("packages")) + _globs(options.get("modules")):
        # Named by import name: wherever the package's directory sits (src-layout or not).
        tail = re.escape(package.replace(".", "/"))
        regexes.append(f"^(?:.*/)?{tail}(?:/|\\.pyi?$)")
    skip = _exclude_regex(options.get("exclude"))
    if skip:
        # mypy searches each path for its `exclude` regex: a path it matches is not checked.
        regexes = [f"^(?!.*?{skip})" + r.removeprefix("^") for r in regexes or ["^"]]
    s.scope = tuple(regexes)
    return [s]


def _exclude_regex(value: Any) -> str:
    """mypy's ``exclude`` (one regex, or a TOML list of them) as one group; a verbose ``(?x)``
    pattern, as mypy's documentation writes multi-line ones, keeps its flag inside the group."""
    patterns = [str(v) for v in value] if isinstance(value, list) else [value] if isinstance(value, str) else []
    groups = [_scoped_regex(p) for p in patterns]
    joined = "(?:" + "|".join(groups) + ")" if groups else ""
    try:
        re.compile(joined)
    except re.error:
        return ""
    return joined


def _listed(value: Any) -> str:
    """A TOML list or an INI value as one string: lines for ``exclude``, commas kept for codes."""
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value) if value is not None else ""


def _shown(value: Any) -> str:
    return "true" if value is True else str(value).strip()


def _mypy_ini(path: str, text: str) -> list[ToolSettings]:
    """mypy's INI files (mypy.ini, .mypy.ini, setup.cfg): ``[mypy]`` and its ``[mypy-pattern]``
    sections, each naming comma-separated module patterns."""
    parser = configparser.RawConfigParser(strict=False, inline_comment_prefixes=(" #", " ;"))
    parser.read_string(text, source=path)
    if not parser.has_section("mypy"):
        return []
    name = posixpath.basename(path)
    per_module = [
        ([m.strip() for m in section.removeprefix("mypy-").split(",")], dict(parser.items(section)))
        for section in parser.sections()
        if section.startswith("mypy-")
    ]
    return _mypy(path, dict(parser.items("mypy")), per_module, f"{name} [mypy]")


# --- setup.cfg, tox.ini, .flake8, .pylintrc, .isort.cfg -----------------------------------------


def _ini(path: str, text: str) -> list[ToolSettings]:
    parser = configparser.RawConfigParser(strict=False, inline_comment_prefixes=(" #", " ;"))
    parser.read_string(text, source=path)
    name = posixpath.basename(path)
    out: list[ToolSettings] = []
    for section in ("flake8", "pycodestyle"):
        if parser.has_section(section):
            out += _flake8_like(path, section, dict(parser.items(section)), f"{name} [{section}]")
    for section in ("FORMAT", "format", "pylint.FORMAT", "pylint.format"):
        if parser.has_section(section) and parser.has_option(section, "max-line-length"):
            value = parser.get(section, "max-line-length")
            if _int(value):
                s = ToolSettings("pylint", path, LINTER, PYTHON)
                s.settings.append(Setting(LENGTH, str(_int(value)), f"{name} [{section}] max-line-length = {value}"))
                out.append(s)
            break
    if name == "setup.cfg":
        out += _mypy_ini(path, text)
    if name in ("setup.cfg", "tox.ini") and parser.has_section("pydocstyle"):
        out += _pydocstyle(path, dict(parser.items("pydocstyle")), f"{name} [pydocstyle]")
    if parser.has_section("isort") or parser.has_section("tool:isort") or name == ".isort.cfg":
        s = ToolSettings("isort", path, FORMATTER, PYTHON)
        section = next((x for x in ("isort", "tool:isort", "settings") if parser.has_section(x)), "")
        options = {k.replace("-", "_"): v for k, v in parser.items(section)} if section else {}
        first = _first_party(path, options.get("known_first_party"), options.get("src_paths"))
        why = f"{name} [isort] (isort groups stdlib, third party, local)"
        s.settings.append(Setting(IMPORT_ORDER, "ordered", why, params=first))
        out.append(s)
    return out


# pydocstyle's conventions, by the codes they leave out (all of them check D102 and D103).
_PYDOCSTYLE_CONVENTIONS = frozenset({"pep257", "numpy", "google"})


def _pydocstyle(path: str, raw: Mapping[str, str], where: str) -> list[ToolSettings]:
    """pydocstyle's own configuration: ``select`` names the codes checked, ``ignore`` every code but
    those, otherwise a ``convention`` (pep257 by default); ``add-select`` / ``add-ignore`` amend it.
    Each of these checks D102 (public method) and D103 (public function) unless told not to."""
    opts = {k.replace("_", "-").lower(): v for k, v in raw.items()}
    convention = opts.get("convention", "pep257").strip().lower()
    if "select" in opts:
        on, base = _codes(opts["select"]), f"select = {opts['select']}"
        off: list[str] = []
    elif "ignore" in opts:
        on, off, base = ["D"], _codes(opts["ignore"]), f"ignore = {opts['ignore']}"
    elif convention in _PYDOCSTYLE_CONVENTIONS:
        on, off = ["D"], []
        base = f"convention = {convention}" if "convention" in opts else "(default convention pep257)"
    else:
        return []
    on += _codes(opts.get("add-select", ""))
    off += _codes(opts.get("add-ignore", ""))
    s = ToolSettings("pydocstyle", path, LINTER, PYTHON)
    for rule in (DOCUMENTED_FUNCTION, DOCUMENTED_METHOD):
        [code] = _CODES[rule]
        if any(_selects(c, code) for c in on) and not any(_selects(c, code) for c in off):
            s.settings.append(Setting(rule, "documented", f"{where} {base} ({code})"))
    return [s] if s.settings else []


def _first_party(path: str, known: Any, sources: Any) -> tuple[tuple[str, str], ...]:
    """What an import sorter's configuration at ``path`` says is first party: the modules it
    names (isort ``known_first_party``, ruff ``known-first-party``) and the directories, from the
    repository root, whose top-level packages and modules are (isort ``src_paths``, ruff ``src``;
    "." for the root). Unset, the sorters' own default roots hold, the configuration's directory
    and its ``src/``: a package or module found there is first party however the file's imports
    resolve (kombu's `t/` tests importing `kombu` and `t.mocks`, cleo's `tests.fixtures`, which
    isort passes and the engine's resolution called third party, 5 unfair)."""
    out: list[tuple[str, str]] = []
    names = sorted({n.split(".", 1)[0] for n in _globs(known) if _DOTTED.fullmatch(n)})
    if names:
        out.append(("first_party", "\n".join(names)))
    base = posixpath.dirname(path)
    given = _globs(sources) if sources is not None else [".", "src"]
    roots = sorted({posixpath.normpath(posixpath.join(base, r)) for r in given if "*" not in r})
    if roots:
        out.append(("source_roots", "\n".join(roots)))
    return tuple(out)


def _flake8_like(path: str, tool: str, options: Mapping[str, str], where: str) -> list[ToolSettings]:
    opts = {k.replace("_", "-").lower(): v for k, v in options.items()}
    ignored = _codes(opts.get("ignore", "")) + _codes(opts.get("extend-ignore", ""))
    selected = _codes(opts.get("select", "")) + _codes(opts.get("extend-select", ""))
    if _covers(ignored, "E501") or (opts.get("select") and not _covers(selected, "E501")):
        return []
    got = _get(opts, "max-line-length")
    length = _int(got[1]) if got else 79
    if not length:
        return []
    evidence = f"{where} max-line-length = {got[1]}" if got else f"{where} (default max-line-length 79)"
    s = ToolSettings(tool, path, LINTER, PYTHON, [Setting(LENGTH, str(length), evidence)])
    for line in opts.get("per-file-ignores", "").splitlines():
        glob, _, codes = line.partition(":")
        if glob.strip() and _covers(_codes(codes), "E501"):
            s.exempt.append((glob.strip(), (LENGTH,)))
    for key in ("exclude", "extend-exclude"):
        s.exempt += [(glob, (LENGTH,)) for glob in _globs(opts.get(key))]
    return [s]


def _stated(doc: Mapping[str, Any], where: str, tool: str, key: str, default: Any) -> tuple[Any, str]:
    """A formatter's setting and its evidence; its default when the file does not state it."""
    if key in doc:
        return doc[key], f"{where}{key} = {json.dumps(doc[key])}"
    return default, f"{where}({tool} default {key} = {json.dumps(default)})"


def _layout(
    s: ToolSettings,
    doc: Mapping[str, Any],
    where: str,
    tool: str,
    width: tuple[str, int],
    tabs_key: str,
    size: tuple[str, int],
) -> None:
    """Line length and indentation of a formatter configured by width, tabs and tab size.

    The formatters configured so (Prettier, rustfmt) leave string literals and comments whole.
    """
    value, why = _stated(doc, where, tool, *width)
    if _int(value):
        s.settings.append(Setting(LENGTH, str(_int(value)), why, code_only=True))
    tabs, why = _stated(doc, where, tool, tabs_key, False)
    s.settings.append(Setting(UNIT, "tab" if tabs is True else "space", why))
    spaces, why = _stated(doc, where, tool, *size)
    if tabs is not True and _int(spaces):
        s.settings.append(Setting(WIDTH, str(_int(spaces)), why))


# --- Prettier and ESLint ----------------------------------------------------------------------


def _prettier(out: ToolConfigs, path: str, doc: Any, where: str) -> None:
    if isinstance(doc, str):  # a shared config named by package: not resolvable from the repository
        out.notes.append(f"{path}: Prettier config {doc!r} is a package; its settings were not read")
        return
    if not isinstance(doc, dict):
        doc = {}

    s = ToolSettings("prettier", path, FORMATTER, PRETTIER_LANGUAGES)
    _layout(s, doc, where, "Prettier", ("printWidth", 80), "useTabs", ("tabWidth", 2))
    single, why = _stated(doc, where, "Prettier", "singleQuote", False)
    s.settings.append(Setting(QUOTES, "single" if single is True else "double", why))
    eol, why = _stated(doc, where, "Prettier", "endOfLine", "lf")
    if eol in ("lf", "crlf"):
        s.settings.append(Setting(LINE_ENDINGS, eol, why))
    s.settings.append(Setting(TRAILING, "none", f"{where}(Prettier strips trailing whitespace)"))
    out.tools.append(s)


_JSONC = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[\]}])', re.DOTALL)


def _without_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (biome.jsonc, tsconfig-style) as plain JSON."""
    return _JSONC.sub(lambda m: m.group() if m.group().startswith('"') else "", text)


def _table(doc: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _biome(out: ToolConfigs, path: str, doc: Any) -> None:
    """Biome's formatter (its defaults: tabs, width 2, 80 columns, double quotes, LF); the
    ``javascript.formatter`` section overrides the general one for JavaScript and TypeScript."""
    if not isinstance(doc, dict):
        return
    general = _table(doc, "formatter")
    js = _table(_table(doc, "javascript"), "formatter")
    if general.get("enabled") is False or js.get("enabled") is False:
        return
    merged = {**general, **js}
    where = f"{posixpath.basename(path)}: "
    flat = {k: v for k, v in merged.items() if k in ("lineWidth", "indentWidth", "quoteStyle", "lineEnding")}
    flat["useTabs"] = merged.get("indentStyle", "tab") == "tab"  # Biome indents with tabs by default
    s = ToolSettings("biome", path, FORMATTER, JS)
    _layout(s, flat, where, "Biome", ("lineWidth", 80), "useTabs", ("indentWidth", 2))
    _, why = _stated(merged, where, "Biome", "indentStyle", "tab")
    s.settings = [x if x.rule != UNIT else Setting(UNIT, x.choice, why) for x in s.settings]
    quote, why = _stated(flat, where, "Biome", "quoteStyle", "double")
    if quote in ("single", "double"):
        s.settings.append(Setting(QUOTES, quote, why))
    eol, why = _stated(flat, where, "Biome", "lineEnding", "lf")
    if eol in ("lf", "crlf"):
        s.settings.append(Setting(LINE_ENDINGS, eol, why))
    out.tools.append(s)


# rule -> (our rule, its options -> our choice; the first option is ESLint's default).
_ESLINT_CHOICES: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("eol-last", FINAL_NEWLINE, {"always": "yes", "never": "no"}),
    ("linebreak-style", LINE_ENDINGS, {"unix": "lf", "windows": "crlf"}),
)
_ESLINT_ALIASES = ("@stylistic/", "@stylistic/js/", "@stylistic/ts/", "@typescript-eslint/")


def _eslint_rule(rules: Mapping[str, Any], name: str) -> tuple[str, list[Any]] | None:
    for key in (name, *(a + name for a in _ESLINT_ALIASES)):
        if key not in rules:
            continue
        value = rules[key]
        entry = list(value) if isinstance(value, list) else [value]
        if not entry or entry[0] in (0, "off", "0"):
            return None
        return key, entry[1:]
    return None


def _eslint(path: str, doc: Mapping[str, Any], where: str) -> list[ToolSettings]:
    rules = doc.get("rules")
    if not isinstance(rules, dict):
        return []
    s = ToolSettings("eslint", path, LINTER, JS)
    hit = _eslint_rule(rules, "max-len")
    if hit is not None:
        key, args = hit
        options = next((a for a in args if isinstance(a, dict)), {})
        code = args[0] if args and not isinstance(args[0], dict) else options.get("code", 80)
        ignores = ("ignoreStrings", "ignoreTemplateLiterals", "ignoreComments")
        if _int(code):
            evidence = f"{where}rules[{key!r}] code {code}"
            code_only = all(options.get(k) is True for k in ignores)
            skips = any(options.get(k) is True for k in _STRING_LINE_IGNORES)
            extra = ((SKIPS_STRING_LINES, "1"),) if skips else ()
            s.settings.append(Setting(LENGTH, str(_int(code)), evidence, code_only, params=extra))
    hit = _eslint_rule(rules, "indent")
    if hit is not None:
        key, args = hit
        value = args[0] if args else 4
        if value == "tab":
            s.settings.append(Setting(UNIT, "tab", f'{where}rules[{key!r}] "tab"'))
        elif _int(value):
            s.settings.append(Setting(UNIT, "space", f"{where}rules[{key!r}] {value}"))
            s.settings.append(Setting(WIDTH, str(_int(value)), f"{where}rules[{key!r}] {value}"))
    hit = _eslint_rule(rules, "quotes")
    if hit is not None:
        key, args = hit
        value = args[0] if args else "double"
        if value in ("single", "double"):
            s.settings.append(Setting(QUOTES, value, f"{where}rules[{key!r}] {value!r}"))
    hit = _eslint_rule(rules, "no-trailing-spaces")
    if hit is not None:
        s.settings.append(Setting(TRAILING, "none", f"{where}rules[{hit[0]!r}]"))
    for name, rule, choices in _ESLINT_CHOICES:
        hit = _eslint_rule(rules, name)
        if hit is not None:
            value = hit[1][0] if hit[1] else next(iter(choices))
            if value in choices:
                s.settings.append(Setting(rule, choices[value], f"{where}rules[{hit[0]!r}] {value!r}"))
    return [s] if s.settings else []


# --- rustfmt, clang-format, EditorConfig ------------------------------------------------------


def _rustfmt(path: str, doc: dict[str, Any]) -> ToolSettings:
    where = posixpath.basename(path) + " "
    s = ToolSettings("rustfmt", path, FORMATTER, RUST)
    _layout(s, doc, where, "rustfmt", ("max_width", 100), "hard_tabs", ("tab_spaces", 4))
    style, why = _stated(doc, where, "rustfmt", "newline_style", "Auto")
    if style in ("Unix", "Windows"):
        s.settings.append(Setting(LINE_ENDINGS, "lf" if style == "Unix" else "crlf", why))
    return s


# BasedOnStyle -> (ColumnLimit, IndentWidth), from clang-format's documentation.
_CLANG_STYLES = {
    "llvm": (80, 2),
    "google": (80, 2),
    "chromium": (80, 2),
    "mozilla": (80, 2),
    "webkit": (0, 4),
    "microsoft": (120, 4),
    "gnu": (79, 2),
}
_CLANG_LANGUAGES: dict[str, tuple[str, ...]] = {
    "": ("c", "cpp"),
    "cpp": ("c", "cpp"),
    "java": ("java",),
    "csharp": ("csharp",),
    "javascript": JS,
}


def _clang_format(path: str, text: str) -> list[ToolSettings]:
    name = posixpath.basename(path)
    out: list[ToolSettings] = []
    base: dict[str, Any] = {}
    for doc in yaml.safe_load_all(text):
        if not isinstance(doc, dict):
            continue
        language = str(doc.get("Language", "")).lower()
        if not language:
            base = doc
        languages = _CLANG_LANGUAGES.get(language)
        if languages is None:
            continue
        merged = {**base, **doc}
        style = str(merged.get("BasedOnStyle", "LLVM")).lower()
        column, indent = _CLANG_STYLES.get(style, (80, 2))
        where = f"{name} ({'Language: ' + doc['Language'] + ', ' if language else ''}BasedOnStyle {style})"
        s = ToolSettings("clang-format" + (":" + language if language else ""), path, FORMATTER, languages)
        limit = merged.get("ColumnLimit", column)
        if _int(limit):
            evidence = f"{name} ColumnLimit: {limit}" if "ColumnLimit" in merged else where
            s.settings.append(Setting(LENGTH, str(_int(limit)), evidence))
        tabs = str(merged.get("UseTab", "Never")).lower() not in ("never", "false")
        s.settings.append(Setting(UNIT, "tab" if tabs else "space", f"{name} UseTab: {merged.get('UseTab', 'Never')}"))
        width = merged.get("IndentWidth", indent)
        if not tabs and _int(width):
            evidence = f"{name} IndentWidth: {width}" if "IndentWidth" in merged else where
            s.settings.append(Setting(WIDTH, str(_int(width)), evidence))
        out.append(s)
    return out


def _editorconfig(path: str, text: str) -> EditorConfigFile:
    probe = EditorConfigParser("/" + posixpath.join(posixpath.dirname(path), "x"))
    probe._read(cast(Any, io.StringIO(text)), "/" + path)  # raises ParsingError on a malformed file
    return EditorConfigFile(path, text, probe.root_file)


def editorconfig_settings(options: Mapping[str, str], where: str) -> list[Setting]:
    """Our rules from the EditorConfig options that apply to one file."""
    out: list[Setting] = []
    style = options.get("indent_style")
    if style in ("space", "tab"):
        out.append(Setting(UNIT, style, f"{where} indent_style = {style}"))
    size = _int(options.get("indent_size"))
    if size and style != "tab":
        out.append(Setting(WIDTH, str(size), f"{where} indent_size = {size}"))
    length = _int(options.get("max_line_length"))
    if length:
        out.append(Setting(LENGTH, str(length), f"{where} max_line_length = {length}"))
    if options.get("trim_trailing_whitespace") == "true":
        out.append(Setting(TRAILING, "none", f"{where} trim_trailing_whitespace = true"))
    if options.get("insert_final_newline") == "true":
        out.append(Setting(FINAL_NEWLINE, "yes", f"{where} insert_final_newline = true"))
    eol = options.get("end_of_line")
    if eol in ("lf", "crlf"):
        out.append(Setting(LINE_ENDINGS, eol, f"{where} end_of_line = {eol}"))
    return out


# --- JavaScript style presets: standard, neostandard, xo, eslint-config-standard/airbnb -------------

# What each preset enforces among our rules, from its own rule set (standard's RULES.md and
# eslint-config-standard, neostandard's README, eslint-config-xo's rules, eslint-config-airbnb-base's
# rules/style.js): (the ESLint rule that enforces it, our rule, the choice, how the evidence says it).
_PresetRule = tuple[str, str, str, str]
_SINGLE: _PresetRule = ("quotes", QUOTES, "single", "single quotes")
_NO_TRAILING: _PresetRule = ("no-trailing-spaces", TRAILING, "none", "no trailing whitespace")
_EOL_LAST: _PresetRule = ("eol-last", FINAL_NEWLINE, "yes", "a final newline")
_LF: _PresetRule = ("linebreak-style", LINE_ENDINGS, "lf", "LF line endings")
_TABS: tuple[_PresetRule, ...] = (("indent", UNIT, "tab", "tab indentation"),)
# airbnb's max-len skips lines long for a string, a template literal or a URL (not for a comment):
# held as a limit for code, as a formatter's is.
_AIRBNB_LENGTH: _PresetRule = ("max-len", LENGTH, "100", "max-len 100, strings and URLs ignored")


def _spaces(width: int) -> tuple[_PresetRule, ...]:
    what = f"{width}-space indentation"
    return (("indent", UNIT, "space", what), ("indent", WIDTH, str(width), what))


_STANDARD_STYLE: tuple[_PresetRule, ...] = (_SINGLE, *_spaces(2), _NO_TRAILING, _EOL_LAST)
_AIRBNB_STYLE: tuple[_PresetRule, ...] = (_SINGLE, *_spaces(2), _AIRBNB_LENGTH, _NO_TRAILING, _EOL_LAST, _LF)
_PRESET_STYLES: dict[str, tuple[_PresetRule, ...]] = {
    "standard": _STANDARD_STYLE,
    "neostandard": _STANDARD_STYLE,
    "airbnb-base": _AIRBNB_STYLE,
    "airbnb": _AIRBNB_STYLE,
    "xo": (_SINGLE, *_TABS, _NO_TRAILING, _EOL_LAST, _LF),  # `space` trades the tabs for spaces
}
# ESLint's max-len options that skip a whole line holding such a literal (not just its text):
# `ignoreStrings` passes any line with a string in it, however long its code (validator.js under
# airbnb-base: a 401-character regex table, 12 lines judged unfair). The line-length check reads it.
_STRING_LINE_IGNORES = ("ignoreStrings", "ignoreTemplateLiterals", "ignoreRegExpLiterals")
SKIPS_STRING_LINES = "skips_string_lines"


# An ESLint config's `extends` entry -> the preset it names (semistandard is standard with semicolons).
_EXTENDS = {
    **{n: "standard" for n in ("standard", "semistandard")},
    **{n: "airbnb-base" for n in ("airbnb-base", "airbnb-base/legacy")},
    **{n: "airbnb" for n in ("airbnb", "airbnb/legacy")},
}
# The preset CLIs lint JavaScript only (standard; TypeScript is ts-standard's), or both (xo).
_JS_ONLY: tuple[str, ...] = ("javascript",)
# Options of the linters' command lines that take a value (the next word, unless given with `=`).
_LINT_VALUED = frozenset(
    {
        "-c",
        "--config",
        "--ext",
        "--extension",
        "--parser",
        "--parser-options",
        "--plugin",
        "--rule",
        "--rulesdir",
        "--env",
        "--global",
        "--ignore",
        "--ignore-path",
        "--ignore-pattern",
        "-f",
        "--format",
        "--reporter",
        "-o",
        "--output-file",
        "--max-warnings",
        "--cache-location",
        "--cache-strategy",
        "--resolve-plugins-relative-to",
        "--stdin-filename",
        "--cwd",
        "--extend",
    }
)
_GLOB_CHARS = re.compile(r"[*?{\[]")
# A command's leading words that run the next one: an environment assignment, a package runner.
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_RUNNERS = {("npx",), ("pnpx",), ("bunx",), ("npm", "exec"), ("pnpm", "exec"), ("yarn", "exec"), ("yarn", "dlx")}


@dataclass(frozen=True, slots=True)
class _ScriptRun:
    """One command of a package.json script running a linter: ``"lint": "eslint src test"``."""

    path: str  # the package.json
    script: str  # "lint"
    tool: str  # "eslint", "standard", "xo"
    args: tuple[str, ...]

    @property
    def evidence(self) -> str:
        return f'{posixpath.basename(self.path)} "scripts.{self.script}": {" ".join((self.tool, *self.args))}'

    def scope(self) -> tuple[str, ...]:
        """Regexes of the paths it lints (empty: its whole directory)."""
        directory = posixpath.dirname(self.path)
        paths: list[str] = []
        skip = False
        for word in self.args:
            if skip:
                skip = False
            elif word in _LINT_VALUED:
                skip = True
            elif not word.startswith("-") and "{" not in word:
                paths.append(_GLOB_CHARS.split(word, 1)[0].rsplit("/", 1)[0] if _GLOB_CHARS.search(word) else word)
        if not paths or any(p.strip("./") == "" for p in paths):
            return ()
        return tuple(sorted({_path_regex(directory, p) for p in paths}))


def _script_runs(path: str, doc: Any) -> list[_ScriptRun]:
    """Every command of package.json's ``scripts`` (split at ``&&``, ``||``, ``;`` and pipes)."""
    scripts = doc.get("scripts") if isinstance(doc, dict) else None
    out: list[_ScriptRun] = []
    for name, command in scripts.items() if isinstance(scripts, dict) else ():
        if not isinstance(command, str):
            continue
        for part in re.split(r"&&|\|\||;|\|", command):
            try:
                words = shlex.split(part)
            except ValueError:
                continue
            while words and _ENV_ASSIGNMENT.match(words[0]):
                words = words[1:]
            for runner in sorted(_RUNNERS, key=len, reverse=True):
                if tuple(words[: len(runner)]) == runner:
                    words = [w for w in words[len(runner) :] if not w.startswith("--yes")]
                    break
            if words:
                out.append(_ScriptRun(path, str(name), posixpath.basename(words[0]), tuple(words[1:])))
    return out


# Scripts a reader looks for first when citing which one runs the linter.
_USUAL_SCRIPTS = ("lint", "test", "pretest", "posttest")


@dataclass(slots=True)
class _Preset:
    """A preset named by a configuration file, declared once the scripts show its linter runs."""

    preset: str  # a key of _PRESET_STYLES
    runner: str  # the command that must run: "eslint", "standard", "xo"
    path: str  # the file naming it (the declaration's file)
    where: str  # how that file names it: '.eslintrc.json extends "airbnb-base"'
    languages: tuple[str, ...]
    # The ESLint rules the repository sets itself, which the preset's values yield to.
    own_rules: frozenset[str] = frozenset()
    own: list[ToolSettings] = field(default_factory=list)  # what its own rules declare
    width: int | None = None  # xo `space`: indentation in spaces (None: the preset's own)
    ignores: list[str] = field(default_factory=list)  # globs the linter is told to skip
    # xo's rule on names: (its name, the declared convention's params), and the (glob, rules)
    # its overrides take out of it.
    names: tuple[str, tuple[tuple[str, str], ...]] | None = None
    exempt: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)


def _own_rule_names(rules: Any) -> frozenset[str]:
    """The ESLint rules a config sets (on or off), without their plugin prefix."""
    if not isinstance(rules, dict):
        return frozenset()
    names = set()
    for key in rules:
        name = str(key)
        for alias in sorted(_ESLINT_ALIASES, key=len, reverse=True):
            if name.startswith(alias):
                name = name[len(alias) :]
                break
        names.add(name)
    return frozenset(names)


def _eslint_config(out: ToolConfigs, runs: _Runs, path: str, doc: Mapping[str, Any], where: str) -> None:
    preset = _eslint_extends(path, doc, where)
    if preset is not None:
        runs.presets.append(preset)
    else:
        out.tools += _eslint(path, doc, where)


def _eslint_extends(path: str, doc: Mapping[str, Any], where: str) -> _Preset | None:
    """The preset an ESLint config's ``extends`` names, unless a later entry turns the style off
    (eslint-config-prettier, ``plugin:prettier/recommended``: Prettier formats instead)."""
    raw = doc.get("extends")
    entries = [raw] if isinstance(raw, str) else [str(e) for e in raw] if isinstance(raw, list) else []
    found = None
    for i, entry in enumerate(entries):
        name = entry.removeprefix("eslint-config-")
        if name in _EXTENDS:
            found = (i, entry, _EXTENDS[name])
    if found is None:
        return None
    i, entry, preset = found
    if any("prettier" in e for e in entries[i + 1 :]):
        return None
    own = _eslint(path, doc, where)
    # ESLint lints `.js` files (`.mjs`/`.cjs` too) unless told of TypeScript by a parser, a plugin or
    # an override naming `.ts` files: pino's `.eslintrc` extending standard left its `.test-d.ts` alone.
    languages = JS if "typescript" in json.dumps(doc) or ".ts" in json.dumps(doc.get("overrides")) else _JS_ONLY
    return _Preset(
        preset, "eslint", path, f"{where}extends {json.dumps(entry)}", languages, _own_rule_names(doc.get("rules")), own
    )


# A call of neostandard in a flat config: `neostandard({...})`, `require('neostandard')({...})`.
_NEOSTANDARD_CALL = re.compile(r"""(?:\bneostandard|require\(\s*['"]neostandard['"]\s*\))\s*\(""")
# Our rules set by name in a JavaScript config (`'@stylistic/quotes': [...]`, `indent: ...`).
_RULE_KEY = re.compile(
    r"""['"]?(?:@stylistic/(?:js/|ts/)?|@typescript-eslint/)?"""
    r"""(quotes|indent|max-len|no-trailing-spaces|eol-last|linebreak-style)['"]?\s*:"""
)
_IGNORES = re.compile(r"""(?:\bignores\s*:\s*|globalIgnores\(\s*)\[([^\]]*)\]""")
_JS_STRING = re.compile(r"""'([^'\n]*)'|"([^"\n]*)\"""")


def _call_arguments(text: str, start: int) -> str:
    """The text between the parenthesis opened just before ``start`` and the one closing it."""
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start:i]
    return text[start:]


def _js_option(arguments: str, name: str) -> Any:
    m = re.search(rf"\b{name}\s*:\s*(true|false|\d+|'\d+'|\"\d+\")", arguments)
    if m is None:
        return None
    value = m.group(1).strip("'\"")
    return value == "true" if value in ("true", "false") else int(value)


def _js_ignores(text: str) -> list[str]:
    """The literal globs of a flat config's ``ignores`` arrays and ``globalIgnores`` calls (not the
    arguments of a call inside them: ``...require('neostandard').resolveIgnoresFromGitignore()``)."""
    out: list[str] = []
    for m in _IGNORES.finditer(text):
        items = m.group(1)
        while re.search(r"\([^()]*\)", items):
            items = re.sub(r"\([^()]*\)", "", items)
        out += [a or b for a, b in _JS_STRING.findall(items) if a or b]
    return out


def _eslint_flat(path: str, text: str) -> _Preset | None:
    """neostandard called by an ESLint flat config (``noStyle: true`` adds no style rules; ``ts:
    true`` lints TypeScript too). The file is code: only the call's literal options are read, and
    a rule of ours it sets by name is the repository's own, whose value is not read."""
    m = _NEOSTANDARD_CALL.search(text)
    if m is None:
        return None
    arguments = _call_arguments(text, m.end())
    if _js_option(arguments, "noStyle") is True:
        return None
    ts = _js_option(arguments, "ts") is True
    where = f"{posixpath.basename(path)} neostandard({'{ts: true}' if ts else ''})"
    own = frozenset(m.group(1) for m in _RULE_KEY.finditer(text))
    languages = ("javascript", "typescript") if ts else _JS_ONLY
    return _Preset("neostandard", "eslint", path, where, languages, own, ignores=_js_ignores(text))


def _xo_options(path: str, text: str) -> tuple[dict[str, Any], frozenset[str]]:
    """xo's options from its own file (JSON, or a JavaScript module read for its literal options)
    and the rules of ours that file sets itself."""
    if posixpath.basename(path) in (".xo-config", ".xo-config.json"):
        doc = _json_or_yaml(text)
        return (doc, _own_rule_names(doc.get("rules"))) if isinstance(doc, dict) else ({}, frozenset())
    options: dict[str, Any] = {}
    for key in ("space", "prettier"):
        value = _js_option(text, key)
        if value is not None:
            options[key] = value
    ignores = _js_ignores(text)
    if ignores:
        options["ignores"] = ignores
    return options, frozenset(m.group(1) for m in _RULE_KEY.finditer(text))


def _xo_width(space: Any) -> int | None:
    """xo's ``space`` option: true is 2 spaces, a number (or numeric string) that many; else tabs."""
    if space is True or space == "true":
        return 2
    width = _int(space)
    return width if width and width > 0 else None


# --- xo's unicorn/prevent-abbreviations: the short forms its linter reports -----------------------

VOCABULARY = "vocabulary.term"
# The rule's names: eslint-plugin-unicorn renamed it (eslint-config-xo 0.54, xo 4).
ABBREVIATION_RULES = ("unicorn/prevent-abbreviations", "unicorn/name-replacements")
# xo's own options for it (xo's config/plugins.js from 0.28, eslint-config-xo's plugins-rules.js
# from xo 1): no file names, no imported names, and in place of unicorn's defaults (until 0.57 and
# again from 1.0; 0.57-0.60 add the defaults, which hold every entry below) this table. The rule
# reports variables, functions, classes and parameters, not properties (``checkProperties``).
# Entries unicorn's defaults also hold: what a repository's own options keep unless they say
# ``extendDefaultReplacements: false``.
_UNICORN_REPLACEMENTS: dict[str, tuple[str, ...]] = {
    "arr": ("array",),
    "e": ("error", "event"),
    "el": ("element",),
    "elem": ("element",),
    "len": ("length",),
    "msg": ("message",),
    "num": ("number",),
    "obj": ("object",),
    "opts": ("options",),
    "param": ("parameter",),
    "params": ("parameters",),
    "prev": ("previous",),
    "req": ("request",),
    "res": ("response", "result"),
    "ret": ("returnValue",),
    "str": ("string",),
    "temp": ("temporary",),
    "tmp": ("temporary",),
    "val": ("value",),
    "err": ("error",),  # from xo 0.37
}
# xo's own entries: a reversal (``application`` -> ``app``) and, from 0.37, the terms replaced for
# the words they carry (``allowList`` / ``denyList`` until 0.47, ``include`` / ``exclude`` since).
_XO_REPLACEMENTS: dict[str, tuple[str, ...]] = {
    "application": ("app",),
    "applications": ("apps",),
    "whitelist": ("include",),
    "blacklist": ("exclude",),
    "master": ("main",),
    "slave": ("secondary",),
}
_XO_SINCE_0_37 = frozenset({"err", "whitelist", "blacklist", "master", "slave"})


def _xo_version(doc: Mapping[str, Any]) -> tuple[int, int] | None:
    """The xo release line package.json asks for (``"^0.54.2"`` -> (0, 54)); None: not stated."""
    for key in ("devDependencies", "dependencies"):
        deps = doc.get(key)
        spec = deps.get("xo") if isinstance(deps, dict) else None
        m = re.search(r"(\d+)(?:\.(\d+))?", spec) if isinstance(spec, str) else None
        if m is not None:
            return int(m.group(1)), int(m.group(2) or 0)
    return None


def _xo_table(version: tuple[int, int] | None) -> dict[str, tuple[str, ...]] | None:
    """xo's replacements at ``version``; None where xo turned the rule off (before 0.28) or the
    release is not stated: chalk's `"xo": "*"` installed the xo of its day (0.18 in 2017, no such
    rule), and the names it then passed were judged 6 unfair."""
    if version is None or version < (0, 28):
        return None
    table = {**_UNICORN_REPLACEMENTS, **_XO_REPLACEMENTS}
    if version is not None and version < (0, 37):
        return {k: v for k, v in table.items() if k not in _XO_SINCE_0_37}
    if version is not None and version < (0, 47):
        table.update(whitelist=("allowList",), blacklist=("denyList",))
    return table


def _rule_entry(value: Any) -> tuple[str, dict[str, Any] | None]:
    """An ESLint rule's level (``off``, ``warn``, ``error``) and its options object, if given."""
    entry = list(value) if isinstance(value, list) else [value]
    level = entry[0] if entry else "off"
    level = {0: "off", 1: "warn", 2: "error"}.get(level, level) if isinstance(level, int) else str(level).lower()
    options = next((a for a in entry[1:] if isinstance(a, dict)), None)
    return str(level), options


def _own_table(options: Mapping[str, Any]) -> tuple[dict[str, tuple[str, ...]], list[str]] | None:
    """The replacements of the repository's own options for the rule (they replace xo's: ESLint
    does not merge a rule's options), and the short forms they allow; None: variables unchecked."""
    if options.get("checkVariables") is False:
        return None
    extend = options.get("extendDefaultReplacements", True) is not False
    table = dict(_UNICORN_REPLACEMENTS) if extend else {}
    allowed: list[str] = []
    own = options.get("replacements")
    for short, value in own.items() if isinstance(own, dict) else ():
        words = dict.fromkeys(table.get(short, ()), True)
        if isinstance(value, dict):
            words.update({str(w): bool(on) for w, on in value.items()})
        elif value is not True:
            words = {}
        kept = tuple(sorted(w for w, on in words.items() if on))
        if kept:
            table[short] = kept
        else:
            table.pop(short, None)
            allowed.append(short)
    return table, allowed


def _xo_abbreviations(
    options: Mapping[str, Any], version: tuple[int, int] | None, js_text: str | None
) -> tuple[str, tuple[tuple[str, str], ...], list[tuple[str, tuple[str, ...]]]] | None:
    """The rule xo runs on names (its name, the declared convention's params) and the globs whose
    ``overrides`` turn it off or configure it otherwise; None where it does not report (xo before
    0.28, the repository's ``rules`` turning it off or down to a warning, or a JavaScript config,
    code not evaluated, naming it)."""
    table = _xo_table(version)
    if table is None or (js_text is not None and any(r in js_text for r in ABBREVIATION_RULES)):
        return None
    name = ABBREVIATION_RULES[1] if version is not None and version >= (4, 0) else ABBREVIATION_RULES[0]
    allowed: list[str] = []
    names: list[str] = []
    rules = options.get("rules")
    for key in ABBREVIATION_RULES:
        if not isinstance(rules, dict) or key not in rules:
            continue
        level, own = _rule_entry(rules[key])
        if level != "error":
            return None  # off, or a warning xo prints without failing the run
        if own is not None:
            mine = _own_table(own)
            if mine is None:
                return None
            table, allowed = mine
            allow = own.get("allowList", own.get("whitelist"))
            names = sorted(str(n) for n, on in allow.items() if on) if isinstance(allow, dict) else []
        name = key
    exempt: list[tuple[str, tuple[str, ...]]] = []
    overrides = options.get("overrides")
    for override in overrides if isinstance(overrides, list) else ():
        if not isinstance(override, dict) or not isinstance(override.get("rules"), dict):
            continue
        if any(key in override["rules"] for key in ABBREVIATION_RULES):
            # Off for those files (node-fetch's tests), or other options there: not xo's table.
            exempt += [(g, (VOCABULARY,)) for g in _globs(override.get("files"))]
    params = (
        ("eslint_rule", name),
        ("replacements", "\n".join(f"{short} {' '.join(words)}" for short, words in sorted(table.items()))),
        ("allowed", "\n".join(sorted(allowed))),
        ("allow_names", "\n".join(names)),
    )
    return name, params, exempt


def _cli_preset(tool: str, package: str, doc: Mapping[str, Any], xo_file: tuple[str, str] | None) -> _Preset:
    """standard or xo run by a package.json script, with their options there (or in xo's own file,
    which xo reads instead): standard's ``ignore``; xo's ``space``, ``rules`` and ``ignores``."""
    options = doc.get(tool)
    options = options if isinstance(options, dict) else {}
    path, source = package, f'package.json "{tool}"'
    own_rules = _own_rule_names(options.get("rules"))
    js_text = None
    if tool == "xo" and xo_file is not None:
        path, text = xo_file
        source = posixpath.basename(path)
        options, own_rules = _xo_options(path, text)
        js_text = None if source in (".xo-config", ".xo-config.json") else text
    own = _eslint(path, options, f"{source} ") if tool == "xo" else []
    ignores = _globs(options.get("ignores" if tool == "xo" else "ignore"))
    preset = _Preset(tool, tool, path, "", JS if tool == "xo" else _JS_ONLY, own_rules, own, ignores=ignores)
    if tool == "xo" and "space" in options:
        preset.width = _xo_width(options["space"]) or 0  # 0: stated false, tabs as by default
        preset.where = f", {source} space = {json.dumps(options['space'])}"
    if tool == "xo":
        names = _xo_abbreviations(options, _xo_version(doc), js_text)
        if names is not None:
            preset.names, preset.exempt = names[:2], names[2]
    return preset


def _preset_settings(p: _Preset, run: _ScriptRun) -> ToolSettings:
    """The preset's settings, for the paths its run lints, but where its own rules say otherwise."""
    t = ToolSettings("eslint" if p.runner == "eslint" else p.preset, p.path, LINTER, p.languages)
    style = _PRESET_STYLES[p.preset]
    if p.width is not None:
        style = tuple(r for r in style if r[0] != "indent") + (_spaces(p.width) if p.width else _TABS)
    named = p.where if p.runner == "eslint" else run.evidence + p.where
    ran = f", run by {run.evidence}" if p.runner == "eslint" else ""
    for eslint_rule, rule, choice, what in style:
        if eslint_rule in p.own_rules:
            continue
        evidence = f"{named}{ran} ({p.preset}: {what})"
        extra = ((SKIPS_STRING_LINES, "1"),) if rule == LENGTH else ()  # airbnb's max-len ignores them
        t.settings.append(Setting(rule, choice, evidence, code_only=rule == LENGTH, params=extra))
    if p.names is not None:
        name, params = p.names
        t.settings.append(Setting(VOCABULARY, name, f"{named}{ran} ({p.preset}: {name})", params=params))
    for own in p.own:
        t.settings += own.settings
    t.exempt = [(g, tuple(sorted({s.rule for s in t.settings}))) for g in p.ignores] + p.exempt
    return t


def _js_presets(out: ToolConfigs, runs: _Runs) -> None:
    """Declare each preset its linter runs: a package.json script running standard or xo, an
    ESLint config naming a preset with eslint run by a script of its package (or one above)."""
    presets = list(runs.presets)
    for directory, scripts in sorted(runs.scripts.items()):
        for tool in ("standard", "xo"):
            if any(r.tool == tool for r in scripts):
                presets.append(
                    _cli_preset(tool, scripts[0].path, runs.packages[directory], runs.xo_files.get(directory))
                )
    for p in presets:
        mine = _nearest_runs(runs, posixpath.dirname(p.path), p.runner)
        if not mine:
            out.tools += p.own  # named, not run: its own rules stand as any ESLint config's do
            out.notes.append(f"{p.path}: {p.preset} is not run by a package.json script; its style was not declared")
            continue
        first = min(mine, key=lambda r: _USUAL_SCRIPTS.index(r.script) if r.script in _USUAL_SCRIPTS else 9)
        t = _preset_settings(p, first)
        scopes = [r.scope() for r in mine]
        t.scope = tuple(sorted({x for s in scopes for x in s})) if all(scopes) else ()
        out.tools.append(t)


def _nearest_runs(runs: _Runs, directory: str, tool: str) -> list[_ScriptRun]:
    """The runs of ``tool`` by the scripts of the nearest package.json at or above ``directory`` that has any."""
    for d in (directory, *_parents(directory)):
        mine = [r for r in runs.scripts.get(d, []) if r.tool == tool]
        if mine:
            return mine
    return []
