"""What a family's check sees: the model indexed by scope, and one file under review.

The index is built once per loaded model (dict lookups keyed by rule and scope) so checking a
file costs a handful of dictionary probes per identifier or line, which keeps the per-file check
around a millisecond.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Iterable
from typing import Any

import msgspec

from services.analyzer.engine import suppressions
from services.analyzer.engine.caps import capped, noted
from services.analyzer.engine.config import path_glob
from services.analyzer.engine.conventions import (
    DIRECTORY,
    DOMAIN,
    LANGUAGE,
    REPOSITORY,
    Convention,
    ConventionModel,
)
from services.analyzer.engine.findings import Evidence, Finding, anchor_of, finding_id, fingerprint
from services.analyzer.engine.learn_inputs import REPOSITORY_WIDE, package_of
from services.analyzer.engine.suppressions import Suppressions
from services.analyzer.engine.textscan import LEXED_LANGUAGES, Scan, code_only, scan
from services.analyzer.engine.thresholds import STRICT, level_at_least, level_rank
from services.source.facts import FileFacts, Symbol

ScopeKey = tuple[str, str]
# Marks, in a file's chain of scopes, where its package ends (ModelIndex.chain).
PACKAGE_BOUNDARY = "package"


class CheckPrefs(msgspec.Struct, frozen=True):
    level: str = STRICT  # strict for PR comments, loose for dashboards
    min_confidence: float = 0.0
    families: frozenset[str] | None = None  # None: every family
    max_per_rule: int = 3  # per file; beyond it one summary finding says how many more


class ModelIndex:
    def __init__(self, model: ConventionModel) -> None:
        self.model = model
        self.config = model.config
        self.by_rule: dict[tuple[str, str], dict[ScopeKey, Convention]] = {}
        for conv in model.conventions:
            table = self.by_rule.setdefault((conv.rule, conv.language), {})
            key = (conv.scope.kind, conv.scope.value)
            # Keyed rules (vocabulary terms, layering pairs) share a scope: keep the strongest.
            # A config override always wins over what was learned.
            held = table.get(key)
            if held is None or (conv.source == "config", conv.confidence) > (held.source == "config", held.confidence):
                table[key] = conv
        # (rule, language) -> the files a tool declaring that rule excludes (declared.py), which the
        # habit learned for the rule in a narrower or wider scope does not reach either: loguru's
        # ruff excludes the exception-rendering fixtures whose import order is the expected output.
        self.declared_exempt: dict[tuple[str, str], str] = {}
        for conv in model.conventions:
            exempt = conv.params.get("exempt") if conv.source == "declared" else None
            if isinstance(exempt, str) and exempt:
                self.declared_exempt.setdefault((conv.rule, conv.language), exempt)
        self.extra: dict[str, Any] = {}  # family-specific lookup tables, built lazily by families
        self._chains: dict[tuple[str, str], tuple[ScopeKey, ...]] = {}
        self._domains: dict[str, str] = {}

    def find(self, rule: str, language: str, chain: Iterable[ScopeKey]) -> Convention | None:
        table = self.by_rule.get((rule, language))
        fallback = self.by_rule.get((rule, "")) if language else None
        if table is None:
            table, fallback = fallback, None
            if table is None:
                return None
        outside = False  # past the boundary of the file's package: only declared settings reach it
        for key in chain:
            if key[0] == PACKAGE_BOUNDARY:
                outside = True
                continue
            conv = table.get(key)
            if conv is None and fallback is not None:
                conv = fallback.get(key)
            if conv is not None and not (outside and conv.source == "learned" and conv.family not in REPOSITORY_WIDE):
                return conv
        return None

    def domain_of(self, path: str) -> str:
        directory = posixpath.dirname(path)
        hit = self._domains.get(directory)
        if hit is not None:
            return hit
        d = directory
        while True:
            dom = self.model.domains.get(d)
            if dom is not None or not d:
                self._domains[directory] = dom or ""
                return dom or ""
            d = posixpath.dirname(d)

    def chain(self, path: str, language: str) -> tuple[ScopeKey, ...]:
        """Scopes from the most specific (the file's directory) to the repository."""
        directory = posixpath.dirname(path)
        cached = self._chains.get((directory, language))
        if cached is not None:
            return cached
        keys: list[ScopeKey] = []
        package = package_of(path, self.model.packages)
        d = directory
        while d:
            keys.append((DIRECTORY, d))
            if d == package:
                # A package of its own is judged by its own habits (learned at its directory) and
                # by what the tools declare above it, not by the habits of the root's files.
                keys.append((PACKAGE_BOUNDARY, d))
            d = posixpath.dirname(d)
        domain = self.domain_of(path)
        if domain and package is None:
            keys.append((DOMAIN, domain))
        keys.append((LANGUAGE, language))
        keys.append((REPOSITORY, ""))
        out = tuple(keys)
        self._chains[(directory, language)] = out
        return out


def index_of(model: ConventionModel) -> ModelIndex:
    idx = model.__dict__.get("_index")
    if idx is None:
        idx = ModelIndex(model)
        model.__dict__["_index"] = idx
    return idx


class FileCheck:
    """One file under review; families call :meth:`emit` and this applies every gate."""

    def __init__(
        self,
        facts: FileFacts,
        text: str,
        index: ModelIndex,
        prefs: CheckPrefs,
        changed_lines: set[int] | None,
    ) -> None:
        self.facts = facts
        self.text = text
        self.path = facts.path
        self.language = facts.language
        self.index = index
        self.prefs = prefs
        self.changed = changed_lines
        self.chain = index.chain(facts.path, facts.language)
        self.findings: list[Finding] = []
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        # str.splitlines() would also split on form feeds, which the stdlib uses between sections.
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines

    def find(self, rule: str) -> Convention | None:
        return self.index.find(rule, self.language, self.chain)

    def wants(self, conv: Convention | None) -> bool:
        """Whether findings against ``conv`` can be reported at all (cheap pre-check)."""
        if conv is None or not level_at_least(conv.level, self.prefs.level):
            return False
        if conv.confidence < self.prefs.min_confidence:
            return False
        if self.prefs.families is not None and conv.family not in self.prefs.families:
            return False
        exempt = conv.params.get("exempt")  # files the declaring tool excludes (declared.py)
        if conv.source == "learned":
            exempt = self.index.declared_exempt.get((conv.rule, conv.language))
        if isinstance(exempt, str) and exempt and any(path_glob(g).match(self.path) for g in exempt.split("\n")):
            return False
        scope = conv.params.get("scope")  # the paths the declaring linter is run on (declared.py)
        if isinstance(scope, str) and scope and not any(re.match(r, self.path) for r in scope.split("\n")):
            return False
        return not self.index.config.is_disabled(conv.rule, conv.family)

    def lexed(self) -> Scan:
        """Where the file's strings and comments are (lexed once, on first need)."""
        cached: Scan | None = self.__dict__.get("_scan")
        if cached is None:
            cached = scan(self.text, self.language)
            self.__dict__["_scan"] = cached
        return cached

    def suppressed(self, rule: str, line: int) -> bool:
        """Whether an inline pragma (``# noqa``, ``// eslint-disable-line``, ...) covers ``rule`` there."""
        found: Suppressions | None = self.__dict__.get("_suppressions")
        if found is None:
            lexed = self.language in LEXED_LANGUAGES
            found = suppressions.parse(self.text, self.lexed().comment_col if lexed else None)
            self.__dict__["_suppressions"] = found
        if found.covers(rule, line):
            return True
        if self.language not in LEXED_LANGUAGES or not found.lines:
            return False
        # A pragma after a multi-line string covers the whole string, as flake8 and ruff read
        # it: a line-length noqa can only be written on the string's closing line.
        lexed_scan = self.lexed()
        if line not in lexed_scan.interior and line not in lexed_scan.string_lines:
            return False
        last = line
        while last + 1 in lexed_scan.interior:
            last += 1
        return last != line and found.covers(rule, last)

    def touches(self, start: int, end: int) -> bool:
        if self.changed is None:
            return True
        return any(line in self.changed for line in range(start, end + 1))

    def emit(
        self,
        conv: Convention,
        line: int,
        message: str,
        *,
        severity: str,
        end_line: int | None = None,
        suggestion: str | None = None,
        key: str = "",
        detail: dict[str, Any] | None = None,
        at_most: str = "",
    ) -> bool:
        """Record a finding against ``conv``; ``at_most`` caps its level below the convention's
        (a case of the rule that has not earned the strict level, earned.py)."""
        end = end_line if end_line is not None else line
        if not self.wants(conv) or not self.touches(line, end) or self.suppressed(conv.rule, line):
            return False
        level = conv.level if not at_most or level_rank(conv.level) <= level_rank(at_most) else at_most
        if not level_at_least(level, self.prefs.level):
            return False
        evidence = Evidence(
            convention=conv.id,
            scope=conv.scope,
            choice=conv.choice,
            share=conv.share,
            count=conv.count,
            support=conv.support,
            description=conv.description,
            examples=conv.examples,
            detail=dict(detail or {}),
        )
        self.findings.append(
            Finding(
                id="",
                fingerprint=key,  # replaced in finish(); carries the discriminator until then
                rule=conv.rule,
                family=conv.family,
                severity=self.index.config.severity_for(conv.rule, severity),
                confidence=conv.confidence,
                message=message,
                path=self.path,
                start_line=line,
                end_line=end,
                evidence=evidence,
                suggestion=suggestion,
                level=level,
            )
        )
        return True

    def finish(self) -> list[Finding]:
        """Attach fingerprints, baseline anchors and the overflow notes, in line order."""
        out: list[Finding] = []
        seen: dict[tuple[str, str, str], int] = {}
        symbols = sorted(self.facts.symbols, key=lambda s: (s.start_line, -s.end_line))
        lines = self.lines
        bodies: dict[str, tuple[str, int]] = {}
        kept, left_out = capped(self.findings, self.prefs.max_per_rule)
        for f in sorted(kept, key=lambda f: (f.start_line, f.rule, f.end_line, f.message)):
            around = enclosing_symbol(symbols, f.start_line)
            symbol = qualified(around)
            text = lines[f.start_line - 1] if 0 < f.start_line <= len(lines) else ""
            anchor = anchor_of(f.fingerprint, text)  # f.fingerprint holds emit()'s key until here
            occurrence = seen.get((f.rule, anchor, symbol), 0)
            seen[(f.rule, anchor, symbol)] = occurrence + 1
            if around is not None and symbol not in bodies:
                bodies[symbol] = body_hash(lines, around, self.language)
            fp = fingerprint(f.rule, f.path, anchor, symbol, occurrence)
            out.append(
                msgspec.structs.replace(
                    f,
                    fingerprint=fp,
                    id=finding_id(fp),
                    symbol=symbol,
                    anchor=anchor,
                    body=bodies.get(symbol, ("", 0))[0],
                    body_lines=bodies.get(symbol, ("", 0))[1],
                )
            )
        return noted(out, left_out, "in this file")


def body_hash(lines: list[str], symbol: Symbol, language: str) -> tuple[str, int]:
    """A symbol's code without the line that names it, its comments, its docstring and its
    whitespace: what a rename keeps (babel's ``parse_mapping`` renamed ``parse_mapping_cfg``
    while its doctest moved to the tests), and how many lines of code that is.

    Decorators stay in (a renamed function keeps them); a module has no body of its own here.
    """
    if symbol.kind == "module":
        return "", 0
    own = lines[symbol.start_line - 1 : symbol.end_line]
    named = next((i for i, line in enumerate(own) if symbol.name in line), 0)
    code = code_only("\n".join(own), language).split("\n")
    kept = [squeezed for i, line in enumerate(code) if i != named and (squeezed := "".join(line.split()))]
    body = "".join(kept)
    if not body:
        return "", 0
    return hashlib.blake2b(body.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest(), len(kept)


def enclosing_symbol(symbols: list[Symbol], line: int) -> Symbol | None:
    """The innermost symbol around ``line`` (symbols sorted by start line)."""
    best: Symbol | None = None
    for s in symbols:
        if s.start_line > line:
            break
        if s.end_line >= line and (best is None or s.start_line >= best.start_line):
            best = s
    return best


def qualified(symbol: Symbol | None) -> str:
    if symbol is None:
        return ""
    return f"{symbol.parent}.{symbol.name}" if symbol.parent else symbol.name


def enclosing(symbols: list[Symbol], line: int) -> str:
    """Qualified name of the innermost symbol around ``line`` (symbols sorted by start line)."""
    return qualified(enclosing_symbol(symbols, line))
