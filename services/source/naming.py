"""Identifier case styles: classify a name, split it into words, render words in a style.

Shared by the extractor (file-name facts) and the analyzer (naming conventions), so both agree on
what "snake_case" means. Results are cached because a repository repeats the same names thousands
of times and the checker has a budget of about a millisecond per file.
"""

from __future__ import annotations

import re
from functools import lru_cache

SNAKE = "snake_case"
CAMEL = "camelCase"
PASCAL = "PascalCase"
UPPER = "UPPER_CASE"
KEBAB = "kebab-case"
FLAT = "flat"  # one lowercase word: valid snake_case and camelCase at once
UPPER_FLAT = "UPPER"  # one uppercase word ("URL", "X"): valid UPPER_CASE, tolerated as PascalCase
MIXED = "mixed"  # none of the above ("get_fooBar", "visit_FunctionDef")
DUNDER = "dunder"  # "__init__": names the language dictates, never a style choice
NONE = ""  # no letters to judge ("_", "__", "2")

STYLES: tuple[str, ...] = (SNAKE, CAMEL, PASCAL, UPPER, KEBAB, FLAT, UPPER_FLAT, MIXED)
# The styles a convention can choose; FLAT/UPPER_FLAT/MIXED are observations, not choices.
DEFINITE_STYLES: frozenset[str] = frozenset({SNAKE, CAMEL, PASCAL, UPPER, KEBAB})

# Which observed styles satisfy a chosen style. FLAT is a one-word name in any lowercase style.
_COMPATIBLE: dict[str, frozenset[str]] = {
    SNAKE: frozenset({SNAKE, FLAT}),
    CAMEL: frozenset({CAMEL, FLAT}),
    PASCAL: frozenset({PASCAL, UPPER_FLAT}),
    UPPER: frozenset({UPPER, UPPER_FLAT}),
    KEBAB: frozenset({KEBAB, FLAT}),
    FLAT: frozenset({FLAT}),
    UPPER_FLAT: frozenset({UPPER_FLAT}),
    MIXED: frozenset({MIXED}),
}

# Acronym runs ("HTTP" in "HTTPServer"), capitalised words, lowercase words, bare numbers; digits
# stay attached to the word before them so "utf8Decode" round-trips through snake_case.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])\d*|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")
_SEPARATORS = re.compile(r"[_\-.\s]+")
_PARTS = re.compile(r"[^_\-.\s]+")


def _strip(name: str) -> tuple[str, str, str]:
    core = name.strip("_")
    if not core:
        return name, "", ""
    start = name.index(core[0])
    return name[:start], core, name[start + len(core) :]


@lru_cache(maxsize=131_072)
def case_style(name: str) -> str:
    """The case style of ``name``, ignoring leading/trailing underscores (privacy markers)."""
    if len(name) > 4 and name.startswith("__") and name.endswith("__") and name[2] != "_":
        return DUNDER
    _, core, _ = _strip(name)
    if not core or not any(c.isalpha() for c in core):
        return NONE
    has_lower = any(c.islower() for c in core)
    has_upper = any(c.isupper() for c in core)
    if "-" in core:
        if "_" not in core and not has_upper:
            return KEBAB
        return MIXED
    if "_" in core:
        if not has_upper:
            return SNAKE
        if not has_lower:
            return UPPER
        return MIXED
    if not has_upper:
        return FLAT
    if not has_lower:
        return UPPER_FLAT
    first = next(c for c in core if c.isalpha())
    return CAMEL if first.islower() else PASCAL


def compatible(observed: str, chosen: str) -> bool:
    """Whether a name in style ``observed`` follows a convention that chose ``chosen``."""
    allowed = _COMPATIBLE.get(chosen)
    return observed in allowed if allowed is not None else observed == chosen


@lru_cache(maxsize=131_072)
def words(name: str) -> tuple[str, ...]:
    """Cached, immutable form of :func:`split_words`."""
    out: list[str] = []
    for part in _SEPARATORS.split(name):
        out.extend(w.lower() for w in _WORD.findall(part))
    return tuple(out)


def split_words(name: str) -> list[str]:
    """Lowercased words of an identifier: ``HTTPServer`` -> ``["http", "server"]``."""
    return list(words(name))


def raw_words(name: str) -> list[str]:
    """Words of an identifier as written: ``HTTPServer`` -> ``["HTTP", "Server"]``."""
    out: list[str] = []
    for part in _SEPARATORS.split(name):
        out.extend(_WORD.findall(part))
    return out


def _title(word: str, acronyms: frozenset[str]) -> str:
    return word.upper() if word in acronyms else word[:1].upper() + word[1:]


def render(parts: list[str] | tuple[str, ...], style: str, acronyms: frozenset[str] = frozenset()) -> str:
    """Join words in ``style``; the inverse of :func:`split_words` up to acronym case, which
    ``acronyms`` (lowercase words a repository writes all in capitals: ``http``) restores."""
    low = [p.lower() for p in parts if p]
    if not low:
        return ""
    if style == SNAKE:
        return "_".join(low)
    if style == FLAT:
        return "".join(low)
    if style == CAMEL:
        return low[0] + "".join(_title(p, acronyms) for p in low[1:])
    if style == PASCAL:
        return "".join(_title(p, acronyms) for p in low)
    if style in (UPPER, UPPER_FLAT):
        return "_".join(p.upper() for p in low)
    if style == KEBAB:
        return "-".join(low)
    return "_".join(low)


def convert(name: str, style: str, acronyms: frozenset[str] = frozenset()) -> str:
    """``name`` rendered in ``style``, keeping its leading/trailing underscores."""
    lead, core, trail = _strip(name)
    if not core:
        return name
    return lead + render(words(core), style, acronyms) + trail


def replace_word(name: str, index: int, replacement: str, acronyms: frozenset[str] = frozenset()) -> str:
    """``name`` with its ``index``-th word replaced, keeping the name's own style.

    The other words stay as written (``headerOTP`` keeps ``OTP``, ``Session_startdir`` its mixed
    shape), except that capitalised words the repository writes as acronyms are spelled so; the
    new word takes the case of the word it replaces.
    """
    lead, core, trail = _strip(name)
    spans = [
        (part.start() + m.start(), part.start() + m.end())
        for part in _PARTS.finditer(core)
        for m in _WORD.finditer(part.group())
    ]
    if not 0 <= index < len(spans):
        return name
    out: list[str] = []
    at = 0
    for i, (start, end) in enumerate(spans):
        out.append(core[at:start])
        word = core[start:end]
        if i == index:
            if len(word) > 1 and word.isupper():
                word = replacement.upper()
            elif word[:1].isupper():
                word = _title(replacement, acronyms)
            else:
                word = replacement
        elif word[:1].isupper() and word.lower() in acronyms:
            word = word.upper()
        out.append(word)
        at = end
    out.append(core[at:])
    return lead + "".join(out) + trail
