"""Repositories, indexing and the indexer's read endpoints."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from services.api.schemas import CreateRepository, HostIndex
from services.contracts.v1 import analyzer_pb2, common_pb2, indexer_pb2
from services.gateway import params
from services.gateway.deps import ClientsDep, PrincipalDep, from_document, to_dict
from services.kit.grpc_client import RemoteError, call

router = APIRouter(prefix="/repositories", tags=["repositories"])


def repo_ref(repo_id: str) -> str:
    """Ids are opaque; ``owner:repo`` is the path-safe spelling of a hosted ``owner/repo``."""
    return repo_id.replace(":", "/", 1)


def page(limit: int, cursor: str) -> common_pb2.PageRequest:
    return common_pb2.PageRequest(limit=limit, cursor=cursor)


@router.get("", summary="List repositories the caller can access")
async def list_repositories(
    principal: PrincipalDep,
    clients: ClientsDep,
    limit: int = params.limit(50, 500),
    cursor: params.Cursor = "",
) -> dict[str, Any]:
    response = await call(
        clients.indexer.ListRepositories,
        indexer_pb2.ListRepositoriesRequest(page=page(limit, cursor)),
        principal=principal,
    )
    return to_dict(response)


@router.post("", status_code=201, summary="Register a repository (local path, git URL or hosted owner/repo)")
async def create_repository(body: CreateRepository, principal: PrincipalDep, clients: ClientsDep) -> dict[str, Any]:
    request = indexer_pb2.CreateRepositoryRequest(**body.model_dump(exclude_none=True))
    return to_dict(await call(clients.indexer.CreateRepository, request, principal=principal))


@router.post("/host_index", status_code=202, summary="Create (or find) a hosted repository and index it")
async def host_index(body: HostIndex, principal: PrincipalDep, clients: ClientsDep) -> dict[str, Any]:
    request = indexer_pb2.HostIndexRequest(**body.model_dump(exclude_none=True))
    return to_dict(await call(clients.indexer.HostIndex, request, principal=principal, timeout=60))


@router.get("/{repo_id}", summary="Show a repository")
async def get_repository(repo_id: str, principal: PrincipalDep, clients: ClientsDep) -> dict[str, Any]:
    request = indexer_pb2.GetRepositoryRequest(repo=repo_ref(repo_id))
    return to_dict(await call(clients.indexer.GetRepository, request, principal=principal))


@router.delete("/{repo_id}", status_code=204, summary="Delete a repository and its index data")
async def delete_repository(repo_id: str, principal: PrincipalDep, clients: ClientsDep) -> Response:
    request = indexer_pb2.GetRepositoryRequest(repo=repo_ref(repo_id))
    await call(clients.indexer.DeleteRepository, request, principal=principal)
    return Response(status_code=204)


@router.post("/{repo_id}/index_repo", status_code=202, summary="Trigger an index (incremental=true: refresh)")
async def index_repo(
    repo_id: str, principal: PrincipalDep, clients: ClientsDep, incremental: bool = False
) -> dict[str, Any]:
    request = indexer_pb2.StartIndexRequest(repo=repo_ref(repo_id), incremental=incremental)
    return to_dict(await call(clients.indexer.StartIndex, request, principal=principal))


@router.get("/{repo_id}/index/status", summary="Index state and head SHA of the last successful index")
async def index_status(repo_id: str, principal: PrincipalDep, clients: ClientsDep) -> dict[str, Any]:
    request = indexer_pb2.GetRepositoryRequest(repo=repo_ref(repo_id))
    status = to_dict(await call(clients.indexer.GetIndexStatus, request, principal=principal))
    # `ready` is the indexer's: the analyzer learns the new head from its event a moment later, so
    # the commit of the model analyses use is shown beside the head (null when the analyzer
    # cannot say right now); reviews of the new head are due when the two agree.
    try:
        model = await call(
            clients.analyzer.GetModelStatus, analyzer_pb2.RepoRequest(repo=request.repo), principal=principal
        )
        status["model_commit"] = model.commit
    except RemoteError:
        status["model_commit"] = None
    return status


async def _read(method: Any, repo_id: str, principal: Any, path: str = "", limit: int = 0, cursor: str = "") -> Any:
    request = indexer_pb2.ReadRequest(repo=repo_ref(repo_id), path=path, page=page(limit, cursor))
    return from_document(await call(method, request, principal=principal))


@router.get("/{repo_id}/domains", summary="The repository's major areas")
async def domains(repo_id: str, principal: PrincipalDep, clients: ClientsDep) -> Any:
    return await _read(clients.indexer.GetDomains, repo_id, principal)


@router.get("/{repo_id}/segments", summary="Finer groups inside domains (packages, layers)")
async def segments(
    repo_id: str,
    principal: PrincipalDep,
    clients: ClientsDep,
    limit: int = params.limit(200, 2000),
    cursor: params.Cursor = "",
) -> Any:
    return await _read(clients.indexer.GetSegments, repo_id, principal, limit=limit, cursor=cursor)


@router.get("/{repo_id}/network", summary="Module import graph: nodes, edges, cycles, domain edges")
async def network(
    repo_id: str,
    principal: PrincipalDep,
    clients: ClientsDep,
    limit: int = params.limit(1000, 10000),
    cursor: params.Cursor = "",
) -> Any:
    return await _read(clients.indexer.GetNetwork, repo_id, principal, limit=limit, cursor=cursor)


@router.get("/{repo_id}/history", summary="Change history: whole repository, or one file with ?path=")
async def history(
    repo_id: str,
    principal: PrincipalDep,
    clients: ClientsDep,
    path: params.PathFilter = "",
    limit: int = params.limit(100, 1000),
    cursor: params.Cursor = "",
) -> Any:
    return await _read(clients.indexer.GetHistory, repo_id, principal, path=path, limit=limit, cursor=cursor)
