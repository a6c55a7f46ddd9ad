"""Formatting facts of one text file, computed with whole-text regex and bytes operations."""

from __future__ import annotations

import re
from collections import Counter
from itertools import compress, repeat
from operator import gt, sub

from services.source.facts import Formatting

_STAR_LINE = re.compile(r"\n[ \t]*\*")
# A trailing comment that is only a pragma: a line long only because of it is not long.
PRAGMA_COMMENT = re.compile(
    r"(?:#|//|/\*)\s*(?:noqa|type:\s*ignore|ty:\s*ignore|pyright:\s*ignore|pylint:|eslint-disable|prettier-ignore|"
    r"fmt:\s*skip|"
    r"isort:\s*skip|nosec|pragma:|codereview:|NOLINT|@ts-|mypy:|ruff:|flake8:|pyre-)",
    re.I,
)


def without_pragma(line: str, comment_col: int | None = None) -> str:
    """``line`` without a trailing comment that only carries pragmas (for measuring its length)."""
    m = PRAGMA_COMMENT.search(line, comment_col or 0)
    if m is None:
        return line
    return line[: m.start()].rstrip()


def judged(line: str) -> bool:
    """Whether the line-length check judges a line at all: one holding a URL it does not (a URL
    cannot be wrapped; pycodestyle's and ruff's E501 spare such lines too)."""
    return "://" not in line


def _judged_longest(body: str, lines: list[str], longest: int) -> int:
    """The longest line as the line-length check measures it (``judged`` lines, pragma comments
    left out), so that the limit learned from the files is the one the check holds lines to."""
    if "://" not in body and not PRAGMA_COMMENT.search(body):
        return longest
    best = 0
    for line in lines:
        if len(line) > best and judged(line):
            best = max(best, len(without_pragma(line)))
    return best


_BUCKETS = 100  # histogram buckets of 10 chars; the last one also holds every longer line


def compute(text: str, data: bytes, quote_double: int = 0, quote_single: int = 0) -> Formatting:
    """Formatting facts of ``text`` (the decoded ``data``).

    Line lengths are in characters with a tab counting as one, measured over non-empty
    lines (blank lines say nothing about wrapping).
    """
    crlf = data.count(b"\r\n") if b"\r" in data else 0
    body = text.replace("\r\n", "\n") if crlf else text
    # Whole-list builtins (map/compress/Counter over C iterators) instead of a Python loop per
    # line, and cheap scans to skip work most files do not need (tabs, comment continuations):
    # formatting runs on every file, so it must stay a small fraction of parse time.
    lines = body.split("\n")
    lf = len(lines) - 1 - crlf
    lengths = list(map(len, lines))
    stripped = list(map(str.lstrip, lines))
    content = list(map(len, stripped))
    by_length = Counter(lengths)
    by_length.pop(0, None)
    longest, p95, histogram = _lengths(by_length)

    # Indentation of non-blank lines; lines starting with "*" continue a block comment
    # (" * text" in JSDoc/Javadoc) and their one-space offset is not an indentation choice.
    kept: list[int] | list[bool] = content
    if _STAR_LINE.search(body):
        kept = list(map(gt, map(bool, content), map(str.startswith, stripped, repeat("*"))))
    widths = list(compress(map(sub, lengths, content), kept))
    has_tabs = "\t" in body
    tabs = sum(map(str.startswith, compress(lines, kept), repeat("\t"))) if has_tabs else 0
    spaces = len(widths) - widths.count(0) - tabs
    unit = "tab" if tabs > spaces else "space" if spaces else ""
    width = 0
    if unit == "space":
        steps = [(n, step) for step, n in Counter(map(sub, widths[1:], widths)).items() if step > 0]
        if steps:
            # Ties go to the smaller step: a deeper "step" is usually a continuation line.
            width = min(steps, key=lambda item: (-item[0], item[1]))[1]
    trailing = body.count(" \n") + (body.count("\t\n") if has_tabs else 0) + (body[-1:] in (" ", "\t"))
    if crlf and lf:
        ending = "mixed"
    elif crlf:
        ending = "crlf"
    elif lf:
        ending = "lf"
    else:
        ending = "none"
    return Formatting(
        indent_unit=unit,
        indent_width=width,
        indented_lines=tabs + spaces,
        tab_indented_lines=tabs,
        space_indented_lines=spaces,
        quote_double=quote_double,
        quote_single=quote_single,
        max_line_length=longest,
        max_judged_line_length=_judged_longest(body, lines, longest),
        line_length_p95=p95,
        long_lines=tuple(histogram),
        trailing_whitespace_lines=trailing,
        final_newline=data.endswith(b"\n"),
        line_ending=ending,
    )


def _lengths(by_length: Counter[int]) -> tuple[int, int, tuple[int, ...]]:
    """Longest line, 95th percentile and the histogram by 10-char buckets of non-empty lines."""
    if not by_length:
        return 0, 0, ()
    total = sum(by_length.values())
    rank = min(total - 1, (total * 95) // 100)  # index of the p95 line in sorted order
    histogram = [0] * (min(max(by_length) // 10, _BUCKETS - 1) + 1)
    p95 = 0
    seen = 0
    for length in sorted(by_length):
        count = by_length[length]
        if seen <= rank < seen + count:
            p95 = length
        seen += count
        histogram[min(length // 10, _BUCKETS - 1)] += count
    return max(by_length), p95, tuple(histogram)
