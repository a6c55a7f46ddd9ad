"""The learned model: conventions with their evidence, and how it is stored.

A :class:`Convention` says what a repository does (``choice``) in a ``scope``, how many
observations it rests on (``count``), how many agree (``support``, ``share``), and whether it is
strong enough to enforce (``level``). The :class:`ConventionModel` bundles the conventions with the
few lookup tables the checker needs (vocabulary, module map, domains) and encodes with msgspec
msgpack so the analyzer can keep it in one PostgreSQL ``bytea`` column and load it in milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from services.analyzer.engine.config import RepoConfig, path_glob
from services.analyzer.engine.thresholds import DEFAULT_THRESHOLDS, STRICT, Thresholds, wilson_lower

# Goes up whenever learning changes what a model holds or means; models an older engine learned
# are relearned in the background when the analyzer starts (services/analyzer/upgrade.py).
# 2: new-library rule, acronyms, directories silence only when significantly less consistent,
#    console.log as the JS/TS print idiom, annotations skip modules that turn type checking off.
# 3: conventions declared in the tools' configuration files (source "declared"), no line length
#    for Markdown/YAML/JSON from a repository-wide setting.
# 4: facts in source order, overrides of foreign base classes not counted as names, a same-choice
#    directory with a habit of its own no longer demotes the repository, own package and
#    standard-library modules not competing libraries, re-raising handlers not counted.
# 5: cochange.partner loose only.
# 6: a formatter's declared line length carries the limit kept where strings and comments run past it.
#    Test coverage counts public library modules only; test naming counts files that hold tests.
# 7: line length learned from the lines the check judges (no URL lines, no pragma comments); a
#    bare `except:` raising another exception is bare.
# 8: strict needs the Wilson lower bound of a flawless record at the bar's count (thresholds.py);
#    names dictated from outside, loop variables, methods pooled with functions, overrides and
#    stubs (base_methods, stubs), one finding per handler.
# 9: private top-level modules and standard-library modules newer than 3.11 bring in no library
#    (dependencies.library.new).
# 10: methods of classes whose imported base has none to override (Generic, Protocol, ABC, Enum)
#    count for the method naming habit.
# 11: a JavaScript/TypeScript `const` not in UPPER_CASE is cased as the repository's variables.
# 12: a file importing a library the project declares brings in nothing new (dependencies.library.new).
# 13: a module of the repository reached through sys.path (tasks/capabilities.py) is no library.
# 14: a manifest under a test directory (a fixture package) declares nothing for the project.
# 15: a package.json's own package name is declared (a package importing itself adds nothing).
# 16: dependencies.library.new learns on the files it judges (not docs, scripts, root automation,
#     packages the tests build); an import an `except ImportError` guards brings in nothing.
# 17: the names of a `.d.ts` declaration file mirror what it declares (naming.dictated), as a `.pyi`'s.
# 18: a package below the root (its own package.json or pyproject.toml) learns its habits from its
#     own files and is not held to the root's learned ones (packages).
# 19: a directory's habit is kept only when it is surely apart from the scope around it; a naming
#     style needs as many names that show it as the loose bar counts; unittest test methods teach no
#     test-function case; a file holding no tests teaches no test placement; JS constructors and
#     @private symbols are not documented API.
# 20: a Python module binds an import under its `as` name (facts 15): a function named like what it
#     imports under another name is the module's own API, not a fallback.
# 21: the learned quote habit held loose (earned.py); how the tools are run read beside their
#     settings (darker, a linter's invoked paths, .prettierignore, a format table that only preserves).
# 22: item 5 applied to every rule with a judged record (earned.py: library, naming, idioms,
#     annotations, import order held loose); ruff's E501 limit read from lint.pycodestyle.
# 23: the engine's own record decides what is held (earned.py: structure.tests.placement held,
#     naming.case.variable strict); tests of an examples/demo tree are the example's own; a linter
#     left behind by a move to ruff sets no limit, black keeps a type-ignore line whole.
# 24: files the project's linters exclude (ESLint/JSHint ignore files, ruff/flake8 exclude, isort
#     and codespell skip, pylint ignore) neither learned from nor reviewed (``excluded``).
# 25: the modules a project runs as commands (``commands``: console scripts, local pre-commit hooks,
#     a command package beside a console script's module) print their output.
# 26: the libraries declared per directory (``declared_scopes``: setup.py, requirements files,
#     fixture manifests); ruff.toml read; idioms.print, dependencies.library.new and the naming
#     case rules strict again (earned.py), a capitalised or ALL_CAPS name loose.
# 27: ``excluded`` only from the entries of JS linters' ignore files and codespell's skip that name
#     files (a Python linter's exclude, or a directory listed, leaves the files their habits).
# 28: annotations and docstrings a repository's tools declare (mypy's disallow_untyped_defs or
#     strict, ruff's ANN and D rules) are declared conventions, strict, of their own family.
# 29: black and ruff format run by a pre-commit hook or a tox command declare their settings
#     (their defaults without a configuration table; the run's arguments win).
# 30: a declared import order carries the sorter's first party (``params.first_party``,
#     ``params.source_roots``: isort known_first_party / src_paths, ruff known-first-party / src).
# 31: mypy, pydocstyle and ruff's annotation and docstring rules declare only where the project is
#     seen to run them (hooks, tox, noxfile/Makefile/justfile, CI workflows); ruff's lint rules none
#     where only ruff format runs.
# 32: JavaScript style presets run by a package.json script declare their style (standard, xo,
#     neostandard in eslint.config.js, eslint-config-standard/airbnb(-base) in an ESLint `extends`).
# 33: an EditorConfig key turned off for some files (`off`, `unset`, a boolean's `false`) keeps the
#     declared value from them: a directory of such files gets its learned habit back, scoped to it;
#     a lone file is exempt (``params.exempt``).
# 34: xo run by a script declares `vocabulary.term` (its `unicorn/prevent-abbreviations` table in
#     ``params.replacements``), unless its options turn the rule off; `overrides` naming the rule exempt their files.
# 35: mypy's inverse `allow_untyped_defs` turns the declared annotations off; a black hook beside
#     ruff format's explicit other quote-style declares no quotes.
# 36: a formatter's setting read from a pre-commit hook alone (no table) declares only where the
#     code keeps it (``declared._not_kept``).
# 37: an ESLint `extends` preset holds TypeScript only where ESLint is told of it; xo's abbreviation
#     table only where package.json states xo's release.
# 38: ESLint's max-len with ignoreStrings (airbnb's) passes a line holding a string
#     (``params.skips_string_lines``).
# 39: a declared import sorter without source roots uses its defaults (the root and `src/`).
MODEL_SCHEMA_VERSION = 39

REPOSITORY = "repository"
LANGUAGE = "language"
DOMAIN = "domain"
DIRECTORY = "directory"
SYMBOL_KIND = "symbol_kind"
FILE = "file"
SCOPE_KINDS: tuple[str, ...] = (REPOSITORY, LANGUAGE, DOMAIN, DIRECTORY, SYMBOL_KIND, FILE)

Param = str | int | float | bool


class Scope(msgspec.Struct, frozen=True, array_like=True):
    kind: str
    value: str = ""

    def describe(self) -> str:
        if self.kind == REPOSITORY or not self.value:
            return "in this repository"
        if self.kind == LANGUAGE:
            return f"in {self.value} files"
        if self.kind == DIRECTORY:
            return f"in `{self.value}/`"
        return f"in {self.kind} `{self.value}`"


class Convention(msgspec.Struct, omit_defaults=True):
    id: str  # rule@scope(+language): unique within a model, stable across relearning
    family: str
    rule: str
    scope: Scope
    choice: str
    share: float
    count: int  # observations it rests on
    support: int  # observations that agree with the choice
    language: str = ""
    level: str = "off"  # strict | loose | off, from the thresholds in force when learned
    confidence: float = 0.0  # Wilson lower bound of share at this count
    description: str = ""  # "412 of 430 functions in `src/api/` (96%) are snake_case"
    examples: tuple[str, ...] = ()
    alternatives: dict[str, int] = {}
    params: dict[str, Param] = {}
    source: str = "learned"  # learned | declared (tools' config files) | config | reports

    @property
    def enforced(self) -> bool:
        return self.level == STRICT


class ConventionModel(msgspec.Struct, dict=True, omit_defaults=True):
    """Everything the checker needs about one repository at one commit.

    ``dict=True`` lets the checker attach its lookup index to the instance at first use without
    that index ever being serialized.
    """

    conventions: list[Convention]
    files: int = 0
    repository: str = ""
    commit: str = ""
    vocabulary: dict[str, int] = {}  # word -> distinct names using it
    modules: dict[str, str] = {}  # dotted module -> path, to resolve imports of a file under review
    domains: dict[str, str] = {}  # directory -> domain
    acronyms: tuple[str, ...] = ()  # words written all in capitals inside camel/Pascal names: "http"
    # Public method names of the classes other classes of the repository derive from: a method of
    # the same name in a subclass overrides a documented one (documentation.overrides).
    base_methods: dict[str, tuple[str, ...]] = {}
    stubs: tuple[str, ...] = ()  # paths of ``.pyi`` files: their module's types live there
    # Libraries the project declares as dependencies (toolconfig.library_key of each): never a
    # new dependency nor a competitor of the library settled for its job (anyio's optional trio).
    declared_libraries: tuple[str, ...] = ()
    # Directory -> libraries a manifest below the root declares for the files under it
    # (ToolConfigs.scoped_libraries: a docker test app's requirements.txt, a fixture's pyproject).
    declared_scopes: dict[str, tuple[str, ...]] = {}
    # Directories of the packages below the root (toolconfig.package_root): their files are judged
    # by what their own package taught and by what a tool declares for them, not by the habits
    # learned from the root package's files.
    packages: tuple[str, ...] = ()
    # Globs (from the root) of the files the project's own linters leave alone (ToolConfigs.excluded):
    # not the project's code for style, as if `.codereview.yml` ignored them.
    excluded: tuple[str, ...] = ()
    # Paths of the modules the project runs as commands (ToolConfigs.commands resolved: its console
    # scripts' modules, the files its pre-commit hooks run, the modules of a ``commands``/``cli``
    # package beside a console script): their prints are the command's output.
    commands: tuple[str, ...] = ()
    config: RepoConfig = msgspec.field(default_factory=RepoConfig)
    thresholds: Thresholds = DEFAULT_THRESHOLDS
    schema: int = MODEL_SCHEMA_VERSION

    def ignores(self, path: str) -> bool:
        """Whether ``path`` is neither learned from nor reviewed: ``.codereview.yml`` ignores it or
        the project's linters exclude it."""
        return self.config.is_ignored(path) or excluded(path, self.excluded)


def excluded(path: str, globs: Sequence[str]) -> bool:
    return any(path_glob(g).match(path) for g in globs)


def wilson_upper(support: int, count: int) -> float:
    """Upper bound of the same interval."""
    return 1.0 - wilson_lower(count - support, count)


def make(
    family: str,
    rule: str,
    scope: Scope,
    choice: str,
    support: int,
    count: int,
    thresholds: Thresholds,
    *,
    language: str = "",
    subject: str = "",
    predicate: str = "",
    examples: tuple[str, ...] | list[str] = (),
    alternatives: dict[str, int] | None = None,
    params: dict[str, Param] | None = None,
    key: str = "",
) -> Convention:
    share = support / count if count else 0.0
    lang = f"[{language}]" if language else ""
    if scope.kind == LANGUAGE:
        description = f"{support} of {count} {scope.value} {subject} ({share:.0%}) {predicate}"
    else:
        description = f"{support} of {count} {subject} {scope.describe()} ({share:.0%}) {predicate}"
    return Convention(
        id=f"{rule}@{scope.kind}:{scope.value}{lang}" + (f"#{key}" if key else ""),
        family=family,
        rule=rule,
        scope=scope,
        choice=choice,
        share=round(share, 4),
        count=count,
        support=support,
        language=language,
        level=thresholds.level(rule, share, count, support),
        confidence=round(wilson_lower(support, count), 4),
        description=description.strip(),
        examples=tuple(examples)[:5],
        alternatives=dict(alternatives or {}),
        params=dict(params or {}),
    )


def from_counts(
    family: str,
    rule: str,
    scope: Scope,
    counts: Mapping[str, int],
    thresholds: Thresholds,
    *,
    language: str,
    subject: str,
    predicate: Callable[[str], str],
    examples: Callable[[str], Sequence[str]] | None = None,
) -> Convention | None:
    """The tally's most common choice (ties to the greater name, so the outcome never depends on
    the order things were counted in) as a convention, the other choices as its alternatives."""
    if not counts:
        return None
    choice = max(counts, key=lambda k: (counts[k], k))
    return make(
        family,
        rule,
        scope,
        choice,
        counts[choice],
        sum(counts.values()),
        thresholds,
        language=language,
        subject=subject,
        predicate=predicate(choice),
        examples=list(examples(choice)) if examples is not None else (),
        alternatives={k: n for k, n in counts.items() if k != choice},
    )


def relevel(model: ConventionModel, thresholds: Thresholds) -> ConventionModel:
    """The same model judged by other thresholds (used by the benchmark and by config edits)."""
    convs = [
        c
        if c.source != "learned"
        else msgspec.structs.replace(c, level=thresholds.level(c.rule, c.share, c.count, c.support))
        for c in model.conventions
    ]
    return msgspec.structs.replace(model, conventions=convs, thresholds=thresholds)


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(ConventionModel)
_json_encoder = msgspec.json.Encoder()


def encode_model(model: ConventionModel) -> bytes:
    return _encoder.encode(model)


def decode_model(data: bytes) -> ConventionModel:
    return _decoder.decode(data)


def to_builtins(obj: Any) -> Any:
    """JSON-ready form of a convention, model or finding (for ``review_context`` and the API)."""
    return msgspec.to_builtins(obj)


def model_to_json(model: ConventionModel) -> bytes:
    return _json_encoder.encode(model)
