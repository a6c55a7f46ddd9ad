"""Helpers for the source-library tests: extract a snippet, look facts up by name."""

from __future__ import annotations

import textwrap

from services.source.extract import extract
from services.source.facts import FileFacts, Identifier, Symbol


def facts_of(path: str, source: str) -> FileFacts:
    return extract(path, textwrap.dedent(source).lstrip("\n").encode())


def symbol(facts: FileFacts, name: str, kind: str | None = None) -> Symbol:
    found = [s for s in facts.symbols if s.name == name and (kind is None or s.kind == kind)]
    assert len(found) == 1, f"{name}: {found}"
    return found[0]


def roles(facts: FileFacts, role: str) -> list[str]:
    return [i.name for i in facts.identifiers if i.role == role]


def ident(facts: FileFacts, name: str) -> list[Identifier]:
    return [i for i in facts.identifiers if i.name == name]


def statements(facts: FileFacts) -> list[tuple[str, int, str]]:
    return [(s.kind, s.line, s.detail) for s in facts.statements]


def quotes(facts: FileFacts) -> tuple[int, int]:
    assert facts.formatting is not None
    return facts.formatting.quote_double, facts.formatting.quote_single
