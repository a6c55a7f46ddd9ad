"""Findings and their fingerprints.

A fingerprint identifies "the same problem" across commits, so that a dismissed finding stays
dismissed and a pull request's comment keeps its thread: it hashes the rule, the path, the
enclosing symbol and the finding's *anchor*, never the line number. The anchor is what the rule
flags: the name, module or symbol a rule names (its discriminator key), else the flagged line's
text without any whitespace. So moving code, reformatting it, or editing a flagged function's
annotations keeps a name's or a docstring's fingerprint; a line finding keeps it while the line
keeps its tokens. Findings with one anchor in one symbol are told apart by their order.
"""

from __future__ import annotations

import hashlib
import re

import msgspec

from services.analyzer.engine.conventions import Param, Scope

INFO = "info"
WARNING = "warning"
ERROR = "error"

_SPACES = re.compile(r"\s+")


class Evidence(msgspec.Struct, omit_defaults=True):
    convention: str  # convention id
    scope: Scope
    choice: str
    share: float
    count: int
    support: int
    description: str = ""
    examples: tuple[str, ...] = ()
    detail: dict[str, Param] = {}


class Finding(msgspec.Struct, omit_defaults=True):
    id: str
    fingerprint: str
    rule: str
    family: str
    severity: str  # info | warning | error
    confidence: float  # 0..1
    message: str
    path: str
    start_line: int  # 1-based; 0 for findings about the whole change
    end_line: int
    evidence: Evidence | None = None
    suggestion: str | None = None  # replacement text for the flagged span, where one exists
    level: str = "strict"  # the weakest level at which this finding is reported
    symbol: str = ""
    # What matches it against the base revision (engine/baseline.py), set by FileCheck.finish:
    anchor: str = ""  # the flagged name/module/symbol, else the line's text without whitespace
    body: str = ""  # hash of the enclosing symbol's code below its first line ("" at module level)
    body_lines: int = 0  # lines of code in that body: a one-line body is no evidence of a rename
    preexisting: bool = False  # the base revision already had it
    more: int = 0  # findings of this rule left out after it by the per-rule cap (engine/caps.py)


def normalize_line(text: str) -> str:
    return _SPACES.sub(" ", text.strip())


def anchor_of(key: str, line_text: str) -> str:
    """The discriminator a rule gave, else the line's tokens (whitespace carries no meaning here)."""
    return key if key else _SPACES.sub("", line_text)


def fingerprint(rule: str, path: str, anchor: str, symbol: str, occurrence: int = 0) -> str:
    raw = "\x1f".join((rule, path, anchor, symbol, str(occurrence)))
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def finding_id(fp: str) -> str:
    return f"f_{fp[:16]}"
