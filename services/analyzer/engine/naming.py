"""Naming family: the case style of each kind of name, per language and where a directory differs."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterator, Sequence

from services.analyzer.engine.conventions import Convention, Scope, make
from services.analyzer.engine.file_check import FileCheck
from services.analyzer.engine.findings import WARNING
from services.analyzer.engine.learn_inputs import (
    Build,
    FileTallies,
    LearnInput,
    Tally,
    blocks_of,
    majority,
    merge,
    scoped_conventions,
)
from services.analyzer.engine.thresholds import LOOSE
from services.source.facts import FileFacts
from services.source.naming import (
    CAMEL,
    DEFINITE_STYLES,
    DUNDER,
    MIXED,
    NONE,
    PASCAL,
    UPPER,
    UPPER_FLAT,
    case_style,
    compatible,
    convert,
    raw_words,
)

FAMILY = "naming"
ROLES: tuple[str, ...] = (
    "function",
    "method",
    "class",
    "constant",
    "variable",
    "parameter",
    "attribute",
    "field",
    "test_function",
)
FILE_ROLE = "file"
_CLASS_KINDS = frozenset({"class", "interface", "enum"})
_PLURAL = {"class": "classes", "test_function": "test functions", "file": "file names"}

# Names dictated by a framework or dispatched by name ("visit_FunctionDef", "do_GET", "setUp"):
# their case is not the author's choice, so they neither teach nor break a convention.
_DISPATCH = re.compile(r"^_*[a-z][a-z0-9]*_[A-Z]")
_HOOKS = frozenset(
    {
        "setUp",
        "tearDown",
        "setUpClass",
        "tearDownClass",
        "setUpModule",
        "tearDownModule",
        "asyncSetUp",
        "asyncTearDown",
        "setUpTestData",
        "maxDiff",
        "longMessage",
        "componentDidMount",
        "componentWillUnmount",
        "shouldComponentUpdate",
        "getDerivedStateFromProps",
        "ServeHTTP",
        "String",
        "Error",
    }
)


def rule_for(role: str) -> str:
    return f"naming.case.{role}"


# Type variables are named by PEP 484's variance suffixes (``_ValueT_co``, ``KT_contra``).
_TYPE_VARIABLE = re.compile(r"^_*[A-Z][A-Za-z0-9]*_(?:co|contra)$")
# Bindings of Python's C API keep its names (``Py_buffer``, ``PyObject_GetBuffer``).
_C_API = re.compile(r"^_*Py[A-Za-z]*_[A-Za-z]")
# A class named in lower case on purpose: it is used as a function or decorator, the way
# Python's own ``property``, ``cached_property``, ``partial`` and ``defaultdict`` are classes.
_FUNCTION_LIKE_CLASS = re.compile(r"^_*[a-z][a-z0-9]*(?:_(?:property|method|classmethod|staticmethod))?$")
# Locale files are named by their language tag (``pt-BR.ts``, ``zh_Hant.py``), not by the author.
_LOCALE_FILE = re.compile(r"^[a-z]{2,3}(?:[-_](?:[A-Z]{2}|[A-Z][a-z]{3}|\d{3}))+$")
JS_LIKE = frozenset({"javascript", "typescript", "tsx", "jsx"})


def dictated(f: FileFacts) -> frozenset[tuple[str, str]]:
    """(role, name) pairs whose case the author did not choose: the names of a ``.pyi`` stub or a
    ``.d.ts`` declaration file (they mirror the module or API they declare: axios's
    ``responseEncoding``), classes defined inside a function (made on the fly, often named after
    what they stand in for), Python iterator classes (named like functions), and JavaScript
    constructors (a PascalCase function is how the language spells a class before ``class``; h3's
    one-letter ``const C = function () {}`` given a prototype and used with ``new``)."""
    if f.path.endswith((".pyi", ".d.ts", ".d.mts", ".d.cts")):
        return frozenset((i.role, i.name) for i in f.identifiers)
    functions = {s.name for s in f.symbols if s.kind in ("function", "method")}
    out = {("class", s.name) for s in f.symbols if s.kind == "class" and s.parent in functions}
    if f.language == "python":
        # An iterator class is called like the functions it stands beside, and is named like
        # them, the way itertools' `chain`, `islice` and `tee` are classes (more-itertools'
        # `peekable`, `seekable`, `_concurrent_tee`, `sized_iterator`).
        out.update(("class", s.parent) for s in f.symbols if s.kind == "method" and s.name == "__next__")
    if f.language in JS_LIKE:
        out.update(
            ("function", i.name) for i in f.identifiers if i.role == "function" and case_style(i.name) in _CLASS_LIKE
        )
    if f.language == "python":
        # A name the module imports under its own name and binds again is that import's name: the
        # fallback where the import fails (tqdm's ``except ImportError: _Rolling_and_Expanding =
        # None`` after importing it from pandas, or a ``def`` standing in for the imported function)
        # must keep it for the code that uses it. An alias (``import x as y``) is the author's.
        imported = {
            name
            for imp in f.imports
            for k, name in enumerate(imp.names)
            if name and name != "*" and (not imp.aliases or imp.aliases[k] == name)
        }
        out.update((i.role, i.name) for i in f.identifiers if i.name in imported and i.role in _REBOUND_ROLES)
    return frozenset(out)


_REBOUND_ROLES = frozenset({"function", "class", "constant", "variable"})


# Imported bases that give a class a kind (generic, protocol, abstract, record, enumeration) but no
# methods to override: the methods of ``class _Validator(Generic[T])`` or ``class Validator(Protocol)``
# are named by the repository's authors (packaging's ``_process_version``, jsonschema's
# ``iter_errors``), not by an interface they implement.
_NOTHING_TO_OVERRIDE = frozenset(
    {"Generic", "Protocol", "ABC", "NamedTuple", "TypedDict", "Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"}
)


def binding_role(language: str, role: str, name: str) -> str:
    """The role a name's case is judged in. A JavaScript or TypeScript ``const`` declares a binding,
    not a constant: ``UPPER_CASE`` marks the constants, and any other ``const`` is cased as the
    repository cases its variables (zustand's 7 camelCase module ``const`` names are thin evidence
    alone, beside 281 camelCase variables they are one habit, which ``create_with_equality_fn``
    breaks). Python's extractor makes a name a constant when it is UPPER_CASE or annotated
    ``Final``; a ``Final`` name in lower case says the name is never rebound, not that it holds a
    constant value (filelock's ``_registry: Final = _ThreadLocalRegistry()``, a lock, a function
    alias), and is cased as the repository cases its variables."""
    if role == "constant" and language in JS_LIKE | {"python"} and case_style(name) not in (UPPER, UPPER_FLAT):
        return "variable"
    return role


def imposed_methods(f: FileFacts) -> frozenset[str]:
    """Methods of classes that derive from a class the repository does not define (imported from
    the standard library or a third-party package, directly or through a class of this file):
    an override of ``TestCase.setUp``, ``NodeVisitor.visit_FunctionDef``, ``QWidget.paintEvent``
    or ``ContentHandler.startElement`` is named by that interface, not by the author, so its case
    neither teaches nor breaks the repository's convention."""
    classes = {s.name: s.bases for s in f.symbols if s.bases and s.kind in _CLASS_KINDS}
    if not classes:
        return frozenset()
    foreign: set[str] = set()
    for imp in f.imports:
        if imp.group == "local" or imp.is_relative or imp.resolved_path:
            continue
        if imp.bound == ("",):
            foreign.add(imp.module.split(".", 1)[0])
        else:  # the names the file writes: `from unittest import TestCase as TC` / `class T(TC)`
            foreign.update(n for n in imp.bound if n and n != "*")
    external: dict[str, bool] = {}

    def roots(name: str) -> Iterator[str]:
        for base in classes[name]:
            dotted = base.split("[", 1)[0].split("(", 1)[0].strip()
            if dotted.rsplit(".", 1)[-1] not in _NOTHING_TO_OVERRIDE:
                yield dotted.split(".", 1)[0]

    def derives(name: str, depth: int = 0) -> bool:
        if name not in external:
            external[name] = False  # cycles and deep chains stop here
            if depth < 8:
                external[name] = any(r in foreign or (r in classes and derives(r, depth + 1)) for r in roots(name))
        return external[name]

    return frozenset(s.name for s in f.symbols if s.kind == "method" and s.parent in classes and derives(s.parent))


def _imposed(f: FileFacts) -> set[tuple[str, str]]:
    """(role, name) of the methods ``imposed_methods`` finds, test methods among them: a
    ``unittest.TestCase`` subclass's ``testYearOnly`` follows the camelCase API it inherits
    (``setUp``, ``assertEqual``), a habit of that framework's classes that says nothing about how
    module-level test functions are named (dateutil's pytest-style ``test_year_only``)."""
    names = imposed_methods(f)
    return {("method", name) for name in names} | {("test_function", name) for name in names}


# In a value position a PascalCase name denotes a class or type (a type alias, a constructor
# pulled out of a module, a class passed as an argument) in Python, JavaScript and TypeScript
# alike: an idiom of the language rather than a departure from the repository's style.
VALUE_ROLES = frozenset({"variable", "constant", "parameter", "attribute", "field"})
_CLASS_LIKE = frozenset({PASCAL, UPPER_FLAT})


def _judged(name: str, role: str = "") -> str | None:
    """The style a name shows, or None when the name says nothing about a convention."""
    if name in _HOOKS or _DISPATCH.match(name) or _TYPE_VARIABLE.match(name) or _C_API.match(name):
        return None
    if role == "parameter" and name.startswith("__"):
        return None  # ``__self``: the positional-only spelling before PEP 570, not a style
    if role == "class" and _FUNCTION_LIKE_CLASS.match(name):
        return None
    style = case_style(name)
    if style in (DUNDER, NONE):
        return None
    if role in VALUE_ROLES and (style in _CLASS_LIKE or (style == UPPER and role != "constant")):
        return None  # UPPER_CASE in a function or class body is still a constant
    if style == MIXED and any(p.isupper() or p in _HOOKS for p in name.split("_")):
        # "HAS_IPv6", "_T_co": an acronym or a type variable bent the name, not a style;
        # "orig_setUpClass" (freezegun) holds the unittest hook it is named after.
        return None
    if style == MIXED and role == "test_function":
        # "test_quote_None", "test_returns_Attr": a test's name quotes the code it tests; Go's
        # "TestParse_WithFlags" is how `go test` names a case of a test.
        return None
    return style


def file_stem(path: str) -> str:
    base = posixpath.basename(path)
    return base.split(".", 1)[0] if not base.startswith(".") else ""


# The roles whose strict level needs a name that starts with a lowercase letter (after leading
# underscores). A capitalised or ALL_CAPS function, method or variable, or a capitalised class whose
# suffix leaves PascalCase, is a deliberate name often enough that maintainers reject the comment:
# a factory named like the class it stands for (``def RLock()``, a test's ``FakeEvent()``), a mode
# function doubling as a sentinel (``AUTO``, ``FILL``), a constant, a test-matrix hook (``D``), a
# version in a class name (``ProcessArgs3_9``). Those stay findings at the loose level; a
# lowercase-first name in the wrong case (``logLevel`` among snake_case names, a test class
# ``testStripTags`` among PascalCase ones) is a slip and stays strict.
_LOWER_FIRST_ROLES = frozenset({"function", "method", "variable", "class"})


def deliberate_capitals(role: str, name: str) -> bool:
    """Whether a name breaking the convention of ``role`` is capitalised, and so held loose."""
    return role in _LOWER_FIRST_ROLES and not name.lstrip("_")[:1].islower()


# A file breaking a naming convention this often, for at least half its names of that kind, gets
# one finding for the habit instead of one per name.
_FILE_HABIT_MIN = 3

# A property whose value is a bare name: `"update-high": scenario_update_high,` or `add: scenario_add`.
_PROPERTY = re.compile(
    r"""(?:^|[{,(])\s*(?P<q>["']?)(?P<key>[A-Za-z_$][\w$-]*)(?P=q)\s*:\s*(?P<name>[A-Za-z_$][\w$]*)\s*(?=[,}\n])""",
    re.MULTILINE,
)
_REGISTERED_ROLES = frozenset({"function", "variable", "constant"})


def spelled_by_keys(text: str) -> frozenset[str]:
    """Names a registry of the file spells from its keys: a family of at least ``_FILE_HABIT_MIN``
    names that are one affix joined to the key each is registered under (immer's profiling
    script registers ``scenario_update_high`` as ``"update-high"`` and ``scenario_mapNested`` as
    ``mapNested``). The keys are what a user types (command-line scenario names, routes, event
    names), and each name mirrors its key, so the keys' spelling sets the names' case, not the
    author's habit; ``convert`` would break the mirror (``scenarioUpdateHigh``). One or two such
    pairs (``get: get_value``) are no scheme, and stay judged."""
    if ":" not in text:
        return frozenset()
    families: dict[tuple[str, str], set[str]] = {}
    for m in _PROPERTY.finditer(text):
        key, name = m.group("key").replace("-", "_"), m.group("name")
        if name == key or len(name) <= len(key) + 1:
            continue
        if name.endswith("_" + key):
            families.setdefault(("prefix", name[: -len(key)]), set()).add(name)
        elif name.startswith(key + "_"):
            families.setdefault(("suffix", name[len(key) :]), set()).add(name)
    return frozenset(n for names in families.values() if len(names) >= _FILE_HABIT_MIN for n in names)


# Names kept per (language, style) to pick a convention's examples from its own scope.
_EXAMPLE_POOL = 400


def _in_scope(path: str, scope: Scope, inp: LearnInput) -> bool:
    if scope.kind == "directory":
        return path.startswith(scope.value + "/")
    if scope.kind == "domain":
        return inp.domains.get(path, "") == scope.value
    return True


def _scoped_examples(pool: list[tuple[str, str]], scope: Scope, inp: LearnInput) -> list[str]:
    out: list[str] = []
    for path, name in pool:
        if name not in out and _in_scope(path, scope, inp):
            out.append(name)
            if len(out) == 5:
                break
    return out


def _builder(role: str, inp: LearnInput, examples: dict[tuple[str, str], list[tuple[str, str]]]) -> Build:
    rule = rule_for(role)
    subject = _PLURAL.get(role, role + "s")

    def build(language: str, scope: Scope, counts: Counter[str]) -> Convention | None:
        choice = max(
            (s for s in counts if s in DEFINITE_STYLES),
            key=lambda s: (counts[s], s),
            default=None,
        )
        if choice is None:
            return None
        # A style is chosen by the names that show it: a one-word name (`text`, `source`) fits
        # snake_case and camelCase alike. Python-Markdown's tests/ wrote one two-word parameter,
        # `expectedPrefix` (an assertStartsWith helper shaped like unittest's API), beside 24
        # one-word ones: "25 of 25 camelCase" there rested on one name. Fewer names that show a
        # style than the loose bar counts say nothing of a habit, nor of a mix.
        if sum(n for s, n in counts.items() if s in DEFINITE_STYLES) < inp.thresholds.bar(rule).loose.min_count:
            return None
        total = sum(counts.values())
        support = sum(n for s, n in counts.items() if compatible(s, choice))
        return make(
            FAMILY,
            rule,
            scope,
            choice,
            support,
            total,
            inp.thresholds,
            language=language,
            subject=subject,
            predicate=f"are {choice}",
            examples=_scoped_examples(examples.get((language, choice), []), scope, inp),
            alternatives={s: n for s, n in counts.items() if not compatible(s, choice)},
        )

    return build


# One file's naming observations: its tallies by role, and (role, style, name) in the order observed.
Observed = tuple[FileTallies, list[tuple[str, str, str]]]


def observe(f: FileFacts, domain: str) -> Observed | None:
    """What one file teaches about naming (``learn`` adds the files' observations in order)."""
    if not f.language:
        return None
    tallies = FileTallies(f.language, f.path, domain)
    examples: list[tuple[str, str, str]] = []

    def note(role: str, name: str) -> None:
        style = _judged(name, role)
        if style is None:
            return
        tallies.add(role, style)
        examples.append((role, style, name))

    seen: set[tuple[str, str]] = _imposed(f) | dictated(f)
    for ident in f.identifiers:
        key = (ident.role, ident.name)
        if ident.role in ROLES and key not in seen:
            seen.add(key)
            note(binding_role(f.language, ident.role, ident.name), ident.name)
    stem = file_stem(f.path)
    if stem and not _LOCALE_FILE.match(stem) and len(raw_words(stem)) > 1:
        # A one-word file name (`application.js`) fits every style: it says nothing about
        # how the repository joins words in file names.
        note(FILE_ROLE, stem)
    return tallies, examples


def learn(inp: LearnInput, observed: Sequence[Observed | None] | None = None) -> list[Convention]:
    """``observed``: ``observe`` of each of ``inp.files``, when already known."""
    if observed is None:
        observed = [observe(f, inp.domains.get(f.path, "")) for f in inp.files]
    tallies = merge({}, (o[0] for o in observed if o is not None), blocks_of(observed))
    examples = _example_pools(observed)
    if "method" in tallies and "function" in tallies:
        tallies["method"] = _pooled(tallies["method"], tallies["function"])
    out: list[Convention] = []
    for role, tally in tallies.items():
        build = _builder(role, inp, examples.get(role, {}))
        out.extend(scoped_conventions(tally, build, inp, rule_for(role), with_domains=True))
    return out


Pools = dict[str, dict[tuple[str, str], list[tuple[str, str]]]]  # role -> (language, style) -> (path, name)


def _example_pools(observed: Sequence[Observed | None]) -> Pools:
    """The first ``_EXAMPLE_POOL`` names of each role, language and style, in the files' order
    (by runs of files kept from the last learn, when ``observed`` comes from ``learn_memo``)."""
    pools: Pools = {}

    def add(part: Pools) -> None:
        for role, by_style in part.items():
            into = pools.setdefault(role, {})
            for key, found in by_style.items():
                pool = into.setdefault(key, [])
                room = _EXAMPLE_POOL - len(pool)
                if room > 0:
                    pool.extend(found[:room])

    files = (o for o in observed if o is not None)
    blocks = blocks_of(observed)
    if blocks is None:
        add(_run_pools(list(files)))
    else:
        blocks.fold("examples", files, lambda o: o[0].path, _run_pools, add)
    return pools


def _run_pools(run: list[Observed]) -> Pools:
    pools: Pools = {}
    for ft, names in run:
        for role, style, name in names:
            pool = pools.setdefault(role, {}).setdefault((ft.language, style), [])
            if len(pool) < _EXAMPLE_POOL:
                pool.append((ft.path, name))
    return pools


def _pooled(methods: Tally, functions: Tally) -> Tally:
    """Methods judged together with functions in each language where both choose the same
    style: one habit of naming callables. Eleven methods are thin evidence alone, but beside 217
    snake_case functions they break the same habit (a language where the two differ, Go's
    exported methods or JavaScript's, keeps its methods apart)."""
    out = Tally()
    for lang, counts in methods.by_language.items():
        fun = functions.by_language.get(lang)
        same = fun is not None and majority(fun, DEFINITE_STYLES) == majority(counts, DEFINITE_STYLES)
        out.by_language[lang] = counts + fun if same and fun is not None else Counter(counts)
        for scoped, pooled, extra in (
            (methods.by_directory, out.by_directory, functions.by_directory),
            (methods.by_domain, out.by_domain, functions.by_domain),
        ):
            for key, c in scoped.items():
                if key[0] == lang:
                    pooled[key] = c + extra.get(key, Counter()) if same else Counter(c)
    return out


def learn_acronyms(inp: LearnInput) -> tuple[str, ...]:
    """Words the repository writes all in capitals inside camelCase and PascalCase names
    (``HTTPTransport``, ``parseURL``) more often than capitalized (``HttpTransport``), in at least
    two distinct names: a suggested rename spells them the same way."""
    upper: Counter[str] = Counter()
    title: Counter[str] = Counter()
    for name in {name for f in inp.files for name in camel_names(f)}:
        capitals, capitalized = name_words(name)
        upper.update(capitals)
        title.update(capitalized)
    return acronyms_from(upper, title)


def camel_names(f: FileFacts) -> frozenset[str]:
    """The file's distinct camelCase and PascalCase names (what ``learn_acronyms`` reads)."""
    return frozenset(i.name for i in f.identifiers if case_style(i.name) in (CAMEL, PASCAL))


def name_words(name: str) -> tuple[list[str], list[str]]:
    """The words of a camelCase or PascalCase name written all in capitals, and capitalized."""
    capitals: list[str] = []
    capitalized: list[str] = []
    for word in raw_words(name):
        if len(word) < 2 or not word[0].isalpha():
            continue
        if word.isupper():
            capitals.append(word.lower())
        elif word[0].isupper():
            capitalized.append(word.lower())
    return capitals, capitalized


def acronyms_from(upper: Counter[str], title: Counter[str]) -> tuple[str, ...]:
    """``upper``/``title``: word -> distinct names writing it in capitals / capitalized."""
    return tuple(sorted(w for w, n in upper.items() if n >= 2 and n > title[w]))


def acronyms_of(fc: FileCheck) -> frozenset[str]:
    cached: frozenset[str] | None = fc.index.extra.get("acronyms")
    if cached is None:
        cached = fc.index.extra["acronyms"] = frozenset(fc.index.model.acronyms)
    return cached


def check(fc: FileCheck) -> None:
    acronyms = acronyms_of(fc)
    convs: dict[str, Convention | None] = {}
    first_line: dict[tuple[str, str], int] = {}
    imposed = _imposed(fc.facts) | dictated(fc.facts)
    keyed: frozenset[str] | None = None
    for ident in fc.facts.identifiers:
        if (ident.role, ident.name) in imposed:
            continue
        if "_" in ident.name and ident.role in _REGISTERED_ROLES:
            if keyed is None:
                keyed = spelled_by_keys(fc.text)
            if ident.name in keyed:
                continue
        key = (binding_role(fc.language, ident.role, ident.name), ident.name)
        if key in first_line or not fc.touches(ident.line, ident.line):
            continue
        first_line[key] = ident.line
    found: dict[str, list[tuple[int, str, str]]] = {}  # role -> (line, name, style) breaking it
    judged: Counter[str] = Counter()  # role -> names of that role this file chooses
    for (role, name), line in first_line.items():
        if role not in convs:
            conv = fc.find(rule_for(role)) if role in ROLES else None
            convs[role] = conv if fc.wants(conv) else None
        conv = convs[role]
        if conv is None:
            continue
        style = _judged(name, role)
        if style is None:
            continue
        judged[role] += 1
        if not compatible(style, conv.choice):
            found.setdefault(role, []).append((line, name, style))
    for role, breaks in found.items():
        conv = convs[role]
        assert conv is not None
        label = role.replace("_", " ")
        # A file that keeps a style of its own for a kind of name (a legacy API, names mirroring
        # a foreign one) gets one finding saying so, not one per name.
        habit = len(breaks) >= _FILE_HABIT_MIN and len(breaks) * 2 >= judged[role]
        # The habit's one finding names a lowercase-first break when there is one: it keeps the
        # strict level a capitalised name alone would not.
        shown = [next((b for b in breaks if not deliberate_capitals(role, b[1])), breaks[0])] if habit else breaks
        for line, name, style in shown:
            fixed = convert(name, conv.choice, acronyms)
            message = f"{label} `{name}` is {style}, but {conv.description}; rename to `{fixed}`"
            if habit:
                message += f" (this file names {len(breaks)} of {judged[role]} {_PLURAL.get(role, role + 's')} so)"
            fc.emit(
                conv,
                line,
                message,
                severity=WARNING,
                suggestion=fixed,
                key=name,
                detail={"name": name, "style": style, **({"file_names": len(breaks)} if habit else {})},
                at_most=LOOSE if deliberate_capitals(role, name) else "",
            )
    stem = file_stem(fc.path)
    if stem and not _LOCALE_FILE.match(stem):
        conv = fc.find(rule_for(FILE_ROLE))
        style = _judged(stem)
        if fc.wants(conv) and style is not None and conv is not None and not compatible(style, conv.choice):
            base = posixpath.basename(fc.path)
            fixed = convert(stem, conv.choice, acronyms) + base[len(stem) :]
            fc.emit(
                conv,
                1,
                f"file name `{base}` is {style}, but {conv.description}; rename to `{fixed}`",
                severity=WARNING,
                suggestion=fixed,
                key=base,
                detail={"name": base, "style": style},
            )
