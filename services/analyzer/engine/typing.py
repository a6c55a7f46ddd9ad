"""Typing family (``typing.annotations.<kind>``): how many public functions and methods annotate
every parameter and the return. The same public symbols as the documentation family count
(``documentation.public_symbols``), except in modules that turn type checking off.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.analyzer.engine.conventions import Convention
from services.analyzer.engine.documentation import definition_lines, line_of, public_symbols, rate_builder
from services.analyzer.engine.file_check import FileCheck
from services.analyzer.engine.findings import INFO
from services.analyzer.engine.learn_inputs import (
    FileTallies,
    LearnInput,
    Tally,
    blocks_of,
    merge,
    scoped_conventions,
)
from services.source.facts import FileFacts

TYPED_KINDS: tuple[str, ...] = ("function", "method")


def type_rule(kind: str) -> str:
    return f"typing.annotations.{kind}"


def typing_off(f: FileFacts) -> bool:
    """The file tells the type checker not to hold it to annotations (``# mypy: ignore-errors``,
    ``allow-untyped-defs``, a module-level ``# type: ignore``): its functions neither teach the
    annotation convention nor break it."""
    return any(s.kind == "typing_off" for s in f.statements)


def has_stub(path: str, stubs: frozenset[str] | tuple[str, ...]) -> bool:
    """A ``.py`` file whose types live in a ``.pyi`` beside it (PEP 484 stub files): the type
    checker reads the stub, so the module's own definitions are not asked for annotations."""
    return path.endswith(".py") and path + "i" in stubs


def stub_paths(files: list[FileFacts]) -> tuple[str, ...]:
    return tuple(sorted(f.path for f in files if f.path.endswith(".pyi")))


def observe(f: FileFacts, domain: str) -> FileTallies | None:
    """One file's public functions and methods, annotated or not (``learn`` adds them in order,
    leaving out the files a stub types)."""
    if typing_off(f):
        return None
    tallies = FileTallies(f.language, f.path, domain)
    for s in public_symbols(f):
        if s.kind in TYPED_KINDS:
            tallies.add(s.kind, "annotated" if s.has_annotations else "unannotated")
    return tallies


def learn(inp: LearnInput, observed: Sequence[FileTallies | None] | None = None) -> list[Convention]:
    """``observed``: ``observe`` of each of ``inp.files``, when already known."""
    if observed is None:
        observed = [observe(f, inp.domains.get(f.path, "")) for f in inp.files]
    stubs = frozenset(stub_paths(inp.files))
    typed = (o for o in observed if o is None or not has_stub(o.path, stubs))
    types = merge({k: Tally() for k in TYPED_KINDS}, typed, blocks_of(observed))
    out: list[Convention] = []
    for kind, tally in types.items():
        rule = type_rule(kind)
        build = rate_builder(rule, kind, "annotated", inp)
        out.extend(scoped_conventions(tally, build, inp, rule, with_domains=True))
    return out


def check(fc: FileCheck) -> None:
    if typing_off(fc.facts) or has_stub(fc.path, fc.index.model.stubs):
        return
    symbols = [s for s in public_symbols(fc.facts) if s.kind in TYPED_KINDS]
    if not symbols:
        return
    convs: dict[str, Convention | None] = {}
    named_at = definition_lines(fc.facts)
    for s in symbols:
        line = line_of(s, named_at)
        if not fc.touches(line, line):
            continue
        rule = type_rule(s.kind)
        if rule not in convs:
            conv = fc.find(rule)
            convs[rule] = conv if conv is not None and fc.wants(conv) else None
        typed = convs[rule]
        if typed is not None and typed.choice == "annotated" and not s.has_annotations:
            message = f"public {s.kind} `{s.name}` is not fully annotated, but {typed.description}"
            fc.emit(typed, line, message, severity=INFO, key=s.name)
