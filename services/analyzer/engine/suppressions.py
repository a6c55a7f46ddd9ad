"""Inline suppressions: the pragmas other tools honour, and our own ``codereview: ignore``.

A line an author marked for flake8/ruff (``# noqa``), mypy (``# type: ignore``), pylint, ESLint,
Prettier, black/ruff format (``# fmt: off`` ... ``# fmt: on``, ``# fmt: skip``), isort or
clang-format says "I know; leave this alone". Each tool's codes are mapped to the rules of ours
that judge the same thing (``E501`` -> ``formatting.line_length``); a pragma without codes covers
every rule on its line. Codes we have no rule for (``F401``) suppress nothing.

Our own pragma, in any comment syntax: ``codereview: ignore`` (every rule on the line),
``codereview: ignore[naming.case.function, formatting]`` (those rules or rule prefixes), and
``codereview: ignore-next-line[...]`` on a line of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ALL = "*"
LAYOUT: tuple[str, ...] = (
    "formatting.indent",
    "formatting.quotes",
    "formatting.line_length",
    "formatting.trailing_whitespace",
)
IMPORT_ORDER = "formatting.imports"

# flake8 / ruff / pycodestyle codes (longest prefix wins) -> our rule prefixes.
_LINT_CODES: dict[str, tuple[str, ...]] = {
    "E501": ("formatting.line_length",),
    "W505": ("formatting.line_length",),
    "B950": ("formatting.line_length",),
    "W291": ("formatting.trailing_whitespace",),
    "W293": ("formatting.trailing_whitespace",),
    "W292": ("formatting.final_newline",),
    "W191": ("formatting.indent",),
    "E101": ("formatting.indent",),
    "E111": ("formatting.indent",),
    "E114": ("formatting.indent",),
    "E117": ("formatting.indent",),
    "Q0": ("formatting.quotes",),
    "I001": (IMPORT_ORDER,),
    "I100": (IMPORT_ORDER,),
    "I201": (IMPORT_ORDER,),
    "I202": (IMPORT_ORDER,),
    "N8": ("naming.case",),
    "E722": ("idioms.bare_except",),
    "B001": ("idioms.bare_except",),
    "BLE001": ("idioms.broad_except",),
    "B902": ("idioms.broad_except",),
    "S110": ("idioms.swallowed_exception",),
    "S112": ("idioms.swallowed_exception",),
    "SIM105": ("idioms.swallowed_exception",),
    "T20": ("idioms.print",),
    "G0": ("idioms.logging_format",),
    "D1": ("documentation.docstring",),
    "ANN": ("typing.annotations",),
}
# pylint message names and ids.
_PYLINT: dict[str, tuple[str, ...]] = {
    "all": (ALL,),
    "line-too-long": ("formatting.line_length",),
    "c0301": ("formatting.line_length",),
    "trailing-whitespace": ("formatting.trailing_whitespace",),
    "c0303": ("formatting.trailing_whitespace",),
    "missing-final-newline": ("formatting.final_newline",),
    "bad-indentation": ("formatting.indent",),
    "mixed-line-endings": ("formatting.line_endings",),
    "wrong-import-order": (IMPORT_ORDER,),
    "ungrouped-imports": (IMPORT_ORDER,),
    "invalid-name": ("naming.case",),
    "c0103": ("naming.case",),
    "bare-except": ("idioms.bare_except",),
    "w0702": ("idioms.bare_except",),
    "broad-except": ("idioms.broad_except",),
    "broad-exception-caught": ("idioms.broad_except",),
    "w0703": ("idioms.broad_except",),
    "w0718": ("idioms.broad_except",),
    "logging-fstring-interpolation": ("idioms.logging_format",),
    "logging-format-interpolation": ("idioms.logging_format",),
    "logging-not-lazy": ("idioms.logging_format",),
    "missing-docstring": ("documentation.docstring",),
    "missing-function-docstring": ("documentation.docstring",),
    "missing-class-docstring": ("documentation.docstring",),
    "c0115": ("documentation.docstring",),
    "c0116": ("documentation.docstring",),
}
# ESLint rule names (plugin prefixes kept as written).
_ESLINT: dict[str, tuple[str, ...]] = {
    "max-len": ("formatting.line_length",),
    "indent": ("formatting.indent",),
    "@typescript-eslint/indent": ("formatting.indent",),
    "no-tabs": ("formatting.indent",),
    "no-mixed-spaces-and-tabs": ("formatting.indent",),
    "quotes": ("formatting.quotes",),
    "@typescript-eslint/quotes": ("formatting.quotes",),
    "no-trailing-spaces": ("formatting.trailing_whitespace",),
    "eol-last": ("formatting.final_newline",),
    "linebreak-style": ("formatting.line_endings",),
    "prettier/prettier": LAYOUT,
    "camelcase": ("naming.case",),
    "new-cap": ("naming.case",),
    "id-match": ("naming.case",),
    "@typescript-eslint/naming-convention": ("naming.case",),
    "no-console": ("idioms.print",),
    "no-empty": ("idioms.swallowed_exception",),
    "import/order": (IMPORT_ORDER,),
    "sort-imports": (IMPORT_ORDER,),
    "simple-import-sort/imports": (IMPORT_ORDER,),
    "no-restricted-imports": ("dependencies",),
    "import/no-extraneous-dependencies": ("dependencies",),
    "jsdoc/require-jsdoc": ("documentation.docstring",),
    "unicorn/prevent-abbreviations": ("vocabulary.term",),
    "unicorn/name-replacements": ("vocabulary.term",),
    "@typescript-eslint/explicit-function-return-type": ("typing.annotations",),
    "@typescript-eslint/explicit-module-boundary-types": ("typing.annotations",),
}
_TYPING = ("typing.annotations",)

# Every pragma we read starts at one of these; a file with none costs one regex search.
_MARKER = re.compile(
    r"noqa|type:\s*ignore|pyright:\s*ignore|pylint:|eslint-(?:disable|enable)|prettier-ignore|"
    r"fmt:\s*(?:off|on|skip)|yapf:\s*(?:disable|enable)|isort:\s*(?:skip|off|on)|"
    r"clang-format\s+(?:off|on)|@ts-(?:ignore|expect-error)|codereview:",
    re.I,
)
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]*(?:[,\s]+[A-Z]+[0-9]*)*))?", re.I)
_FILE_NOQA = re.compile(r"^#\s*(?:flake8|ruff)\s*:\s*noqa(?::\s*(?P<codes>[A-Z0-9,\s]+))?\s*$", re.I)
_TYPE_IGNORE = re.compile(r"#\s*(?:type|pyright):\s*ignore(?:\[(?P<codes>[^\]]*)\])?")
_PYLINT_PRAGMA = re.compile(r"#\s*pylint:\s*(?P<kind>disable-next|disable|enable)\s*=\s*(?P<names>[\w\-, ]+)", re.I)
_ESLINT_PRAGMA = re.compile(
    r"(?://|/\*)\s*eslint-(?P<kind>disable-next-line|disable-line|disable|enable)\b(?P<rules>[^\n*]*?)(?:\*/|--|$)"
)
_OURS = re.compile(r"codereview:\s*ignore(?P<next>-next-line)?(?:\[(?P<rules>[^\]]*)\])?")
_FMT_SKIP = re.compile(r"#\s*fmt:\s*skip\b|//\s*prettier-ignore|#\s*isort:\s*skip\b|@ts-(?:ignore|expect-error)")
_REGIONS: tuple[tuple[re.Pattern[str], re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"#\s*fmt:\s*off\b"), re.compile(r"#\s*fmt:\s*on\b"), LAYOUT),
    (re.compile(r"#\s*yapf:\s*disable\b"), re.compile(r"#\s*yapf:\s*enable\b"), LAYOUT),
    (re.compile(r"//\s*clang-format\s+off\b"), re.compile(r"//\s*clang-format\s+on\b"), LAYOUT),
    (re.compile(r"#\s*isort:\s*off\b"), re.compile(r"#\s*isort:\s*on\b"), (IMPORT_ORDER,)),
)


@dataclass(slots=True)
class Suppressions:
    lines: dict[int, set[str]] = field(default_factory=dict)  # line -> rule prefixes ("*": all)
    file_wide: set[str] = field(default_factory=set)

    def add(self, line: int, rules: tuple[str, ...] | set[str]) -> None:
        if rules:
            self.lines.setdefault(line, set()).update(rules)

    def covers(self, rule: str, line: int) -> bool:
        for prefixes in (self.file_wide, self.lines.get(line)):
            if prefixes and (ALL in prefixes or any(_under(rule, p) for p in prefixes)):
                return True
        return False


def _under(rule: str, prefix: str) -> bool:
    return rule == prefix or rule.startswith(prefix + ".")


def _lint_rules(codes: str | None) -> tuple[str, ...]:
    if codes is None:
        return (ALL,)
    out: list[str] = []
    for code in re.split(r"[,\s]+", codes.strip().upper()):
        best = max((k for k in _LINT_CODES if code.startswith(k)), key=len, default=None)
        if best is not None:
            out.extend(_LINT_CODES[best])
    return tuple(out)


def _named(names: str, table: dict[str, tuple[str, ...]], *, lower: bool) -> tuple[str, ...]:
    out: list[str] = []
    for name in re.split(r"[,\s]+", names.strip()):
        out.extend(table.get(name.lower() if lower else name, ()))
    return tuple(out)


def _ours(rules: str | None) -> tuple[str, ...]:
    if rules is None or not rules.strip():
        return (ALL,)
    return tuple(r.strip() for r in rules.split(",") if r.strip())


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _block_end(lines: list[str], start: int) -> int:
    """Last line (1-based) of the block a standalone pragma at ``start`` (1-based) sits in."""
    depth = _indent(lines[start - 1])
    end = start
    for no in range(start + 1, len(lines) + 1):
        text = lines[no - 1]
        if text.strip() and _indent(text) < depth:
            break
        end = no
    return end


def _statement_end(lines: list[str], start: int) -> int:
    """The line ``start`` (1-based) and the deeper-indented lines that continue its statement."""
    if start > len(lines):
        return start
    depth = _indent(lines[start - 1])
    end = start
    for no in range(start + 1, len(lines) + 1):
        text = lines[no - 1]
        if text.strip() and _indent(text) <= depth and not text.lstrip().startswith((")", "]", "}")):
            break
        end = no
    return end


def _next_code_line(lines: list[str], after: int, past_comments: bool = False) -> int:
    """The next non-blank line; with ``past_comments``, the next one holding code: comments
    between a ``// prettier-ignore`` and its statement belong to that statement (h3's ignore, then
    a link to the spec, then the long line), where ESLint's next-line means the very next line."""
    for no in range(after + 1, len(lines) + 1):
        stripped = lines[no - 1].strip()
        if stripped and not (past_comments and stripped.startswith(("//", "#"))):
            return no
    return after + 1


def parse(text: str, comment_col: dict[int, int] | None = None) -> Suppressions:
    """Every suppression in ``text``.

    ``comment_col`` (line -> column where a comment starts, from the lexer) keeps pragma-like text
    inside string literals from counting; without it (a language we do not lex) the whole line is
    read.
    """
    out = Suppressions()
    if not _MARKER.search(text):
        return out
    lines = text.split("\n")
    open_regions: dict[int, int] = {}  # index in _REGIONS -> line that opened it
    for no, raw in enumerate(lines, start=1):
        if comment_col is None:
            col = 0
        else:
            found = comment_col.get(no)
            if found is None:
                continue
            col = found
        comment = raw[col:]
        if not _MARKER.search(comment):
            continue
        standalone = not raw[:col].strip() and comment.lstrip().startswith(("#", "//", "/*"))
        _line_pragmas(out, lines, no, comment, standalone)
        for i, (opener, closer, rules) in enumerate(_REGIONS):
            if i not in open_regions and opener.search(comment):
                open_regions[i] = no
            elif i in open_regions and closer.search(comment):
                for line in range(open_regions.pop(i), no + 1):
                    out.add(line, rules)
    for i, start in open_regions.items():  # an unclosed region runs to the end of the file
        for line in range(start, len(lines) + 1):
            out.add(line, _REGIONS[i][2])
    return out


def _line_pragmas(out: Suppressions, lines: list[str], no: int, comment: str, standalone: bool) -> None:
    if standalone:
        fm = _FILE_NOQA.match(comment.strip())
        if fm is not None:  # a file-wide flake8 or ruff noqa pragma (with or without codes): the whole file
            out.file_wide.update(_lint_rules(fm.group("codes")))
            return
    nm = _NOQA.search(comment)
    if nm is not None:
        out.add(no, _lint_rules(nm.group("codes")))
    tm = _TYPE_IGNORE.search(comment)
    if tm is not None:
        codes = tm.group("codes")
        if codes is None or "no-untyped-def" in codes or "reportMissingParameterType" in codes:
            out.add(no, _TYPING)
    pm = _PYLINT_PRAGMA.search(comment)
    if pm is not None and pm.group("kind").lower() != "enable":
        rules = _named(pm.group("names"), _PYLINT, lower=True)
        if pm.group("kind").lower() == "disable-next":
            out.add(_next_code_line(lines, no), rules)
        elif standalone:  # pylint: a disable on its own line holds to the end of its block
            for line in range(no, _block_end(lines, no) + 1):
                out.add(line, rules)
        else:
            out.add(no, rules)
    for em in _ESLINT_PRAGMA.finditer(comment):
        kind, names = em.group("kind"), em.group("rules").strip()
        rules = _named(names, _ESLINT, lower=False) if names else (ALL,)
        if kind == "disable-line":
            out.add(no, rules)
        elif kind == "disable-next-line":
            out.add(_next_code_line(lines, no), rules)
        elif kind == "disable":
            _eslint_region(out, lines, no, rules)
    om = _OURS.search(comment)
    if om is not None:
        rules = _ours(om.group("rules"))
        out.add(_next_code_line(lines, no) if om.group("next") else no, rules)
    sm = _FMT_SKIP.search(comment)
    if sm is not None:
        token = sm.group()
        rules = (IMPORT_ORDER,) if "isort" in token else _TYPING if "@ts-" in token else LAYOUT
        if "prettier-ignore" in token or "@ts-" in token:  # these name the next statement
            target = _next_code_line(lines, no, past_comments="prettier-ignore" in token)
            for line in range(target, _statement_end(lines, target) + 1):
                out.add(line, rules)
        else:
            out.add(no, rules)


def _eslint_region(out: Suppressions, lines: list[str], start: int, rules: tuple[str, ...]) -> None:
    """``/* eslint-disable */`` holds until ``/* eslint-enable */`` (or the end of the file)."""
    for no in range(start, len(lines) + 1):
        out.add(no, rules)
        if no > start and "eslint-enable" in lines[no - 1]:
            return
