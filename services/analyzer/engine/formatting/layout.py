"""Formatting family, line-level checks: indentation, quotes, line length, trailing whitespace.

Candidates are found with multi-line regexes (a C loop over the whole text); only when one turns
up is the file lexed to rule out lines inside multi-line strings and comments. Most files have
no candidate, which is what keeps a check near a millisecond.
"""

from __future__ import annotations

import re
from functools import lru_cache

from services.analyzer.engine.conventions import Convention
from services.analyzer.engine.file_check import FileCheck
from services.analyzer.engine.findings import INFO
from services.analyzer.engine.textscan import LEXED_LANGUAGES, Literal, Scan, requote
from services.analyzer.engine.thresholds import LOOSE
from services.analyzer.engine.toolconfig import SKIPS_STRING_LINES
from services.source.formatting import judged, without_pragma

# A Python block opener is a compound statement; checking only those skips continuation lines.
_PY_KEYWORD = re.compile(r"(?:async[ \t]+)?(?:if|elif|else|for|while|try|except|finally|with|def|class|match|case)\b")
# A brace opener must start its line with an operand, not an operator: "? (x) => {" continues an
# expression whose indentation follows the expression, not the block.
# Continuation lines whose indentation follows an expression rather than the block structure. A
# line closing a bracket (`} else {`, `}).then(() => {`, `) {`) or continuing a method chain
# (`.object({`) sits at a block's own indentation in the code formatters produce, so it opens one.
_OPERATOR_STARTS = frozenset("?:&|+-*/,<>=")
_COMMENT_STARTS: dict[str, tuple[str, ...]] = {"python": ("#",)}
_C_COMMENTS = ("//", "/*", "*")


@lru_cache(maxsize=64)
def _long_line(limit: int) -> re.Pattern[str]:
    return re.compile(rf"^[^\n]{{{limit + 1},}}", re.M)


class _Lines:
    """Line numbers of increasing offsets without counting from the start each time."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1

    def at(self, offset: int) -> int:
        if offset < self.pos:
            self.pos, self.line = 0, 1
        self.line += self.text.count("\n", self.pos, offset)
        self.pos = offset
        return self.line


def lexed(fc: FileCheck) -> Scan:
    return fc.lexed()


def _next_code_line(text: str, pos: int, comments: tuple[str, ...]) -> tuple[int, str]:
    """Offset and text of the first non-blank, non-comment line after ``pos``."""
    while True:
        nl = text.find("\n", pos)
        if nl < 0:
            return -1, ""
        start = nl + 1
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        stripped = line.strip()
        if stripped and not stripped.startswith(comments):
            return start, line.rstrip("\r")
        if end < 0:
            return -1, ""
        pos = start


def _tab_indents(text: str) -> list[int]:
    """Offsets of lines whose indentation contains a tab (str.find, not a per-position regex)."""
    out: list[int] = []
    at = text.find("\t")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        if not text[start:at].strip(" "):
            out.append(start)
            at = text.find("\n", at)
            if at < 0:
                break
        at = text.find("\t", at + 1)
    return out


def _openers(text: str, python: bool) -> list[tuple[int, str]]:
    """(offset of the line end, indentation) of lines that open a block, in text order.

    Found by searching for the line ending (":\\n" or "{\\n") rather than matching every line: far
    fewer candidates reach Python code. Openers followed by a trailing comment are not seen.
    """
    mark = ":" if python else "{"
    ends: list[int] = []
    for needle in (mark + "\n", mark + "\r\n"):
        at = text.find(needle)
        while at >= 0:
            ends.append(at)
            at = text.find(needle, at + 2)
    ends.sort()
    out: list[tuple[int, str]] = []
    for end in ends:
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        body = line.lstrip(" \t")
        if not body:
            # A brace alone on its line opens a block at that line's indentation: an object
            # literal in an array (`const expected = [\n  {\n    level: 31,`), Allman-style bodies.
            if not python:
                out.append((end, line))
            continue
        if python:
            # ") -> None:" closes a signature laid out one parameter per line; it sits at the
            # indentation of its "def", so it opens the block like the "def" line would.
            if not (_PY_KEYWORD.match(body) or body[0] in ")]"):
                continue
        elif body[0] in _OPERATOR_STARTS:
            continue
        out.append((end, line[: len(line) - len(body)]))
    return out


def indentation(fc: FileCheck, unit: Convention | None, width: Convention | None) -> None:
    if unit is not None and not (fc.wants(unit) and unit.choice in ("space", "tab")):
        unit = None
    if width is not None and not (fc.wants(width) and width.choice.isdigit()):
        width = None
    if unit is None and width is None:
        return
    text = fc.text
    step = int(width.choice) if width is not None else 0
    lines = _Lines(text)
    if unit is not None and unit.choice == "space" and "\t" in text:
        for offset in _tab_indents(text):
            no = lines.at(offset)
            if no in lexed(fc).interior:
                continue
            line = fc.lines[no - 1].rstrip("\r")
            stripped = line.lstrip(" \t")
            lead = line[: len(line) - len(stripped)]
            fc.emit(
                unit,
                no,
                f"line is indented with a tab, but {unit.description}",
                severity=INFO,
                suggestion=lead.replace("\t", " " * (step or 4)) + stripped,
            )
    python = fc.language == "python"
    comments = _COMMENT_STARTS.get(fc.language, _C_COMMENTS)
    lines = _Lines(text)
    for at, lead_text in _openers(text, python):
        base = len(lead_text.expandtabs(step or 4))
        if not python and step and base % step:
            continue
        start, line = _next_code_line(text, at, comments)
        if start < 0:
            break
        stripped = line.lstrip(" \t")
        lead = line[: len(line) - len(stripped)]
        indent = len(lead.expandtabs(step or 4))
        spaces_in_tab_repo = unit is not None and unit.choice == "tab" and lead.startswith(" ")
        wrong_step = width is not None and "\t" not in lead and indent > base and indent - base != step
        if not (spaces_in_tab_repo or wrong_step):
            continue
        opener_line = lines.at(at)
        no = lines.at(start)
        interior = lexed(fc).interior
        if no in interior or opener_line in interior:
            continue
        if spaces_in_tab_repo and unit is not None:
            fc.emit(unit, no, f"line is indented with spaces, but {unit.description}", severity=INFO)
        elif width is not None:
            fc.emit(
                width,
                no,
                f"block indented by {indent - base} spaces, but {width.description}",
                severity=INFO,
                suggestion=" " * (base + step) + stripped,
                detail={"indent": indent - base},
            )


# A JSX attribute value (`className="grid"`: the name glued to `=` and the string, as JSX writes
# it) follows HTML habits; Prettier's singleQuote leaves it alone (jsxSingleQuote is apart) and the
# facts do not count it (lang_js).
_JSX_ATTRIBUTE = re.compile(r"(?:^|[\s{(<])[A-Za-z_$][\w$:.-]*=$")
_JSX_LANGUAGES = frozenset({"javascript", "jsx", "tsx"})


def quotes(fc: FileCheck, conv: Convention) -> None:
    """One finding per line: two foreign literals on a line (`res.set("Content-Type", "text/plain")`)
    are one nit, and its suggestion requotes both."""
    want = '"' if conv.choice == "double" else "'"
    other = "'" if want == '"' else '"'
    if other not in fc.text:
        return
    lines = fc.lines
    jsx = fc.language in _JSX_LANGUAGES
    by_line: dict[int, list[Literal]] = {}
    literals = lexed(fc).literals
    bound = _bound_to_the_other_quote(literals, lines, want)
    for i, lit in enumerate(literals):
        if lit.quote == want or i in bound or not fc.touches(lit.line, lit.line):
            continue
        if jsx and _JSX_ATTRIBUTE.search(lines[lit.line - 1], 0, lit.start):
            continue
        by_line.setdefault(lit.line, []).append(lit)
    for number, found in by_line.items():
        line = lines[number - 1].rstrip("\r")
        suggestion: str | None = line
        for lit in sorted(found, key=lambda x: -x.start):  # right to left: columns stay valid
            fixed = requote(lit.body, want)
            if fixed is None or suggestion is None:
                suggestion = None
                break
            suggestion = suggestion[: lit.start] + fixed + suggestion[lit.end :]
        what = "string literal uses" if len(found) == 1 else f"{len(found)} string literals use"
        fc.emit(
            conv,
            number,
            f"{what} {'single' if want == chr(34) else 'double'} quotes, but {conv.description}",
            severity=INFO,
            suggestion=suggestion,
            key=found[0].body,
        )


# What may stand between the parts of one concatenated string: spaces, `+`, line continuations.
_JOINED = re.compile(r"[\s+\\]*")


def _bound_to_the_other_quote(literals: list[Literal], lines: list[str], want: str) -> set[int]:
    """Indexes of the literals that keep the other quote: those holding ``want`` in their text,
    and every part of a concatenation one of whose parts does (Python-Markdown's smarty tests,
    `"A line that 'wraps' with\\n"` then `"*emphasis* at ..."`: one quote style per string)."""
    bound: set[int] = set()
    group: list[int] = []
    for i, lit in enumerate(literals):
        if group and not _joined(literals[group[-1]], lit, lines):
            if any(want in literals[j].body for j in group):
                bound.update(group)
            group = []
        group.append(i)
    if any(want in literals[j].body for j in group):
        bound.update(group)
    return bound


def _joined(a: Literal, b: Literal, lines: list[str]) -> bool:
    if b.line == a.line:
        between = lines[a.line - 1][a.end : b.start]
    elif b.line - a.line > 3:
        return False
    else:
        middle = lines[a.line : b.line - 1]
        between = "\n".join([lines[a.line - 1][a.end :], *middle, lines[b.line - 1][: b.start]])
    return _JOINED.fullmatch(between) is not None


def long_lines(fc: FileCheck, conv: Convention) -> None:
    limit = int(conv.choice)
    # A formatter's limit (declared.py): a line long only because of a string or comment it
    # cannot split answers to the limit the repository's files keep instead (0: none).
    content_limit = conv.params.get("content_limit")
    text = fc.text
    lines = _Lines(text)
    for m in _long_line(limit).finditer(text):
        line = m.group().rstrip("\r")
        if len(line) <= limit or not judged(line):
            continue
        no = lines.at(m.start())
        lex = fc.lexed()
        col = lex.comment_col.get(no)
        if (col is not None or fc.language not in LEXED_LANGUAGES) and len(without_pragma(line, col)) <= limit:
            continue  # long only because of a noqa / type-ignore pragma the tools need there
        if col is not None and conv.params.get("type_ignore_whole") and _TYPE_IGNORE.match(line, col):
            continue  # black keeps a line ending in `# type: ignore` whole, and no linter checks it
        if _one_word(conv, lex, no, line, limit):
            continue
        if conv.params.get(SKIPS_STRING_LINES) and _holds_string(lex, no):
            continue  # ESLint's max-len with ignoreStrings passes a line holding a string, however long
        message = f"line is {len(line)} characters, but {conv.description}"
        at_most = ""
        if isinstance(content_limit, int) and fc.language in LEXED_LANGUAGES and _content_long(lex, no, line, limit):
            if not content_limit or len(line) <= content_limit:
                continue
            message = (
                f"line is {len(line)} characters, longer than the {content_limit} the repository's files keep"
                f" where strings and comments run past the formatter's limit ({conv.description})"
            )
            # No tool of the repository enforces this limit: it is the learned line-length habit,
            # which has not earned the strict level on real changes (earned.py).
            at_most = LOOSE if fc.index.model.thresholds.held_loose(conv.rule) else ""
        fc.emit(conv, no, message, severity=INFO, detail={"length": len(line)}, at_most=at_most)


# Black's own test (``is_type_ignore_comment_string``, after it puts one space after the `#`).
_TYPE_IGNORE = re.compile(r"# ?type: ignore")


def _one_word(conv: Convention, lex: Scan, no: int, line: str, limit: int) -> bool:
    """Whether the line is one word after its indentation (a wheel file name in quotes, a pytest
    node id, a path): nothing can make it shorter, and ruff's E501 spares it (packaging's test
    data under ruff's 88). pycodestyle (flake8) and pylint spare such a word only in a comment or
    a multi-line string, with the indentation well within the limit, and still report it elsewhere."""
    words = line.split()
    if not (len(words) == 1 or (len(words) == 2 and words[0] == "#")):
        return False
    if "max-line-length" not in str(conv.params.get("setting", "")):
        return True
    return (words[0] == "#" or no in lex.interior) and len(line) - len(words[-1]) < limit - 7


def _holds_string(lex: Scan, no: int) -> bool:
    """Whether a string literal starts, ends or runs on line ``no`` (a comment alone does not count)."""
    if no in lex.interior or no in lex.string_lines or any(lit.line == no for lit in lex.literals):
        return True
    return lex.content.get(no, 0) > 0 and no not in lex.comment_col


def _content_long(lex: Scan, no: int, line: str, limit: int) -> bool:
    """Whether the line's code alone fits: it is long because of string or comment text."""
    return no in lex.interior or len(line) - lex.content.get(no, 0) <= limit


def _trailing_offsets(text: str) -> list[int]:
    """Offsets of line ends preceded by a space or tab, found with str.find (memchr speed)."""
    out: list[int] = []
    for needle in (" \n", "\t\n", " \r\n", "\t\r\n"):
        at = text.find(needle)
        while at >= 0:
            out.append(at)
            at = text.find(needle, at + 1)
    if text and text[-1] in " \t":
        out.append(len(text) - 1)
    return sorted(out)


def trailing_whitespace(fc: FileCheck, conv: Convention) -> None:
    text = fc.text
    lines = _Lines(text)
    for offset in _trailing_offsets(text):
        no = lines.at(offset)
        lex = lexed(fc)
        if no in lex.interior or no in lex.string_lines:
            continue  # whitespace inside a multi-line string is content
        fc.emit(
            conv,
            no,
            f"trailing whitespace, but {conv.description}",
            severity=INFO,
            suggestion=fc.lines[no - 1].rstrip(" \t\r"),
        )
