"""GetReviewContext (one path) and GetGlobalContext (the repository), as documented in docs/review.md.

Both are built from the in-memory model and the summary stored with it; review_context adds the
path's history and segment from the indexer (two concurrent reads) and its findings and reports
from our own tables.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any, Protocol, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message

from services.analyzer import queries, repo_lookup, views
from services.analyzer.analysis import clean_path
from services.analyzer.dashboard import convention_counts
from services.analyzer.deps import Deps
from services.analyzer.engine import Convention, cochange
from services.analyzer.engine.file_check import index_of
from services.analyzer.models import FeedbackRow
from services.analyzer.state import LoadedRepo
from services.contracts.v1 import analyzer_pb2, indexer_pb2
from services.kit.errors import ServiceError
from services.kit.messages import timestamp_of_ms
from services.source.languages import language_for

_PAST_FINDINGS = 50
_REPORTS = 50
M = TypeVar("M", bound=Message)


T = TypeVar("T")


async def _optional(read: Awaitable[T]) -> T | None:
    """An indexer read the context can do without: None while the indexer cannot answer it."""
    try:
        return await read
    except ServiceError as exc:
        if exc.code in ("service_unavailable", "timeout"):
            return None
        if exc.code in ("not_implemented", "not_found", "file_not_found", "validation_failed"):
            return None
        raise


class _Prefixed(Protocol):
    @property
    def path_prefix(self) -> str: ...


P = TypeVar("P", bound=_Prefixed)


def _longest_prefix(items: Iterable[P], path: str) -> P | None:
    """The item whose ``path_prefix`` covers ``path`` most closely (directory or extensionless module)."""
    best: P | None = None
    for item in items:
        prefix = item.path_prefix
        covers = path.startswith(prefix) if prefix.endswith("/") or not prefix else path.startswith(prefix + ".")
        if prefix == path:
            covers = True
        if covers and (best is None or len(prefix) > len(best.path_prefix)):
            best = item
    return best


def _messages(items: Any, cls: type[M]) -> list[M]:
    """Items of the model summary (the indexer's documents as stored at learning) as messages."""
    if not isinstance(items, list):
        return []
    return [json_format.ParseDict(i, cls(), ignore_unknown_fields=True) for i in items if isinstance(i, dict)]


def _domain(entry: LoadedRepo, path: str) -> indexer_pb2.Domain | None:
    found = _longest_prefix(_messages(entry.summary.get("domains"), indexer_pb2.Domain), path)
    if found is not None:
        return found
    assert entry.model is not None
    name = index_of(entry.model).domain_of(path)
    return indexer_pb2.Domain(name=name) if name else None


def _co_change(c: Convention) -> analyzer_pb2.CoChangePartner:
    return analyzer_pb2.CoChangePartner(
        path=c.choice, rule=c.rule, share=c.share, support=c.support, commits=c.count, description=c.description
    )


def _feedback(v: FeedbackRow) -> analyzer_pb2.FeedbackRecord:
    return analyzer_pb2.FeedbackRecord(
        finding_id=v.finding_id,
        fingerprint=v.fingerprint,
        rule=v.rule,
        verdict=v.verdict,
        comment=v.comment,
        at=timestamp_of_ms(v.updated_at),
    )


async def review_context(deps: Deps, ref: str, path: str) -> analyzer_pb2.ReviewContext:
    path = clean_path(path)
    entry = await repo_lookup.resolve(deps, ref, repo_lookup.VIEW)
    assert entry.model is not None
    language = language_for(path)
    segments, history = await asyncio.gather(
        # Segments are not filtered by path: one large page, searched for the path's prefix.
        _optional(deps.indexer.segments(entry.id, limit=10_000)),
        _optional(deps.indexer.history(entry.id, path)),
    )
    async with deps.db.session() as session:
        past = await queries.findings_for_path(session, entry.id, path, _PAST_FINDINGS)
        verdicts = {f.fingerprint: f for f in await queries.feedback_for_path(session, entry.id, path, _REPORTS)}
        external = await queries.external_findings(session, entry.id, path=path, limit=_REPORTS)
    conventions = views.applicable(entry.model, path, language)
    return analyzer_pb2.ReviewContext(
        repository_id=entry.id,
        commit=entry.commit,
        path=path,
        language=language or None,
        domain=_domain(entry, path),
        segment=_longest_prefix(segments.segments, path) if segments is not None else None,
        conventions=[views.convention(c) for c in conventions if c.family != cochange.FAMILY],
        history=analyzer_pb2.ReviewHistory(
            file=history,
            co_changes=[_co_change(c) for c in conventions if c.family == cochange.FAMILY],
            findings=[
                views.finding(f, verdicts[f.fingerprint].verdict if f.fingerprint in verdicts else None) for f in past
            ],
            reports=analyzer_pb2.ReviewReports(
                feedback=[_feedback(v) for v in verdicts.values()],
                external=[views.external(x) for x in external],
            ),
        ),
    )


def _config(document: Any) -> analyzer_pb2.ConfigInfo:
    config = document if isinstance(document, dict) else {}
    declared = config.get("declared") or {}
    return analyzer_pb2.ConfigInfo(
        file=config.get("file", ""),
        present=bool(config.get("present", False)),
        errors=config.get("errors", []),
        declared=analyzer_pb2.DeclaredConfig(files=declared.get("files", []), notes=declared.get("notes", [])),
    )


async def global_context(deps: Deps, ref: str) -> analyzer_pb2.GlobalContext:
    entry = await repo_lookup.resolve(deps, ref, repo_lookup.VIEW)
    assert entry.model is not None
    summary = entry.summary
    return analyzer_pb2.GlobalContext(
        repository_id=entry.id,
        full_name=entry.full_name or None,
        commit=entry.commit,
        head_sha=entry.head_sha,
        learned_at=timestamp_of_ms(entry.learned_at),
        files=summary.get("files", entry.model.files),
        lines=summary.get("lines"),
        test_files=summary.get("test_files"),
        languages=_messages(summary.get("languages"), analyzer_pb2.LanguageStats),
        domains=_messages(summary.get("domains"), indexer_pb2.Domain),
        conventions=convention_counts(summary),
        strongest_conventions=[views.convention(c) for c in views.strongest(entry.model.conventions, 15)],
        report_conventions=[views.convention(c) for c in entry.model.conventions if c.source == "reports"],
        hot_spots=_messages(summary.get("hot_spots"), indexer_pb2.HotSpot),
        history=analyzer_pb2.RepositoryActivity(commits=(summary.get("history") or {}).get("commits", 0)),
        config=_config(summary.get("config")),
    )
