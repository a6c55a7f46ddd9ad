"""Documentation family: docstring rates on public symbols (``typing.py`` judges their annotations).

Only public, non-test, top-level or class-level symbols count: a nested helper or ``_private``
function is not part of what a repository documents. Dunder methods are left out because their
meaning is fixed by the language.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import msgspec

from services.analyzer.engine.conventions import Convention, Scope, from_counts
from services.analyzer.engine.file_check import FileCheck
from services.analyzer.engine.findings import INFO
from services.analyzer.engine.learn_inputs import (
    Build,
    FileTallies,
    LearnInput,
    Tally,
    blocks_of,
    is_program,
    merge,
    scoped_conventions,
)
from services.analyzer.engine.naming import JS_LIKE, imposed_methods
from services.source.facts import FileFacts, Symbol

FAMILY = "documentation"
KINDS: tuple[str, ...] = ("function", "method", "class")
_PLURAL = {"class": "classes"}


def doc_rule(kind: str) -> str:
    return f"documentation.docstring.{kind}"


def public_symbols(f: FileFacts) -> list[Symbol]:
    """The public API of a file, one symbol per (kind, parent, name).

    Definitions for the type checker only (``@overload`` stubs, ``if TYPE_CHECKING:`` branches,
    protocol-like classes of ``...`` stubs) are not asked for docstrings: nothing runs them. They
    still describe the runtime definition of the same name (an overloaded implementation is typed,
    and in TypeScript documented, by its signatures), and a name defined only for the type checker
    is left out altogether.
    """
    if f.is_test or is_program(f.path):
        return []  # examples and scripts use the API; they are not part of it
    functions = {s.name for s in f.symbols if s.kind in ("function", "method")}
    rebound = _bound_otherwise(f)
    private_classes = {s.name for s in f.symbols if s.kind == "class" and s.visibility != "public"}
    runtime: dict[tuple[str, str, str], Symbol] = {}
    typed: set[tuple[str, str, str]] = set()
    documented: set[tuple[str, str, str]] = set()
    for s in f.symbols:
        if s.kind not in KINDS or s.visibility != "public" or s.is_test:
            continue
        if s.name.startswith("_") or (s.name.startswith("__") and s.name.endswith("__")):
            continue
        if s.parent and (s.parent in functions or s.parent in private_classes or s.parent.startswith("_")):
            continue
        key = (s.kind, s.parent, s.name)
        if s.kind == "function" and not s.parent and s.name in rebound:
            continue
        if s.typing_only:
            if s.has_annotations:
                typed.add(key)
            if s.has_docstring:
                documented.add(key)  # TypeScript documents an overloaded function above its first signature
            continue
        first = runtime.get(key)
        if first is None:
            runtime[key] = s
        else:
            # Overloads (TypeScript signatures, property setters) are one symbol: documented or
            # annotated once is enough.
            runtime[key] = msgspec.structs.replace(
                first,
                has_docstring=first.has_docstring or s.has_docstring,
                has_annotations=first.has_annotations or s.has_annotations,
            )
    return [
        msgspec.structs.replace(
            s,
            has_annotations=s.has_annotations or key in typed,
            has_docstring=s.has_docstring or key in documented,
        )
        for key, s in runtime.items()
    ]


def _bound_otherwise(f: FileFacts) -> frozenset[str]:
    """Module-level names a Python module binds by an import or an assignment as well as by a
    ``def``: alternative definitions of one name, where the ``def`` is the fallback (``try: from
    rich import x`` / ``except ImportError: def x(*args, **kw): raise ...``, structlog's ``if rich
    is None: def rich_traceback(*args, **kw)`` / ``else: rich_traceback = RichTracebackFormatter()``).
    The other binding is the API its users read; the fallback mirrors its signature and is not
    asked for a docstring or annotations of its own."""
    if f.language != "python":
        return frozenset()
    # The names the module binds, not those it imports: pip-tools' `from pip._internal.req import
    # parse_requirements as _parse_requirements` binds `_parse_requirements`, and its own
    # `def parse_requirements` is the API, no fallback.
    names = {n for imp in f.imports if not imp.typing_only for n in imp.bound if n and n != "*"}
    names.update(imp.module.split(".", 1)[0] for imp in f.imports if imp.bound == ("",) and not imp.typing_only)
    names.update(s.name for s in f.symbols if s.kind in ("variable", "constant") and not s.parent)
    return frozenset(names)


def _root(base: str) -> str:
    """``typing.Generic[T]`` -> ``Generic``; ``abc.ABC`` -> ``ABC``: the class a base names."""
    return base.split("[", 1)[0].split("(", 1)[0].rsplit(".", 1)[-1].strip()


# Classes written to be derived from, by name: ``BaseTransport``, ``AbstractLoader``, ``ReprMixin``.
_BASE_NAME = re.compile(r"^_*(?:Base|Abstract)[A-Z]|(?:Base|Mixin|Interface|ABC)$")


def learn_base_methods(files: list[FileFacts]) -> dict[str, tuple[str, ...]]:
    """The public methods of every class of the repository that another class derives from, or
    that is named to be derived from."""
    bases = {_root(b) for f in files for s in f.symbols if s.kind == "class" for b in s.bases}
    bases.update(s.name for f in files for s in f.symbols if s.kind == "class" and _BASE_NAME.search(s.name))
    methods: dict[str, set[str]] = {}
    for f in files:
        for s in f.symbols:
            if s.kind == "method" and s.parent in bases and not s.name.startswith("_"):
                methods.setdefault(s.parent, set()).add(s.name)
    return {name: tuple(sorted(names)) for name, names in sorted(methods.items())}


def overrides(f: FileFacts, base_methods: dict[str, tuple[str, ...]]) -> frozenset[tuple[str, str]]:
    """(class, method) pairs that override a method of a base class: the base documents it
    (``close``, ``handle_request`` or ``get_command`` of the repository's own base class,
    ``values`` of ``Mapping``), and help(), Sphinx and editors show that docstring for the
    override. Bases are the repository's own classes (``base_methods``) or classes imported
    from elsewhere, whose methods are named and documented by that interface."""
    foreign = imposed_methods(f)
    bases = {s.name: s.bases for s in f.symbols if s.kind == "class" and s.bases}
    local = {s.name: s for s in f.symbols if s.kind == "class"}
    own_methods: dict[str, set[str]] = {}
    for s in f.symbols:
        if s.kind == "method":
            own_methods.setdefault(s.parent, set()).add(s.name)
    out = set()
    for s in f.symbols:
        if s.kind != "method" or s.parent not in bases:
            continue
        if s.name in foreign:
            out.add((s.parent, s.name))
            continue
        for base in bases[s.parent]:
            root = _root(base)
            if s.name in base_methods.get(root, ()) or (root in local and s.name in own_methods.get(root, ())):
                out.add((s.parent, s.name))
                break
    return frozenset(out)


def rate_builder(rule: str, kind: str, good: str, inp: LearnInput) -> Build:
    subject = f"public {_PLURAL.get(kind, kind + 's')}"
    predicate = "have a docstring" if good == "documented" else "annotate every parameter and the return"

    def pred(choice: str) -> str:
        return predicate if choice == good else "lack " + ("docstrings" if good == "documented" else "annotations")

    def build(language: str, scope: Scope, counts: Counter[str]) -> Convention | None:
        return from_counts(
            FAMILY, rule, scope, counts, inp.thresholds, language=language, subject=subject, predicate=pred
        )

    return build


_DEFINING_ROLES = frozenset({"function", "method", "class", "test_function"})


def definition_lines(f: FileFacts) -> dict[str, list[int]]:
    """Lines naming each defined name: a decorated definition starts at its first decorator, and
    findings belong on the line naming it."""
    named_at: dict[str, list[int]] = {}
    for ident in f.identifiers:
        if ident.role in _DEFINING_ROLES:
            named_at.setdefault(ident.name, []).append(ident.line)
    return named_at


def line_of(s: Symbol, named_at: dict[str, list[int]]) -> int:
    return next((n for n in named_at.get(s.name, ()) if s.start_line <= n <= s.end_line), s.start_line)


def base_roots(f: FileFacts) -> frozenset[str]:
    """The classes the file's classes derive from: the entries of ``base_methods`` that
    ``overrides`` (and so ``observe``) reads for this file."""
    return frozenset(_root(b) for s in f.symbols if s.kind == "class" for b in s.bases)


def _documented_by_class(f: FileFacts, s: Symbol) -> bool:
    """A JavaScript/TypeScript ``constructor`` is documented by its class's block (JSDoc and
    TypeDoc show the class's comment for ``new``), as Python's ``__init__`` is by its class's
    docstring."""
    return s.kind == "method" and s.name == "constructor" and f.language in JS_LIKE


def observe(f: FileFacts, domain: str, base_methods: dict[str, tuple[str, ...]]) -> FileTallies:
    """One file's public symbols, documented or not, by kind (``learn`` adds them in order)."""
    tallies = FileTallies(f.language, f.path, domain)
    inherited = overrides(f, base_methods)
    for s in public_symbols(f):
        if (s.parent, s.name) in inherited or _documented_by_class(f, s):
            continue
        tallies.add(s.kind, "documented" if s.has_docstring else "undocumented")
    return tallies


def learn(
    inp: LearnInput,
    base_methods: dict[str, tuple[str, ...]] | None = None,
    observed: Sequence[FileTallies] | None = None,
) -> list[Convention]:
    """``observed``: ``observe`` of each of ``inp.files``, when already known."""
    if observed is None:
        observed = [observe(f, inp.domains.get(f.path, ""), base_methods or {}) for f in inp.files]
    docs = merge({k: Tally() for k in KINDS}, observed, blocks_of(observed))
    out: list[Convention] = []
    for kind, tally in docs.items():
        rule = doc_rule(kind)
        build = rate_builder(rule, kind, "documented", inp)
        out.extend(scoped_conventions(tally, build, inp, rule, with_domains=True))
    return out


_OVERRIDE = re.compile(r"^\s*@(?:typing\.|typing_extensions\.)?override\b")


def _private_module(path: str) -> bool:
    """A module pydocstyle and ruff deem private: its name, or a package above it, starts with an
    underscore (``_impl.py``, ``_internal/``; ``__init__.py`` and ``__main__.py`` are public)."""
    parts = path.removesuffix(".py").split("/")
    return any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in parts)


def _marked_override(lines: list[str], s: Symbol, line: int) -> bool:
    """Whether a decorator of ``s`` (between its first line and the line naming it) is ``@override``."""
    return any(_OVERRIDE.match(text) for text in lines[s.start_line - 1 : line - 1])


def check(fc: FileCheck) -> None:
    symbols = public_symbols(fc.facts)
    if not symbols:
        return
    convs: dict[str, Convention | None] = {}

    def conv_for(rule: str) -> Convention | None:
        if rule not in convs:
            conv = fc.find(rule)
            convs[rule] = conv if conv is not None and fc.wants(conv) else None
        return convs[rule]

    named_at = definition_lines(fc.facts)
    inherited = overrides(fc.facts, fc.index.model.base_methods)
    for s in symbols:
        line = line_of(s, named_at)
        if not fc.touches(line, line) or _documented_by_class(fc.facts, s):
            continue
        doc = conv_for(doc_rule(s.kind))
        if doc is None or doc.choice != "documented" or s.has_docstring:
            continue
        if doc.source == "declared":
            # The linter's notion, where it is narrower than ours: pydocstyle (ruff's D rules) asks
            # nothing of a private module; it does ask an override for a docstring of its own
            # unless the method says it overrides (``@override``), which CI then enforces.
            if _private_module(fc.path) or (s.kind == "method" and _marked_override(fc.lines, s, line)):
                continue
        elif (s.parent, s.name) in inherited:
            continue
        message = f"public {s.kind} `{s.name}` has no docstring, but {doc.description}"
        fc.emit(doc, line, message, severity=INFO, key=s.name)
