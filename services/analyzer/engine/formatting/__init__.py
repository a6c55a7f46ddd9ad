"""Formatting family: indentation, quotes, line length, whitespace, final newline, line endings.

Learned from the per-file measurements in the facts; checked line by line on the text (see
``layout``), because a pull request changes lines, not files. Line length is learned, not assumed: the limit is the
smallest customary limit that the repository's files actually keep.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from services.analyzer.engine.conventions import Convention, Scope, from_counts, make
from services.analyzer.engine.declared import PROSE_AND_DATA
from services.analyzer.engine.file_check import FileCheck
from services.analyzer.engine.findings import INFO
from services.analyzer.engine.formatting import layout
from services.analyzer.engine.learn_inputs import (
    Build,
    FileTallies,
    LearnInput,
    Tally,
    blocks_of,
    merge,
    scoped_conventions,
)
from services.analyzer.engine.textscan import QUOTE_LANGUAGES
from services.analyzer.engine.toolconfig import CUSTOMARY_LIMITS
from services.source.facts import FileFacts

FAMILY = "formatting"
UNIT = "formatting.indent.unit"
WIDTH = "formatting.indent.width"
QUOTES = "formatting.quotes"
LENGTH = "formatting.line_length"
TRAILING = "formatting.trailing_whitespace"
FINAL_NEWLINE = "formatting.final_newline"
LINE_ENDINGS = "formatting.line_endings"

_MIN_INDENTED = 5  # a file with fewer indented lines says nothing about indentation
_MIN_LITERALS = 3

_TEXT: dict[str, tuple[str, str]] = {
    UNIT: ("files", "indent with"),
    WIDTH: ("space-indented files", "indent by"),
    QUOTES: ("string literals", "use"),
    TRAILING: ("files", "have"),
    FINAL_NEWLINE: ("files", ""),
    LINE_ENDINGS: ("files", "use"),
}


def _builder(rule: str, inp: LearnInput) -> Build:
    subject, verb = _TEXT[rule]

    def predicate(choice: str) -> str:
        if rule == FINAL_NEWLINE:
            return "end with a newline" if choice == "yes" else "do not end with a newline"
        label = {"none": "no trailing whitespace", "space": "spaces", "tab": "tabs"}.get(choice, choice)
        if rule == QUOTES:
            label = f"{choice} quotes"
        elif rule == WIDTH:
            label = f"{choice} spaces"
        elif rule == LINE_ENDINGS:
            label = f"{choice.upper()} line endings"
        return f"{verb} {label}"

    def build(language: str, scope: Scope, counts: Counter[str]) -> Convention | None:
        return from_counts(
            FAMILY, rule, scope, counts, inp.thresholds, language=language, subject=subject, predicate=predicate
        )

    return build


def _line_length(inp: LearnInput, language: str, maxima: list[int]) -> Convention | None:
    if not maxima:
        return None
    bar = inp.thresholds.bar(LENGTH)
    total = len(maxima)

    def smallest(share: float) -> int | None:
        return next((c for c in CUSTOMARY_LIMITS if sum(1 for m in maxima if m <= c) >= share * total), None)

    # The tightest limit the files keep at the strict bar is a firmer statement than a tighter one
    # they only mostly keep: "95 % of files stay within 120" beats "85 % stay within 100".
    limit = smallest(bar.strict.min_share) or smallest(bar.loose.min_share) or CUSTOMARY_LIMITS[-1]
    support = sum(1 for m in maxima if m <= limit)
    return make(
        FAMILY,
        LENGTH,
        Scope("language", language),
        str(limit),
        support,
        total,
        inp.thresholds,
        language=language,
        subject="files",
        predicate=f"keep every line within {limit} characters",
        params={"limit": limit, "p95_of_file_maxima": sorted(maxima)[int(0.95 * (total - 1))]},
    )


# One file's formatting observations and its longest judged line.
Observed = tuple[FileTallies, int]


def observe(f: FileFacts, domain: str) -> Observed | None:
    """What one file's layout teaches (``learn`` adds the files' observations in order)."""
    fm = f.formatting
    if fm is None or not f.language or f.lines == 0:
        return None
    lang = f.language
    tallies = FileTallies(lang, f.path, domain)
    if fm.indented_lines >= _MIN_INDENTED and fm.indent_unit in ("space", "tab"):
        tallies.add(UNIT, fm.indent_unit)
        if fm.indent_unit == "space" and fm.indent_width > 0:
            tallies.add(WIDTH, str(fm.indent_width))
    if lang in QUOTE_LANGUAGES and fm.quote_double + fm.quote_single >= _MIN_LITERALS:
        for quote, n in (("double", fm.quote_double), ("single", fm.quote_single)):
            if n:
                tallies.add(QUOTES, quote, n=n)
    tallies.add(TRAILING, "none" if fm.trailing_whitespace_lines == 0 else "some")
    tallies.add(FINAL_NEWLINE, "yes" if fm.final_newline else "no")
    if fm.line_ending in ("lf", "crlf", "mixed"):
        tallies.add(LINE_ENDINGS, fm.line_ending)
    return tallies, fm.max_judged_line_length


def learn(inp: LearnInput, observed: Sequence[Observed | None] | None = None) -> list[Convention]:
    """``observed``: ``observe`` of each of ``inp.files``, when already known."""
    if observed is None:
        observed = [observe(f, inp.domains.get(f.path, "")) for f in inp.files]
    tallies = merge({rule: Tally() for rule in _TEXT}, (o[0] for o in observed if o is not None), blocks_of(observed))
    maxima: dict[str, list[int]] = {}
    for o in observed:
        if o is not None:
            maxima.setdefault(o[0].language, []).append(o[1])
    out: list[Convention] = []
    for rule, tally in tallies.items():
        out.extend(scoped_conventions(tally, _builder(rule, inp), inp, rule))
    for lang, values in maxima.items():
        conv = _line_length(inp, lang, values)
        if conv is not None:
            out.append(conv)
    return out


def check(fc: FileCheck) -> None:
    if fc.facts.formatting is None:
        return
    layout.indentation(fc, fc.find(UNIT), fc.find(WIDTH))
    quotes = fc.find(QUOTES)
    if fc.language in QUOTE_LANGUAGES and quotes is not None and fc.wants(quotes):
        layout.quotes(fc, quotes)
    length = fc.find(LENGTH)
    if length is not None and length.language != fc.language and fc.language in PROSE_AND_DATA:
        length = None  # a repository-wide limit is meant for code, not Markdown or YAML
    if length is not None and length.choice.isdigit() and fc.wants(length):
        layout.long_lines(fc, length)
    trailing = fc.find(TRAILING)
    if trailing is not None and trailing.choice == "none" and fc.wants(trailing):
        layout.trailing_whitespace(fc, trailing)
    _file_level(fc)


def _file_level(fc: FileCheck) -> None:
    fm = fc.facts.formatting
    assert fm is not None
    last = max(1, fc.facts.lines)
    final = fc.find(FINAL_NEWLINE)
    if final is not None and fc.wants(final) and fc.text:
        has = fm.final_newline
        if (final.choice == "yes") != has:
            verb = "does not end" if final.choice == "yes" else "ends"
            fc.emit(final, last, f"file {verb} with a newline, but {final.description}", severity=INFO)
    endings = fc.find(LINE_ENDINGS)
    if endings is not None and fc.wants(endings) and fm.line_ending not in ("none", endings.choice):
        fc.emit(
            endings,
            1,
            f"file uses {fm.line_ending} line endings, but {endings.description}",
            severity=INFO,
            end_line=last,
        )
