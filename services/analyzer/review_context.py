"""GetReviewContext (one path) and GetGlobalContext (the repository), as documented in docs/review.md.

Both are built from the in-memory model and the summary stored with it; review_context adds the
path's history and segment from the indexer (two concurrent reads) and its findings and reports
from our own tables.
"""

from __future__ import annotations

import asyncio
from typing import Any

from services.analyzer import queries, repo_lookup, views
from services.analyzer.analysis import clean_path
from services.analyzer.deps import Deps
from services.analyzer.engine import cochange
from services.analyzer.engine.file_check import index_of
from services.analyzer.state import LoadedRepo
from services.kit.errors import ServiceError
from services.source.languages import language_for

_PAST_FINDINGS = 50
_REPORTS = 50


async def _optional_document(deps: Deps, method: str, repo_id: str, path: str = "", limit: int = 0) -> Any:
    try:
        return await deps.indexer.document(method, repo_id, path, limit)
    except ServiceError as exc:
        if exc.code in ("service_unavailable", "timeout"):
            return None
        if exc.code in ("not_implemented", "not_found", "file_not_found", "validation_failed"):
            return None
        raise


def _longest_prefix(items: Any, path: str) -> dict[str, Any] | None:
    """The item whose ``path_prefix`` covers ``path`` most closely (directory or extensionless module)."""
    if not isinstance(items, list):
        return None
    best: dict[str, Any] | None = None
    for item in items:
        if not isinstance(item, dict):
            continue
        prefix = str(item.get("path_prefix", ""))
        covers = path.startswith(prefix) if prefix.endswith("/") or not prefix else path.startswith(prefix + ".")
        if prefix == path:
            covers = True
        if covers and (best is None or len(prefix) > len(str(best.get("path_prefix", "")))):
            best = item
    return best


def _domain(entry: LoadedRepo, path: str) -> dict[str, Any] | None:
    found = _longest_prefix(entry.summary.get("domains"), path)
    if found is not None:
        return found
    assert entry.model is not None
    name = index_of(entry.model).domain_of(path)
    return {"name": name} if name else None


def _history_of(document: Any, path: str) -> Any:
    """The path's own history: the document as the indexer filters it, or its entry for the path."""
    if not isinstance(document, dict):
        return None
    files = document.get("files")
    if isinstance(files, list):
        for item in files:
            if isinstance(item, dict) and item.get("path") == path:
                return {**{k: v for k, v in document.items() if k != "files"}, "file": item}
    return document


async def review_context(deps: Deps, ref: str, path: str) -> dict[str, Any]:
    path = clean_path(path)
    entry = await repo_lookup.resolve(deps, ref, repo_lookup.VIEW)
    assert entry.model is not None
    language = language_for(path)
    segments_doc, history_doc = await asyncio.gather(
        # Segments are not filtered by path: one large page, searched for the path's prefix.
        _optional_document(deps, "GetSegments", entry.id, limit=10_000),
        _optional_document(deps, "GetHistory", entry.id, path),
    )
    async with deps.db.session() as session:
        past = await queries.findings_for_path(session, entry.id, path, _PAST_FINDINGS)
        verdicts = {f.fingerprint: f for f in await queries.feedback_for_path(session, entry.id, path, _REPORTS)}
        external = await queries.external_findings(session, entry.id, path=path, limit=_REPORTS)
    conventions = views.applicable(entry.model, path, language)
    segments = segments_doc.get("segments") if isinstance(segments_doc, dict) else segments_doc
    return {
        "repository_id": entry.id,
        "commit": entry.commit,
        "path": path,
        "language": language or None,
        "domain": _domain(entry, path),
        "segment": _longest_prefix(segments, path),
        "conventions": [views.convention_doc(c) for c in conventions if c.family != cochange.FAMILY],
        "history": {
            "file": _history_of(history_doc, path),
            "co_changes": [
                {
                    "path": c.choice,
                    "rule": c.rule,
                    "share": c.share,
                    "support": c.support,
                    "commits": c.count,
                    "description": c.description,
                }
                for c in conventions
                if c.family == cochange.FAMILY
            ],
            "findings": [
                views.finding(f, verdicts[f.fingerprint].verdict if f.fingerprint in verdicts else None) for f in past
            ],
            "reports": {
                "feedback": [
                    {
                        "finding_id": v.finding_id,
                        "fingerprint": v.fingerprint,
                        "rule": v.rule,
                        "verdict": v.verdict,
                        "comment": v.comment,
                        "at": views.iso(v.updated_at),
                    }
                    for v in verdicts.values()
                ],
                "external": [views.external(x) for x in external],
            },
        },
    }


async def global_context(deps: Deps, ref: str) -> dict[str, Any]:
    entry = await repo_lookup.resolve(deps, ref, repo_lookup.VIEW)
    assert entry.model is not None
    summary = entry.summary
    return {
        "repository_id": entry.id,
        "full_name": entry.full_name or None,
        "commit": entry.commit,
        "head_sha": entry.head_sha,
        "learned_at": views.iso(entry.learned_at),
        "files": summary.get("files", entry.model.files),
        "lines": summary.get("lines"),
        "test_files": summary.get("test_files"),
        "languages": summary.get("languages", []),
        "domains": summary.get("domains", []),
        "conventions": summary.get("conventions", {}),
        "strongest_conventions": [views.convention_doc(c) for c in views.strongest(entry.model.conventions, 15)],
        "report_conventions": [views.convention_doc(c) for c in entry.model.conventions if c.source == "reports"],
        "hot_spots": summary.get("hot_spots", []),
        "history": summary.get("history", {}),
        "config": summary.get("config", {}),
    }
