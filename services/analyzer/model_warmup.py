"""Paying a new model's first-check costs while it is learned, not in the first request after.

A model answers its first check slower than the next ones: the rule index (``file_check.ModelIndex``)
and the families' lookup tables (module maps, vocabulary, co-change partners, layering) are built
lazily on first use and kept on the model. The learning run, which already holds the snapshot's
facts, checks a few of the snapshot's own files (the busiest of each main language, read from the
indexer) and a change of them against the new model before it replaces the old one in memory, so
every one of those tables is built off the request path. The findings are thrown away.
"""

from __future__ import annotations

from collections import Counter

from services.analyzer.engine import ConventionModel, check, check_change
from services.analyzer.engine.file_check import index_of
from services.source.facts import FileFacts

# Files checked per new model: one per language, for the languages with the most files.
SAMPLE_LANGUAGES = 3


def samples(facts: list[FileFacts], languages: int = SAMPLE_LANGUAGES) -> list[FileFacts]:
    """The parsed, non-test file with the most names and imports of each of the main languages."""
    parsed = [f for f in facts if not f.skipped and f.language]
    counts = Counter(f.language for f in parsed)
    out: list[FileFacts] = []
    for language, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:languages]:
        candidates = [f for f in parsed if f.language == language and not f.is_test] or [
            f for f in parsed if f.language == language
        ]
        out.append(max(candidates, key=lambda f: (len(f.identifiers) + len(f.imports), f.path)))
    return out


def prepare(model: ConventionModel, files: list[tuple[FileFacts, str]]) -> None:
    """Build what checking against ``model`` builds on first use (CPU only: run it in a thread)."""
    index_of(model)
    for facts, text in files:
        check(facts, text, model)
    paths = [facts.path for facts, _ in files]
    if paths:
        check_change(paths, [], model)
