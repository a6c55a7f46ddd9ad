"""Documentation family: docstring rates on public symbols (``typing.py`` judges their annotations).

Only public, non-test, top-level or class-level symbols count: a nested helper or ``_private``
function is not part of what a repository documents. Dunder methods are left out because their
meaning is fixed by the language.
"""

from __future__ import annotations

from collections import Counter

import msgspec

from services.analyzer.engine.conventions import Convention, Scope, from_counts
from services.analyzer.engine.file_check import FileCheck
from services.analyzer.engine.findings import INFO
from services.analyzer.engine.learn_inputs import Build, LearnInput, Tally, scoped_conventions
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
    if f.is_test:
        return []
    functions = {s.name for s in f.symbols if s.kind in ("function", "method")}
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


def learn(inp: LearnInput) -> list[Convention]:
    docs = {k: Tally() for k in KINDS}
    for f in inp.files:
        dom = inp.domains.get(f.path, "")
        for s in public_symbols(f):
            docs[s.kind].add(f.language, f.path, dom, "documented" if s.has_docstring else "undocumented")
    out: list[Convention] = []
    for kind, tally in docs.items():
        rule = doc_rule(kind)
        build = rate_builder(rule, kind, "documented", inp)
        out.extend(scoped_conventions(tally, build, inp, rule, with_domains=True))
    return out


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
    for s in symbols:
        line = line_of(s, named_at)
        if not fc.touches(line, line):
            continue
        doc = conv_for(doc_rule(s.kind))
        if doc is not None and doc.choice == "documented" and not s.has_docstring:
            message = f"public {s.kind} `{s.name}` has no docstring, but {doc.description}"
            fc.emit(doc, line, message, severity=INFO, key=s.name)
