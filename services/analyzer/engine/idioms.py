"""Idioms family: error handling and output habits (bare excepts, swallowed errors, print, log style).

The facts record occurrences, not opportunities, so the evidence is counted in files: "1,204 of
1,210 files never use a bare except". Prints in scripts, ``main()`` functions and ``__main__``
blocks are how command-line tools talk, so they do not count as prints in library code.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Sequence

from services.analyzer.engine.conventions import Convention, Scope, from_counts
from services.analyzer.engine.file_check import FileCheck, enclosing
from services.analyzer.engine.findings import WARNING
from services.analyzer.engine.learn_inputs import (
    Build,
    FileTallies,
    LearnInput,
    Tally,
    blocks_of,
    is_program,
    merge,
    scoped_conventions,
)
from services.source.facts import FileFacts

FAMILY = "idioms"
AVOIDED: dict[str, tuple[str, str]] = {
    # statement kind -> (rule, what it is)
    "bare_except": ("idioms.bare_except", "a bare `except:`"),
    "broad_except": ("idioms.broad_except", "`except Exception`"),
    "swallowed_exception": ("idioms.swallowed_exception", "an exception handler that swallows the error"),
    "print_call": ("idioms.print", "`print()` in library code"),
}
LOG_STYLE = "idioms.logging_format"
# A weaker form of what a statement already was: a bare `except:` narrowed to `except Exception:`
# (or to `except Exception: pass`) improved the handler, and the broad or silent catch left is the
# old handler's, not the change's (dateutil's PEP 8 cleanup). Statement kind -> the rules whose
# finding such a narrowing leaves (engine/baseline.py pairs them with the base's statement).
NARROWED_TO: dict[str, tuple[str, ...]] = {"bare_except": ("idioms.broad_except", "idioms.swallowed_exception")}
STATEMENT_LANGUAGES = frozenset(
    {"python", "javascript", "typescript", "tsx", "go", "java", "csharp", "kotlin", "php", "ruby", "c", "cpp"}
)
# What a print is called where it is not ``print()``.
_PRINT_NAMES = {"javascript": "`console.log()`", "typescript": "`console.log()`", "tsx": "`console.log()`"}


def _what(kind: str, language: str) -> str:
    what = AVOIDED[kind][1]
    if kind == "print_call" and language in _PRINT_NAMES:
        return f"{_PRINT_NAMES[language]} in library code"
    return what


_SCRIPT_FILES = frozenset({"__main__.py", "setup.py", "conftest.py", "manage.py"})
_SCRIPT_FUNCS = frozenset({"main", "_main", "_test", "test", "demo", "_demo", "usage", "_usage", "cli", "_cli"})


def _fix(fc: FileCheck, kind: str, line: int) -> str | None:
    """The flagged line with a bare ``except:`` narrowed to ``except Exception:``, without its
    indentation (the suggestion replaces the flagged text), and only where the repository does
    not also avoid ``except Exception`` (the fix would break the next rule)."""
    if kind != "bare_except" or fc.language != "python" or _enforced(fc, "broad_except") is not None:
        return None
    text = fc.lines[line - 1].strip() if 0 < line <= len(fc.lines) else ""
    return text.replace("except:", "except Exception:", 1) if text.startswith("except:") else None


def is_script(f: FileFacts) -> bool:
    """A program whose prints are its output: a file of a programs directory (scripts, examples,
    benchmarks: got's ``benchmark/server.ts``), a build or tool entry point, or an executable
    file at the repository's root (a ``#!`` line: dateutil's ``updatezinfo.py``), which runs
    beside the library rather than inside it."""
    if posixpath.basename(f.path) in _SCRIPT_FILES or is_program(f.path):
        return True
    return "/" not in f.path and any(s.kind == "shebang" for s in f.statements[:1])


def occurrences(f: FileFacts, kind: str) -> list[int]:
    # The extractor marks prints of a module-level ``if __name__ == "__main__":`` block "main".
    lines = [s.line for s in f.statements if s.kind == kind and s.detail != "main"]
    if kind != "print_call" or not lines:
        return lines
    symbols = sorted(f.symbols, key=lambda s: (s.start_line, -s.end_line))
    out = []
    for line in lines:
        qual = enclosing(symbols, line)
        if qual.rsplit(".", 1)[-1] in _SCRIPT_FUNCS or qual.split(".", 1)[0] in _SCRIPT_FUNCS:
            continue
        out.append(line)
    return out


def _eligible(f: FileFacts, kind: str) -> bool:
    if kind == "print_call":
        return not f.is_test and not is_script(f)
    if kind == "broad_except":
        # A test catches `Exception` on purpose: to assert what a failure does, to render one
        # (loguru's exception-formatting fixtures), to keep a fixture's teardown going. Ruff's
        # BLE001 and pylint's broad-exception-caught are the rules projects switch off for tests.
        return not f.is_test
    if kind == "swallowed_exception":
        # A benchmark or example that feeds invalid input on purpose ignores the error by design,
        # and so does a test that provokes a failure to check what survives it (boltons' spooled
        # file positions after a comparison that raises).
        return not is_program(f.path) and not f.is_test
    return True


def _build(rule: str, kind: str, inp: LearnInput) -> Build:
    def build(language: str, scope: Scope, counts: Counter[str]) -> Convention | None:
        what = _what(kind, language) if kind else ""
        subject = "logging calls" if rule == LOG_STYLE else "files" if rule != "idioms.print" else "library files"

        def predicate(choice: str) -> str:
            if rule == LOG_STYLE:
                return f"format {choice}"
            return f"never use {what}" if choice == "never" else f"use {what}"

        return from_counts(
            FAMILY, rule, scope, counts, inp.thresholds, language=language, subject=subject, predicate=predicate
        )

    return build


def observe(f: FileFacts, domain: str) -> FileTallies:
    """One file's habits (``learn`` adds them in order, for the files of a language whose
    extractor records statements)."""
    tallies = FileTallies(f.language, f.path, domain)
    for kind in AVOIDED:
        if _eligible(f, kind):
            tallies.add(kind, "uses" if occurrences(f, kind) else "never")
    logs = sum(1 for s in f.statements if s.kind == "logging_call")
    eager = sum(1 for s in f.statements if s.kind == "fstring_log")
    if logs:
        tallies.add(LOG_STYLE, "lazily (%-style arguments)", n=max(0, logs - eager))
        if eager:
            tallies.add(LOG_STYLE, "with f-strings", n=eager)
    return tallies


def learn(inp: LearnInput, observed: Sequence[FileTallies] | None = None) -> list[Convention]:
    """``observed``: ``observe`` of each of ``inp.files``, when already known."""
    if observed is None:
        observed = [observe(f, inp.domains.get(f.path, "")) for f in inp.files]
    # Languages whose extractor records these statements: a repository in one of them that never
    # prints (rxjs) has a convention, not a gap in the facts.
    statement_languages = STATEMENT_LANGUAGES | {
        f.language for f in inp.files if any(s.kind != "shebang" for s in f.statements)
    }
    tallies = merge(
        {kind: Tally() for kind in (*AVOIDED, LOG_STYLE)},
        (o for o in observed if o.language in statement_languages),
        blocks_of(observed),
    )
    log_style = tallies.pop(LOG_STYLE)
    out: list[Convention] = []
    for kind, tally in tallies.items():
        rule = AVOIDED[kind][0]
        out.extend(scoped_conventions(tally, _build(rule, kind, inp), inp, rule))
    out.extend(scoped_conventions(log_style, _build(LOG_STYLE, "", inp), inp, LOG_STYLE))
    return out


def _enforced(fc: FileCheck, kind: str) -> Convention | None:
    conv = fc.find(AVOIDED[kind][0])
    if conv is None or conv.choice != "never" or not fc.wants(conv) or not _eligible(fc.facts, kind):
        return None
    if kind == "print_call" and fc.path in fc.index.model.commands:
        # A module the project runs as a command (a console script, a pre-commit hook's script, a
        # subcommand of its command line): what it prints is its output (gunicorn's gunicornc).
        return None
    return conv


def check(fc: FileCheck) -> None:
    enforced = {kind: _enforced(fc, kind) for kind in AVOIDED}
    # One handler, one finding: `except Exception: pass` is one problem, the silence, and
    # `except: pass` the bare clause (it swallows Ctrl-C too), not also the other rule.
    swallowed = set(occurrences(fc.facts, "swallowed_exception")) if enforced["swallowed_exception"] else set()
    bare = set(occurrences(fc.facts, "bare_except")) if enforced["bare_except"] else set()
    for kind, conv in enforced.items():
        if conv is None:
            continue
        lines = occurrences(fc.facts, kind)
        if kind == "print_call" and any(not fc.touches(line, line) for line in lines):
            # The habit is counted in files and this one already prints where the change does not
            # touch it: it is one of the few that do, a command's output module (nox's tasks.py
            # lists sessions with print), and one more print does not make it another.
            continue
        for line in lines:
            if (kind == "broad_except" and line in swallowed) or (kind == "swallowed_exception" and line in bare):
                continue
            what = _what(kind, fc.language)
            fc.emit(conv, line, f"uses {what}; {conv.description}", severity=WARNING, suggestion=_fix(fc, kind, line))
    style = fc.find(LOG_STYLE)
    if style is not None and style.choice.startswith("lazily") and fc.wants(style):
        for s in fc.facts.statements:
            if s.kind == "fstring_log":
                fc.emit(
                    style,
                    s.line,
                    f"logging call formats its message eagerly with an f-string, but {style.description}",
                    severity=WARNING,
                )
