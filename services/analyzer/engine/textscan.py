"""A fast lexical pass over a file's text: where strings and comments are.

The formatting checks need line positions (which literal uses the foreign quote, which lines sit
inside a multi-line string) that the facts do not carry. One compiled regex finds every comment
and string literal in C; the Python loop only runs once per token, which keeps a 1,000-line file
well under a millisecond.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Every alternative starts with one of # ' " (or / ` for brace languages), which lets the regex
# engine skip ahead in C between tokens; loops are "unrolled" so long strings cost no backtracking.
_DQ = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
_SQ = r"'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
_TDQ = r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
_TSQ = r"'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
_PY = re.compile("|".join((r"#[^\n]*", _TDQ, _TSQ, _DQ, _SQ)), re.S)
_BACKTICK = r"`[^`\\]*(?:\\.[^`\\]*)*`"
# A regular-expression literal (`/"name":"x"/`) holds quotes that are not strings. It is told from
# a division by what precedes it: an operator, an opening bracket, a comma or a statement's end.
_REGEX = r"(?P<re>[(,=:\[!&|?{};]\s*)/(?![*/])(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\n\[])+/[a-z]*"
_JS = re.compile("|".join((r"//[^\n]*", r"/\*.*?\*/", _REGEX, _BACKTICK, _DQ, _SQ)), re.S)
_GO = re.compile("|".join((r"//[^\n]*", r"/\*.*?\*/", r"`[^`]*`", _DQ, _SQ)), re.S)
_PATTERNS: dict[str, re.Pattern[str]] = {
    "python": _PY,
    "javascript": _JS,
    "typescript": _JS,
    "tsx": _JS,
    "jsx": _JS,
    "go": _GO,
    "java": _GO,
    "c": _GO,
    "cpp": _GO,
    "c_sharp": _GO,
    "rust": _GO,
    "kotlin": _GO,
}
QUOTE_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx", "jsx"})
LEXED_LANGUAGES = frozenset(_PATTERNS)


@dataclass(slots=True)
class Literal:
    line: int
    start: int  # column of the opening quote (after any prefix)
    end: int  # column after the closing quote
    quote: str  # ' or "
    body: str  # between the quotes, as written


@dataclass(slots=True)
class Scan:
    interior: set[int] = field(default_factory=set)  # lines continuing a multi-line string/comment
    comment_col: dict[int, int] = field(default_factory=dict)  # line -> column where a comment starts
    literals: list[Literal] = field(default_factory=list)  # one-line, non-triple ' and " strings
    string_lines: set[int] = field(default_factory=set)  # lines where a multi-line string starts
    # line -> characters of that line inside string literals and comments (delimiters included),
    # for the lines where such a token starts or ends: text a formatter moves but cannot shorten.
    content: dict[int, int] = field(default_factory=dict)


def scan(text: str, language: str) -> Scan:
    out = Scan()
    pattern = _PATTERNS.get(language)
    if pattern is None:
        return out
    line = 1
    pos = 0
    line_start = 0
    count = text.count
    for m in pattern.finditer(text):
        start, end = m.span()
        nl = count("\n", pos, start)
        if nl:
            line += nl
            line_start = text.rfind("\n", 0, start) + 1
        if m.lastgroup == "re":
            lead = start
            start += len(m.group("re"))  # the regex itself, not the operator before it
            nl = count("\n", lead, start)
            if nl:
                line += nl
                line_start = text.rfind("\n", 0, start) + 1
            out.content[line] = out.content.get(line, 0) + end - start
            pos = end
            continue
        token = m.group()
        inner = count("\n", start, end)
        first = token[0]
        if inner:
            first_end = text.find("\n", start)
            out.content[line] = out.content.get(line, 0) + first_end - start
            last = line + inner
            out.content[last] = out.content.get(last, 0) + end - (text.rfind("\n", 0, end) + 1)
        else:
            out.content[line] = out.content.get(line, 0) + end - start
        if first in "#/":
            out.comment_col.setdefault(line, start - line_start)
            if inner:
                out.interior.update(range(line + 1, line + inner + 1))
        elif inner:
            out.string_lines.add(line)
            out.interior.update(range(line + 1, line + inner + 1))
        elif first in "'\"" and not token.startswith(("'''", '"""')):
            col = start - line_start
            out.literals.append(Literal(line, col, col + len(token), first, token[1:-1]))
        if inner:
            line += inner
            line_start = text.rfind("\n", 0, end) + 1
        pos = end
    return out


def code_only(text: str, language: str) -> str:
    """``text`` without its comments and, in Python, without the docstring (the first string that
    opens a line right after a header's colon): what a definition does, not what it says about
    itself. A rename that also trims a docstring's doctest keeps the same code."""
    pattern = _PATTERNS.get(language)
    if pattern is None:
        return text
    out: list[str] = []
    pos = 0
    last = ""  # the last character of code kept so far, whitespace aside
    docstring = language == "python"
    for m in pattern.finditer(text):
        start, end = m.span()
        token = m.group()
        before = text[pos:start]
        if before.strip():
            last = before.rstrip()[-1]
        opens_line = not text[text.rfind("\n", 0, start) + 1 : start].strip()
        if token[0] in "#/" and m.lastgroup != "re":
            out.append(before + "\n" * token.count("\n"))  # a comment; the lines stay where they were
        elif docstring and token[0] in "'\"" and opens_line and last == ":":
            out.append(before + "\n" * token.count("\n"))
            docstring = False
        else:
            out.append(text[pos:end])
            last = token[-1]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def requote(body: str, quote: str) -> str | None:
    """``body`` delimited by ``quote`` instead, or None when that needs new escapes."""
    other = "'" if quote == '"' else '"'
    if quote in body.replace("\\" + quote, ""):
        return None
    return quote + body.replace("\\" + other, other) + quote
