"""What a change introduced: a finding on a changed line is *pre-existing* when the change's base
revision already had it (SonarQube's "new code", Semgrep's baseline), matched by what the rule
flags rather than where it sits.

The base side is every changed file as it was before the change (the old path of a rename, the
deleted module of a split), checked whole. Findings pair with base findings by keys tried from
the most exact to the loosest, each base finding paired at most once (a multiset, so a function
that had one print and now has two has one new print):

0. for rules about a name: path, rule and name, whether or not another finding pairs with that
   base finding (a name the file already broke the rule with is not new to it, however often
   the change binds it again);
1. path, rule, enclosing symbol and anchor (the flagged name, or the line's tokens);
2. rule, symbol and anchor, in any changed file (code moved to another module);
3. rule and anchor (moved into another class or function, or its function renamed);
4. for rules about a symbol's text or a line's form, not a name: path, rule and symbol (the line
   was reformatted or re-annotated, and the symbol still has as many such findings);
5. for rules about a symbol (its docstring, its annotations): rule and the symbol's body (the
   function was renamed).

Findings that stay on unchanged lines of the head are paired first, so the base findings they
account for cannot excuse a new one. Change-level findings (line 0) are about the change itself
and always introduced. docs/rules.md says per rule what "introduced" means.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from services.analyzer.engine.findings import Finding

Key = tuple[str, ...] | None

# Rules whose finding is about a symbol: introduced when the symbol is new.
_SYMBOL_FAMILIES = ("documentation.", "typing.")
# Rules whose finding is about a name (an identifier, a module, a library, a file's name):
# introduced when the name is new, so a reformatted or moved line never re-raises it, and a new
# name is never excused by an old one.
_NAME_FAMILIES = ("naming.", "vocabulary.", "dependencies.", "formatting.imports", "structure.")


def _kind(rule: str) -> str:
    if rule.startswith(_SYMBOL_FAMILIES):
        return "symbol"
    if rule.startswith(_NAME_FAMILIES):
        return "name"
    return "line"


def _same_name(f: Finding) -> Key:
    return (f.path, f.rule, f.anchor) if _kind(f.rule) == "name" else None


def _exact(f: Finding) -> Key:
    return (f.path, f.rule, f.symbol, f.anchor)


def _moved(f: Finding) -> Key:
    return (f.rule, f.symbol, f.anchor)


def _rescoped(f: Finding) -> Key:
    return (f.rule, f.anchor)


def _edited(f: Finding) -> Key:
    return None if _kind(f.rule) == "name" else (f.path, f.rule, f.symbol)


def _renamed(f: Finding) -> Key:
    return (f.rule, f.body) if _kind(f.rule) == "symbol" and f.body else None


TIERS: tuple[Callable[[Finding], Key], ...] = (_exact, _moved, _rescoped, _edited, _renamed)


def split(
    reported: Sequence[Finding], unchanged: Sequence[Finding], base: Sequence[Finding]
) -> tuple[list[Finding], list[Finding]]:
    """``reported`` (findings on the changed lines) as (introduced, pre-existing).

    ``unchanged`` are the head's findings off the changed lines and ``base`` the base revision's,
    both of whole files and not capped per rule.
    """
    pool = [b for b in base if b.start_line > 0]
    names = {key for key in map(_same_name, pool) if key is not None}
    items = [*unchanged, *reported]  # unchanged first: they keep their own base findings
    matched = [False] * len(unchanged) + [_same_name(f) in names for f in reported]
    taken = [False] * len(pool)
    for tier in TIERS:
        free: dict[tuple[str, ...], list[int]] = {}
        for j in range(len(pool) - 1, -1, -1):  # popped from the end: base order is kept
            key = None if taken[j] else tier(pool[j])
            if key is not None:
                free.setdefault(key, []).append(j)
        for i, f in enumerate(items):
            if matched[i] or f.start_line <= 0:
                continue
            key = tier(f)
            slots = free.get(key) if key is not None else None
            if slots:
                taken[slots.pop()] = True
                matched[i] = True
    introduced: list[Finding] = []
    preexisting: list[Finding] = []
    for f, was in zip(reported, matched[len(unchanged) :], strict=True):
        if was:
            preexisting.append(msgspec.structs.replace(f, preexisting=True))
        else:
            introduced.append(f)
    return introduced, preexisting
