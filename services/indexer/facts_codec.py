"""How facts are stored: the full ``FileFacts`` per blob, a small summary of it for the
whole-tree passes, and the per-snapshot corrections that import resolution makes.

The summary exists so an incremental index (and structure/history over a large tree) never
has to load and decode every file's identifiers and symbols: it carries only what
``resolve_imports`` and ``structure`` read.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from services.source.facts import FileFacts, Import
from services.source.facts import decode as decode_facts
from services.source.facts import encode as encode_facts

__all__ = ["FileSummary", "decode_facts", "encode_facts"]


class FileSummary(msgspec.Struct):
    path: str
    language: str
    size: int
    lines: int
    blob_sha: str = ""
    skipped: str = ""
    is_test: bool = False
    tests_for: tuple[str, ...] = ()
    module: str = ""
    imports: tuple[Import, ...] = ()


class Resolution(msgspec.Struct, omit_defaults=True):
    """What resolution changed in one file's facts, for this snapshot's tree."""

    imports: tuple[Import, ...] | None = None
    tests_for: tuple[str, ...] | None = None


_summary_encoder = msgspec.msgpack.Encoder()
_summary_decoder = msgspec.msgpack.Decoder(FileSummary)
_resolution_decoder = msgspec.msgpack.Decoder(Resolution)


def summarize(facts: FileFacts) -> FileSummary:
    return FileSummary(
        path=facts.path,
        language=facts.language,
        size=facts.size,
        lines=facts.lines,
        blob_sha=facts.blob_sha,
        skipped=facts.skipped,
        is_test=facts.is_test,
        tests_for=facts.tests_for,
        module=facts.module,
        imports=facts.imports,
    )


def encode_summary(summary: FileSummary) -> bytes:
    return _summary_encoder.encode(summary)


def decode_summary(data: bytes) -> FileSummary:
    return _summary_decoder.decode(data)


def summary_to_facts(summary: FileSummary) -> FileFacts:
    """A ``FileFacts`` with the summary's fields (symbols and identifiers left empty)."""
    return FileFacts(
        path=summary.path,
        language=summary.language,
        size=summary.size,
        lines=summary.lines,
        blob_sha=summary.blob_sha,
        skipped=summary.skipped,
        is_test=summary.is_test,
        tests_for=summary.tests_for,
        module=summary.module,
        imports=summary.imports,
    )


def resolution_of(before: FileFacts | FileSummary, after: FileFacts) -> bytes | None:
    """The encoded corrections turning ``before`` into ``after``, None when nothing changed."""
    change = Resolution(
        imports=after.imports if after.imports != before.imports else None,
        tests_for=after.tests_for if after.tests_for != before.tests_for else None,
    )
    if change.imports is None and change.tests_for is None:
        return None
    return _summary_encoder.encode(change)


def apply_resolution(facts: FileFacts, resolved: bytes | None) -> FileFacts:
    if not resolved:
        return facts
    change = _resolution_decoder.decode(resolved)
    if change.imports is not None:
        facts.imports = change.imports
    if change.tests_for is not None:
        facts.tests_for = change.tests_for
    return facts


def skipped_facts(path: str, language: str, size: int, blob_sha: str, reason: str) -> FileFacts:
    """Facts of a file that is never read (oversized by its tree size, symlink, submodule)."""
    return FileFacts(path=path, language=language, size=size, lines=0, blob_sha=blob_sha, skipped=reason)


def resolve(files: Sequence[FileFacts]) -> list[FileFacts]:
    """Resolve imports to files of the tree with the source library (when it is available)."""
    try:
        from services.source.imports import resolve_imports
    except ImportError:  # the library's resolver is optional; unresolved imports still work
        return list(files)
    result = resolve_imports(list(files))
    if result is None:  # resolved in place
        return list(files)
    resolved = list(result)
    if [f.path for f in resolved] != [f.path for f in files]:
        # Callers pair each result with its input by position: keep the input order.
        by_path = {f.path: f for f in resolved}
        resolved = [by_path.get(f.path, f) for f in files]
    return resolved
