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
   function was renamed);
6. a weaker form of a statement the change narrowed in that symbol (``idioms.NARROWED_TO``: a
   bare ``except:`` turned into ``except Exception:`` leaves a broad catch the base already had, in
   a stronger form), paired with a stand-in the base side gives for each such statement the
   change removed from the symbol (``narrowed``), whether or not a rule reports it there.

Like a name (0), a symbol's code keeps its history whether or not another finding pairs with
that base finding, when the body is long enough to tell (``SHARED_BODY_LINES`` lines of code):
babel renamed ``parse_mapping`` to ``parse_mapping_cfg`` and kept the old name as a wrapper; the
wrapper's finding and the renamed function's are both old.

The symbol's body is its code without comments or docstring (``file_check.body_hash``), so a
rename that also edits the docstring keeps it.

Findings that stay on unchanged lines of the head are paired first, so the base findings they
account for cannot excuse a new one. Change-level findings (line 0) are about the change itself
and always introduced. docs/rules.md says per rule what "introduced" means.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from services.analyzer.engine.file_check import enclosing
from services.analyzer.engine.findings import Finding
from services.analyzer.engine.idioms import NARROWED_TO
from services.source.facts import FileFacts

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


def _shared_body(f: Finding) -> Key:
    return _renamed(f) if f.body_lines >= SHARED_BODY_LINES else None


# A stand-in's anchor: it pairs only in the narrowing tier, never as a base finding of its own.
_STAND_IN = "\x00narrowed:"
_WEAKER_RULES = frozenset(rule for rules in NARROWED_TO.values() for rule in rules)


def _narrowing(f: Finding) -> Key:
    return (f.path, f.symbol) if f.rule in _WEAKER_RULES and not f.anchor.startswith(_STAND_IN) else None


def _stand_in(f: Finding) -> Key:
    return (f.path, f.symbol) if f.anchor.startswith(_STAND_IN) else None


def _base_side(tier: Callable[[Finding], Key]) -> Callable[[Finding], Key]:
    return lambda f: None if f.anchor.startswith(_STAND_IN) else tier(f)


# (key of a head finding, key of a base finding), tried in order.
TIERS: tuple[tuple[Callable[[Finding], Key], Callable[[Finding], Key]], ...] = (
    *((tier, _base_side(tier)) for tier in (_exact, _moved, _rescoped, _edited, _renamed)),
    (_narrowing, _stand_in),
)
# Lines of code a body needs before it vouches for any symbol that has it (a one-line `pass` or
# `return self._x` is no evidence of a rename).
SHARED_BODY_LINES = 3


def narrowed(path: str, base: FileFacts, head: FileFacts | None, found: Sequence[Finding]) -> list[Finding]:
    """Stand-ins, for the base side of ``path``, of the statements of ``NARROWED_TO`` kinds that
    the change removed from each symbol (a symbol's count at the base less its count at the head):
    each pairs with one finding of a weaker form in that symbol (tier 6). A statement the base's
    own findings (``found``) already flag in a weaker form needs none: that finding pairs."""
    flagged = {f.start_line for f in found if f.rule in _WEAKER_RULES}

    def counted(facts: FileFacts) -> dict[tuple[str, str], list[int]]:
        symbols = sorted(facts.symbols, key=lambda s: (s.start_line, -s.end_line))
        lines: dict[tuple[str, str], list[int]] = {}
        for s in facts.statements:
            if s.kind in NARROWED_TO:
                lines.setdefault((s.kind, enclosing(symbols, s.line)), []).append(s.line)
        return lines

    before = counted(base)
    after = counted(head) if head is not None else {}
    out: list[Finding] = []
    for (kind, symbol), lines in sorted(before.items()):
        gone = len(lines) - len(after.get((kind, symbol), ()))
        unflagged = [line for line in lines if line not in flagged]
        for line in unflagged[: max(0, gone)]:
            anchor = _STAND_IN + kind
            out.append(Finding("", "", "", "idioms", "info", 0.0, "", path, line, line, symbol=symbol, anchor=anchor))
    return out


def split(
    reported: Sequence[Finding], unchanged: Sequence[Finding], base: Sequence[Finding]
) -> tuple[list[Finding], list[Finding]]:
    """``reported`` (findings on the changed lines) as (introduced, pre-existing).

    ``unchanged`` are the head's findings off the changed lines and ``base`` the base revision's,
    both of whole files and not capped per rule.
    """
    pool = [b for b in base if b.start_line > 0]
    names = {key for key in map(_same_name, pool) if key is not None}
    bodies = {key for key in map(_base_side(_shared_body), pool) if key is not None}
    items = [*unchanged, *reported]  # unchanged first: they keep their own base findings
    matched = [False] * len(unchanged) + [_same_name(f) in names or _shared_body(f) in bodies for f in reported]
    taken = [False] * len(pool)
    for head_key, base_key in TIERS:
        free: dict[tuple[str, ...], list[int]] = {}
        for j in range(len(pool) - 1, -1, -1):  # popped from the end: base order is kept
            key = None if taken[j] else base_key(pool[j])
            if key is not None:
                free.setdefault(key, []).append(j)
        for i, f in enumerate(items):
            if matched[i] or f.start_line <= 0:
                continue
            key = head_key(f)
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
