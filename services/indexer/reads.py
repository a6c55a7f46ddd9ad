"""The read documents of the current snapshot: domains, segments, network, history and the
co-change pairs the analyzer learns from, as the typed messages of indexer.proto built from the
snapshot's stored JSON and (history) its rows by path (docs/indexing.md); long lists are
paginated with an offset cursor (services.kit.paging)."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy.ext.asyncio import AsyncSession

from services.contracts.v1 import common_pb2, indexer_pb2
from services.indexer import access, queries
from services.indexer.git import GitError, validate_repo_path
from services.indexer.history_delta import HISTORY_COLUMNS, cochange_rules_of
from services.indexer.models import Repository, SnapshotHistory
from services.kit.db import Database
from services.kit.errors import ServiceError, index_failed
from services.kit.paging import check_limit, decode_offset, encode_offset

DEFAULT_LIMITS = {"segments": 200, "network": 1000, "history": 100}
MAX_LIMIT = 10_000


def _window(page: common_pb2.PageRequest, default: int) -> tuple[int, int]:
    return decode_offset(page.cursor), check_limit(page.limit, default, MAX_LIMIT)


def _page_info(offset: int, limit: int, total: int) -> common_pb2.PageInfo:
    next_cursor = encode_offset(offset + limit) if offset + limit < total else ""
    return common_pb2.PageInfo(next_cursor=next_cursor, total=total)


def _file_history(record: dict[str, Any]) -> indexer_pb2.FileHistory:
    message = indexer_pb2.FileHistory(**{k: v for k, v in record.items() if not k.endswith("_timestamp")})
    for name in ("first_timestamp", "last_timestamp"):
        if record.get(name):  # git author time, Unix seconds
            getattr(message, name).FromSeconds(record[name])
    return message


def checked_path(path: str) -> str:
    try:
        return validate_repo_path(path)
    except GitError as exc:
        raise ServiceError("validation_failed", exc.message, {"field": "path"}) from None


async def indexed(session: AsyncSession, ref: str) -> tuple[Repository, str]:
    """The repository (read access, internal callers allowed) and its current snapshot id."""
    repo = await access.load(session, ref, internal_ok=True)
    if not repo.snapshot_id:
        run = await queries.run_by_id(session, repo.last_run_id) if repo.last_run_id else None
        if run is not None and run.state == "failed":
            raise index_failed(repo.id, run.error_code, run.error)
        raise ServiceError("repo_not_indexed", "the repository has not been indexed yet", {"repo": repo.id})
    return repo, repo.snapshot_id


async def _load(db: Database, ref: str, column: str) -> tuple[Repository, Any]:
    # One snapshot of the database: an index finishing between the two reads replaces the
    # snapshot the first one named (seen as a 500 from GET domains during a re-index).
    async with db.snapshot_session() as session:
        repo, snapshot_id = await indexed(session, ref)
        return repo, orjson.loads(await queries.snapshot_document(session, snapshot_id, column) or b"null")


async def domains(db: Database, request: indexer_pb2.ReadRequest) -> indexer_pb2.Domains:
    repo, body = await _load(db, request.repo, "domains")
    return indexer_pb2.Domains(
        repository_id=repo.id,
        commit=repo.head_sha,
        domains=[indexer_pb2.Domain(**d) for d in body],
        total=len(body),
    )


async def segments(db: Database, request: indexer_pb2.ReadRequest) -> indexer_pb2.Segments:
    repo, body = await _load(db, request.repo, "segments")
    offset, limit = _window(request.page, DEFAULT_LIMITS["segments"])
    return indexer_pb2.Segments(
        repository_id=repo.id,
        commit=repo.head_sha,
        segments=[indexer_pb2.Segment(**s) for s in body[offset : offset + limit]],
        page=_page_info(offset, limit, len(body)),
    )


async def network(db: Database, request: indexer_pb2.ReadRequest) -> indexer_pb2.Network:
    repo, body = await _load(db, request.repo, "network")
    nodes, edges = body.get("nodes", []), body.get("edges", [])
    if request.path:
        path = checked_path(request.path)
        edges = [e for e in edges if path in (e["source"], e["target"])]
        nodes = [n for n in nodes if n["path"] == path]
    offset, limit = _window(request.page, DEFAULT_LIMITS["network"])
    total = max(len(nodes), len(edges))
    cycles = body.get("cycles", [])
    return indexer_pb2.Network(
        repository_id=repo.id,
        commit=repo.head_sha,
        nodes=[indexer_pb2.NetworkNode(**n) for n in nodes[offset : offset + limit]],
        edges=[indexer_pb2.NetworkEdge(**e) for e in edges[offset : offset + limit]],
        cycles=[indexer_pb2.ImportCycle(paths=c) for c in cycles],
        domain_edges=[indexer_pb2.GroupEdge(**e) for e in body.get("domain_edges", [])],
        layer_edges=[indexer_pb2.GroupEdge(**e) for e in body.get("layer_edges", [])],
        counts=indexer_pb2.NetworkCounts(nodes=len(nodes), edges=len(edges), cycles=len(cycles)),
        page=_page_info(offset, limit, total),
    )


async def history(db: Database, request: indexer_pb2.ReadRequest) -> indexer_pb2.History:
    offset, limit = _window(request.page, DEFAULT_LIMITS["history"])
    async with db.snapshot_session() as session:
        repo, snapshot_id = await indexed(session, request.repo)
        path = checked_path(request.path) if request.path else ""
        head = orjson.loads(await queries.snapshot_document(session, snapshot_id, "history") or b"{}")
        if path:
            in_snapshot = await queries.snapshot_file(session, repo.id, snapshot_id, path) is not None
            rows = [row] if (row := await queries.snapshot_history(session, snapshot_id, path)) else []
        else:
            rows = await queries.snapshot_histories(session, snapshot_id, offset=offset, limit=limit)
    reply = indexer_pb2.History(
        repository_id=repo.id, commit=repo.head_sha, depth=head.get("depth", 0), commits=head.get("commits", 0)
    )
    spots = head.get("hot_spots", [])
    if path:
        if not rows and not in_snapshot:
            raise ServiceError("file_not_found", "the path is not in the indexed snapshot", {"path": path})
        reply.single_file.SetInParent()
        reply.single_file.path = path
        if rows:
            reply.single_file.file.CopyFrom(_file_history(_record(rows[0])))
            reply.single_file.cochanges.extend(
                indexer_pb2.CoChangeRule(**c) for c in cochange_rules_of(path, rows[0].rules)
            )
        reply.single_file.hot_spot_rank = next((i + 1 for i, s in enumerate(spots) if s["path"] == path), 0)
        return reply
    reply.repository.SetInParent()  # the view is chosen even when every field is empty
    reply.repository.MergeFrom(
        indexer_pb2.RepositoryHistory(
            huge_commits=head.get("huge_commits", 0),
            hot_spots=[indexer_pb2.HotSpot(**s) for s in spots],
            cochange_pairs=head.get("cochange_pairs", 0),
            files=[_file_history(_record(row)) for row in rows],
            page=_page_info(offset, limit, head.get("file_count", 0)),
        )
    )
    return reply


def _record(row: SnapshotHistory) -> dict[str, Any]:
    return {name: getattr(row, name) for name in HISTORY_COLUMNS[:10]}


async def cochanges(db: Database, request: indexer_pb2.GetRepositoryRequest) -> indexer_pb2.CoChanges:
    async with db.snapshot_session() as session:
        _repo, snapshot_id = await indexed(session, request.repo)
        rows = await queries.snapshot_cochanges(session, snapshot_id)
    reply = indexer_pb2.CoChanges()
    for path, commits, rules in rows:
        if rules:
            for target, support, confidence in orjson.loads(rules):
                reply.pairs.add(path=path, other=target, support=support, confidence=confidence)
        reply.commits_per_file[path] = commits
    return reply
