"""Repositories, indexing and the indexer's read endpoints."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Request, Response

from services.api.repositories import (
    Domains,
    FileContent,
    History,
    IndexStatus,
    IndexStatusWithModel,
    Network,
    Page,
    Repository,
    RepositoryList,
    Segments,
)
from services.api.schemas import CreateRepository, HostIndex
from services.api.types import from_ms
from services.contracts.v1 import analyzer_pb2, common_pb2, indexer_pb2
from services.gateway import params
from services.gateway.deps import ClientsDep, PrincipalDep
from services.gateway.listings import RepositoryListCache, settled
from services.kit.grpc_client import RemoteError, call
from services.kit.identity import accessible_owners
from services.kit.messages import plain

router = APIRouter(prefix="/repositories", tags=["repositories"])


def repo_ref(repo_id: str) -> str:
    """Ids are opaque; ``owner:repo`` is the path-safe spelling of a hosted ``owner/repo``."""
    return repo_id.replace(":", "/", 1)


def page(limit: int, cursor: str) -> common_pb2.PageRequest:
    return common_pb2.PageRequest(limit=limit, cursor=cursor)


# --- from the indexer's messages to the bodies (times there are Unix milliseconds) -------------


def _status_values(message: indexer_pb2.IndexStatus) -> dict[str, Any]:
    times = {name: from_ms(getattr(message, name)) for name in ("queued_at", "started_at", "finished_at")}
    return {**plain(message), **times}


def status_body(message: indexer_pb2.IndexStatus) -> IndexStatus:
    return IndexStatus.model_validate(_status_values(message))


def repository(message: indexer_pb2.Repository) -> Repository:
    index = status_body(message.index) if message.HasField("index") else None
    return Repository.model_validate({**plain(message), "created_at": from_ms(message.created_at), "index": index})


def history_body(message: indexer_pb2.History) -> History:
    values = plain(message)
    for view in ("repository", "single_file"):  # the oneof: one view's fields, inlined
        values.update(values.pop(view, None) or {})
    return History.model_validate(values)


def network_body(message: indexer_pb2.Network) -> Network:
    return Network.model_validate({**plain(message), "cycles": [list(c.paths) for c in message.cycles]})


# --- routes ------------------------------------------------------------------------------------


@router.get("", response_model=RepositoryList, summary="List repositories the caller can access")
async def list_repositories(
    request: Request,
    principal: PrincipalDep,
    clients: ClientsDep,
    limit: int = params.limit(50, 500),
    cursor: params.RepositoryCursor = "",
) -> Response:
    # Answered from this worker's cache while the indexer's events say it is true (docs/accounts.md,
    # "Cached listings"); the body is kept rendered: a hit costs neither a round trip nor pydantic.
    listings: RepositoryListCache | None = getattr(request.app.state, "listings", None)
    key = (tuple(accessible_owners(principal)), limit, cursor)
    body = listings.get(key) if listings is not None else None
    if body is None:
        generation = listings.generation if listings is not None else 0
        response = await call(
            clients.indexer.ListRepositories,
            indexer_pb2.ListRepositoriesRequest(page=page(limit, cursor)),
            principal=principal,
        )
        listing = RepositoryList(
            repositories=[repository(r) for r in response.repositories], page=Page.model_validate(plain(response.page))
        )
        body = orjson.dumps(listing.model_dump(mode="json"))
        if listings is not None and settled(response):
            listings.put(key, body, 0, generation)
    return Response(body, media_type="application/json")


def listings_changed(request: Request, reason: str) -> None:
    """This worker made a change a listing shows: its own kept listings go at once (the others'
    go with the indexer's event, within the bound)."""
    listings: RepositoryListCache | None = getattr(request.app.state, "listings", None)
    if listings is not None:
        listings.clear(reason)


@router.post(
    "",
    status_code=201,
    response_model=Repository,
    summary="Register a repository (local path, git URL or hosted owner/repo)",
)
async def create_repository(
    request: Request, body: CreateRepository, principal: PrincipalDep, clients: ClientsDep
) -> Repository:
    create = indexer_pb2.CreateRepositoryRequest(**body.model_dump(exclude_none=True))
    created = repository(await call(clients.indexer.CreateRepository, create, principal=principal))
    listings_changed(request, "registered here")
    return created


@router.post(
    "/host_index",
    status_code=202,
    response_model=IndexStatus,
    summary="Create (or find) a hosted repository and index it",
)
async def host_index(request: Request, body: HostIndex, principal: PrincipalDep, clients: ClientsDep) -> IndexStatus:
    start = indexer_pb2.HostIndexRequest(**body.model_dump(exclude_none=True))
    status = status_body(await call(clients.indexer.HostIndex, start, principal=principal, timeout=60))
    listings_changed(request, "index queued here")
    return status


@router.get("/{repo_id}", response_model=Repository, summary="Show a repository")
async def get_repository(repo_id: str, principal: PrincipalDep, clients: ClientsDep) -> Repository:
    request = indexer_pb2.GetRepositoryRequest(repo=repo_ref(repo_id))
    return repository(await call(clients.indexer.GetRepository, request, principal=principal))


@router.delete(
    "/{repo_id}",
    status_code=204,
    response_class=Response,
    response_model=None,
    summary="Delete a repository and its index data",
)
async def delete_repository(request: Request, repo_id: str, principal: PrincipalDep, clients: ClientsDep) -> Response:
    delete = indexer_pb2.GetRepositoryRequest(repo=repo_ref(repo_id))
    await call(clients.indexer.DeleteRepository, delete, principal=principal)
    listings_changed(request, "deleted here")
    return Response(status_code=204)


@router.post(
    "/{repo_id}/index_repo",
    status_code=202,
    response_model=IndexStatus,
    summary="Trigger an index (incremental=true: refresh)",
)
async def index_repo(
    request: Request, repo_id: str, principal: PrincipalDep, clients: ClientsDep, incremental: bool = False
) -> IndexStatus:
    start = indexer_pb2.StartIndexRequest(repo=repo_ref(repo_id), incremental=incremental)
    status = status_body(await call(clients.indexer.StartIndex, start, principal=principal))
    listings_changed(request, "index queued here")
    return status


@router.get(
    "/{repo_id}/index/status",
    response_model=IndexStatusWithModel,
    summary="Index state and head SHA of the last successful index",
)
async def index_status(repo_id: str, principal: PrincipalDep, clients: ClientsDep) -> IndexStatusWithModel:
    request = indexer_pb2.GetRepositoryRequest(repo=repo_ref(repo_id))
    status = await call(clients.indexer.GetIndexStatus, request, principal=principal)
    # `ready` is the indexer's: the analyzer learns the new head from its event a moment later, so
    # the commit of the model analyses use is shown beside the head (null when the analyzer
    # cannot say right now); reviews of the new head are due when the two agree.
    model_commit: str | None
    try:
        model = await call(
            clients.analyzer.GetModelStatus, analyzer_pb2.RepoRequest(repo=request.repo), principal=principal
        )
        model_commit = model.commit
    except RemoteError:
        model_commit = None
    return IndexStatusWithModel.model_validate({**_status_values(status), "model_commit": model_commit})


def _read_request(repo_id: str, path: str = "", limit: int = 0, cursor: str = "") -> indexer_pb2.ReadRequest:
    return indexer_pb2.ReadRequest(repo=repo_ref(repo_id), path=path, page=page(limit, cursor))


@router.get("/{repo_id}/domains", response_model=Domains, summary="The repository's major areas")
async def domains(repo_id: str, principal: PrincipalDep, clients: ClientsDep) -> Domains:
    reply = await call(clients.indexer.GetDomains, _read_request(repo_id), principal=principal)
    return Domains.model_validate(plain(reply))


@router.get("/{repo_id}/segments", response_model=Segments, summary="Finer groups inside domains (packages, layers)")
async def segments(
    repo_id: str,
    principal: PrincipalDep,
    clients: ClientsDep,
    limit: int = params.limit(200, 2000),
    cursor: params.OffsetCursor = "",
) -> Segments:
    request = _read_request(repo_id, limit=limit, cursor=cursor)
    return Segments.model_validate(plain(await call(clients.indexer.GetSegments, request, principal=principal)))


@router.get(
    "/{repo_id}/network",
    response_model=Network,
    summary="Module import graph: nodes, edges, cycles, domain edges",
)
async def network(
    repo_id: str,
    principal: PrincipalDep,
    clients: ClientsDep,
    limit: int = params.limit(1000, 10000),
    cursor: params.OffsetCursor = "",
) -> Network:
    request = _read_request(repo_id, limit=limit, cursor=cursor)
    return network_body(await call(clients.indexer.GetNetwork, request, principal=principal))


@router.get(
    "/{repo_id}/history",
    response_model=History,
    # The two views (repository, one file) leave the other's fields out rather than null.
    response_model_exclude_unset=True,
    summary="Change history: whole repository, or one file with ?path=",
)
async def history(
    repo_id: str,
    principal: PrincipalDep,
    clients: ClientsDep,
    path: params.PathFilter = "",
    limit: int = params.limit(100, 1000),
    cursor: params.OffsetCursor = "",
) -> History:
    request = _read_request(repo_id, path=path, limit=limit, cursor=cursor)
    return history_body(await call(clients.indexer.GetHistory, request, principal=principal))


@router.get(
    "/{repo_id}/file",
    response_model=FileContent,
    summary="One file of the indexed snapshot, as text (?path=)",
)
async def file_content(
    repo_id: str, principal: PrincipalDep, clients: ClientsDep, path: params.RequiredPath
) -> FileContent:
    request = indexer_pb2.GetFileRequest(repo=repo_ref(repo_id), path=path)
    return file_body(repo_id, await call(clients.indexer.GetFile, request, principal=principal))


def file_body(repo_id: str, reply: indexer_pb2.FileContent) -> FileContent:
    return FileContent(
        repository_id=repo_id,
        path=reply.path,
        commit=reply.commit,
        blob_sha=reply.blob_sha,
        content=reply.content.decode("utf-8", errors="replace"),
    )
