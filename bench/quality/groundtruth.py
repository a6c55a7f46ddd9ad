"""What counts as a convention when the benchmark plants a violation.

These criteria are deliberately simple and fixed (a clearly dominant practice, >= 90%, on a
minimum of evidence), computed from the training files only, and independent of the engine: no
engine threshold, table, definition or parser is used: identifiers, imports and definitions come
from the benchmark's own parser (``reader``: Python's ``ast``, regular expressions for
JavaScript/TypeScript), the rest from its own reading of the text (``scan``), judged with its own
definitions (``terms``, ``scan``).
"""

from __future__ import annotations

import hashlib
import posixpath
from collections import Counter
from dataclasses import dataclass, field

from bench.quality import scan, terms
from bench.quality.reader import DUNDER, NONE, Facts, case_style, fits, words

GT_SHARE = 0.90
ROLES = ("function", "method", "class", "variable", "parameter", "constant", "attribute", "field")
NAME_ROLES = frozenset({*ROLES, "test_function"})
LINE_LIMITS = (79, 80, 88, 99, 100, 110, 119, 120)


@dataclass
class Own:
    """The benchmark's own reading of one file (cached by content)."""

    layout: scan.Layout
    width: int | None
    py: scan.PySummary | None
    js: scan.JsSummary | None = None


_OWN: dict[tuple[str, str], Own] = {}


def own(f: Facts, text: str) -> Own:
    key = (f.path, hashlib.sha1(text.encode()).hexdigest())
    hit = _OWN.get(key)
    if hit is None:
        lay = scan.layout(text, f.language)
        width = scan.indent_width(text, lay) if lay.ok else None
        py = scan.python_summary(text, f.path) if f.language == "python" else None
        js = scan.js_summary(text, lay) if f.language in scan.JS_LANGUAGES else None
        hit = _OWN[key] = Own(lay, width, py, js)
    return hit


@dataclass
class Truth:
    styles: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)  # (language, role)
    vocab: Counter[str] = field(default_factory=Counter)
    quotes: dict[str, Counter[str]] = field(default_factory=dict)
    widths: dict[str, Counter[int]] = field(default_factory=dict)
    jobs: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)  # (language, job) -> label files
    tops: frozenset[str] = frozenset()  # top-level directories of the repository
    own: frozenset[str] = frozenset()  # names the repository's own code is imported by
    one_way: dict[str, list[str]] = field(default_factory=dict)  # lower domain -> upper domains
    domain_files: dict[str, list[Facts]] = field(default_factory=dict)
    docs: dict[tuple[str, str], Counter[bool]] = field(default_factory=dict)
    typed: dict[tuple[str, str], Counter[bool]] = field(default_factory=dict)
    bare_except: dict[str, Counter[bool]] = field(default_factory=dict)
    prints: dict[str, Counter[bool]] = field(default_factory=dict)
    over: dict[str, Counter[int]] = field(default_factory=dict)  # language -> limit -> lines longer
    line_files: Counter[str] = field(default_factory=Counter)

    def line_limit(self, language: str) -> int | None:
        """The line length the repository keeps: the smallest usual limit that at most 1 in 1,000
        lines exceeds, on 10 files and 1,000 lines at least."""
        over = self.over.get(language, Counter())
        total = over.get(0, 0)
        if self.line_files[language] < 10 or total < 1000:
            return None
        for limit in LINE_LIMITS:
            if over[limit] <= total / 1000:
                return limit
        return None

    def dominant_style(self, language: str, role: str, min_count: int = 20) -> str | None:
        counts = self.styles.get((language, role), Counter())
        total = sum(counts.values())
        for style in ("snake_case", "camelCase", "PascalCase", "UPPER_CASE"):
            ok = sum(n for s, n in counts.items() if fits(s, style))
            if total >= min_count and counts[style] and ok / total >= GT_SHARE:
                return style
        return None

    def dominant(self, counts: Counter[str] | Counter[int] | Counter[bool], min_count: int) -> object | None:
        total = sum(counts.values())
        if total < min_count:
            return None
        value, n = counts.most_common(1)[0]
        return value if n / total >= GT_SHARE else None

    def domain(self, path: str) -> str:
        """A domain is a top-level directory of the repository; when all code sits in one top-level
        directory (one package, one ``src/``), the directories right below it. Files outside every
        domain (at the root of that one directory) have none."""
        dirs = path.split("/")[:-1]
        if len(self.tops) == 1:
            return "/".join(dirs[:2]) if len(dirs) >= 2 else ""
        return dirs[0] if dirs else ""


def external_modules(f: Facts) -> list[str]:
    """Modules of other projects a file imports (``from a import b`` also counts as ``a.b``)."""
    out: list[str] = []
    for imp in f.imports:
        if imp.resolved or imp.relative or imp.module.startswith("."):
            continue
        out.append(imp.module)
        if f.language == "python":
            out.extend(f"{imp.module}.{n}" for n in imp.names if n and n != "*")
    return out


def build(train: list[Facts], texts: dict[str, bytes]) -> Truth:
    tops = frozenset(f.path.split("/")[0] for f in train if "/" in f.path)
    # A ``src/`` layout puts the packages one level down: ``src/structlog/`` is imported as
    # ``structlog``, which is the repository itself, never a foreign library.
    under_src = {f.path.split("/")[1].removesuffix(".py") for f in train if f.path.startswith("src/")}
    t = Truth(tops=tops, own=tops | frozenset(under_src))
    for f in train:
        lang = f.language
        mine = own(f, texts[f.path].decode("utf-8-sig"))
        seen: set[tuple[str, str]] = set()
        for ident in f.identifiers:
            if ident.role not in NAME_ROLES or (ident.role, ident.name) in seen:
                continue
            seen.add((ident.role, ident.name))
            style = case_style(ident.name)
            if style not in (DUNDER, NONE):
                t.styles.setdefault((lang, ident.role), Counter())[style] += 1
        for name in {i.name for i in f.identifiers if i.role in NAME_ROLES}:
            t.vocab.update(set(words(name)))
        if mine.layout.ok:
            over = t.over.setdefault(lang, Counter())
            t.line_files[lang] += 1
            for line in texts[f.path].decode("utf-8-sig").split("\n"):
                over[0] += 1
                for limit in LINE_LIMITS:
                    if len(line) > limit:
                        over[limit] += 1
            q = t.quotes.setdefault(lang, Counter())
            for lit in mine.layout.literals:
                q["double" if lit.quote == '"' else "single"] += 1
            if mine.width:
                t.widths.setdefault(lang, Counter())[mine.width] += 1
        labels: set[tuple[str, str]] = set()
        for module in external_modules(f):
            labels.update(terms.jobs_of(lang, module))
        for job, label in labels:
            t.jobs.setdefault((lang, job), Counter())[label] += 1
        py = mine.py
        if py is not None and py.ok:
            for s in py.public:
                t.docs.setdefault((lang, s.kind), Counter())[s.documented] += 1
                if s.kind != "class" and not s.overloaded:
                    t.typed.setdefault((lang, s.kind), Counter())[s.annotated] += 1
            t.bare_except.setdefault(lang, Counter())[py.bare_except] += 1
            if not scan.is_test_path(f.path) and not scan.is_program(f.path):
                t.prints.setdefault(lang, Counter())[py.library_print] += 1
        js = mine.js
        if js is not None and js.ok and not scan.is_test_path(f.path):
            # TypeScript overloads declare a name several times; it is documented once.
            named: dict[tuple[str, str], bool] = {}
            for pub in js.public:
                named[(pub.kind, pub.name)] = named.get((pub.kind, pub.name), False) or pub.documented
            for (kind, _), documented in named.items():
                t.docs.setdefault((lang, kind), Counter())[documented] += 1
            if not scan.is_program(f.path):
                t.prints.setdefault(lang, Counter())[js.library_print] += 1
    _layering(t, train)
    return t


def _layering(t: Truth, train: list[Facts]) -> None:
    """Domain B sits below A when >= 3 files of A import B and no file of B imports A."""
    graph: dict[tuple[str, str], set[str]] = {}
    for f in train:
        src = t.domain(f.path)
        if not src or scan.is_test_path(f.path):
            continue
        for imp in f.imports:
            dst = t.domain(imp.resolved) if imp.resolved else ""
            if dst and dst != src:
                graph.setdefault((src, dst), set()).add(f.path)
    for (upper, lower), files in graph.items():
        if len(files) >= 3 and not graph.get((lower, upper)):
            t.one_way.setdefault(lower, []).append(upper)
    for f in train:
        stem = f.path.rsplit("/", 1)[-1].split(".", 1)[0]
        if t.domain(f.path) and not scan.is_test_path(f.path) and stem not in ("__init__", "index"):
            t.domain_files.setdefault(t.domain(f.path), []).append(f)


def tests_its_modules(train: list[Facts]) -> bool:
    """Whether the repository tests its modules: a test file named after >= 90 % of its public
    library modules, among 10 at least (training files only)."""
    tested = {scan.tested_name(f.path) for f in train if scan.is_test_path(f.path)}
    modules = [f.path for f in train if scan.is_library_module(f.path)]
    if len(modules) < 10:
        return False
    named = sum(1 for p in modules if posixpath.basename(p).split(".", 1)[0].lower() in tested)
    return named / len(modules) >= GT_SHARE
