"""Findings and their fingerprints.

A fingerprint identifies "the same problem" across commits so that a dismissed finding stays
dismissed: it hashes the rule, the path, the whitespace-normalised text of the flagged line, the
enclosing symbol and a discriminator (e.g. the identifier), never the line number, so edits above
the finding do not change it. Identical lines in one symbol are told apart by their order.
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


def normalize_line(text: str) -> str:
    return _SPACES.sub(" ", text.strip())


def fingerprint(rule: str, path: str, line_text: str, symbol: str, key: str = "", occurrence: int = 0) -> str:
    raw = "\x1f".join((rule, path, normalize_line(line_text), symbol, key, str(occurrence)))
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def finding_id(fp: str) -> str:
    return f"f_{fp[:16]}"
