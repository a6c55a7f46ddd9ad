"""What counts as a convention when the benchmark plants a violation.

These criteria are deliberately simple and fixed (a clearly dominant practice, >= 90%, on a
minimum of evidence), computed from the training files only, and independent of the engine's
thresholds, so tuning the thresholds cannot move the ground truth.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from dataclasses import dataclass, field

from services.analyzer.engine import documentation, layering, structure
from services.analyzer.engine.config import RepoConfig
from services.analyzer.engine.learning import LearnInput, default_domain
from services.analyzer.engine.libraries import classify
from services.analyzer.engine.thresholds import DEFAULT_THRESHOLDS
from services.source.facts import FileFacts
from services.source.naming import DUNDER, NONE, case_style, compatible, words

GT_SHARE = 0.90
ROLES = ("function", "method", "class", "variable", "parameter", "constant", "attribute", "field")
NAME_ROLES = frozenset({*ROLES, "test_function"})


@dataclass
class Truth:
    styles: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)  # (language, role)
    vocab: Counter[str] = field(default_factory=Counter)
    quotes: dict[str, Counter[str]] = field(default_factory=dict)
    widths: dict[str, Counter[int]] = field(default_factory=dict)
    jobs: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)  # (language, job) -> label files
    one_way: dict[str, list[str]] = field(default_factory=dict)  # lower domain -> upper domains
    domain_files: dict[str, list[FileFacts]] = field(default_factory=dict)
    docs: dict[tuple[str, str], Counter[bool]] = field(default_factory=dict)
    typed: dict[tuple[str, str], Counter[bool]] = field(default_factory=dict)
    bare_except: dict[str, Counter[bool]] = field(default_factory=dict)
    prints: dict[str, Counter[bool]] = field(default_factory=dict)

    def dominant_style(self, language: str, role: str, min_count: int = 20) -> str | None:
        counts = self.styles.get((language, role), Counter())
        total = sum(counts.values())
        for style in ("snake_case", "camelCase", "PascalCase", "UPPER_CASE"):
            ok = sum(n for s, n in counts.items() if compatible(s, style))
            if total >= min_count and counts[style] and ok / total >= GT_SHARE:
                return style
        return None

    def dominant(self, counts: Counter[str] | Counter[int] | Counter[bool], min_count: int) -> object | None:
        total = sum(counts.values())
        if total < min_count:
            return None
        value, n = counts.most_common(1)[0]
        return value if n / total >= GT_SHARE else None


def build(train: list[FileFacts]) -> Truth:
    t = Truth()
    for f in train:
        lang = f.language
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
        fm = f.formatting
        if fm is not None:
            q = t.quotes.setdefault(lang, Counter())
            q["double"] += fm.quote_double
            q["single"] += fm.quote_single
            if fm.indent_unit == "space" and fm.indented_lines >= 5 and fm.indent_width:
                t.widths.setdefault(lang, Counter())[fm.indent_width] += 1
        labels: set[tuple[str, str]] = set()
        for imp in f.imports:
            if imp.resolved_path or imp.is_relative or imp.group == "local":
                continue
            for module in [imp.module, *(f"{imp.module}.{n}" for n in imp.names if n)]:
                labels.update(classify(lang, module))
        for job, label in labels:
            t.jobs.setdefault((lang, job), Counter())[label] += 1
        for s in documentation.public_symbols(f):
            t.docs.setdefault((lang, s.kind), Counter())[s.has_docstring] += 1
            if s.kind in documentation.TYPED_KINDS:
                t.typed.setdefault((lang, s.kind), Counter())[s.has_annotations] += 1
        if lang == "python":
            t.bare_except.setdefault(lang, Counter())[any(s.kind == "bare_except" for s in f.statements)] += 1
            if not f.is_test and not _script(f.path):
                t.prints.setdefault(lang, Counter())[any(s.kind == "print_call" for s in f.statements)] += 1
    _layering(t, train)
    return t


def _script(path: str) -> bool:
    from services.analyzer.engine.idioms import is_script

    return is_script(path)


def _layering(t: Truth, train: list[FileFacts]) -> None:
    domains = {f.path: default_domain(f.path) for f in train}
    inp = LearnInput(train, DEFAULT_THRESHOLDS, RepoConfig(), domains, False)
    graph = layering.edges(inp, layering.module_map(train))
    for (upper, lower), files in graph.items():
        if len(files) >= 3 and not graph.get((lower, upper)) and not _nested(upper, lower):
            t.one_way.setdefault(lower, []).append(upper)
    for f in train:
        if not f.is_test and f.module and not f.path.endswith(("__init__.py", "index.js", "index.ts")):
            t.domain_files.setdefault(domains[f.path], []).append(f)


def _nested(a: str, b: str) -> bool:
    return a.startswith(b + "/") or b.startswith(a + "/")


def really_tested(all_files: list[FileFacts]) -> set[str]:
    """Stems and module names that some test of the repository exercises (the real answer)."""
    out: set[str] = set()
    for f in all_files:
        if f.is_test:
            out.add(structure.tested_stem(f.path))
            for target in f.tests_for:
                out.add(posixpath.basename(target).split(".", 1)[0].lower())
                out.add(target.rsplit(".", 1)[-1].lower())
    return out
