"""gRPC transport of the indexer service: read the request, call one rule, convert."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TypeAlias

import grpc

from services.contracts.v1 import indexer_pb2, indexer_pb2_grpc
from services.indexer import files, reads, repositories, runs
from services.indexer.caps import RepositoryCap
from services.indexer.settings import IndexerSettings
from services.indexer.sources import HostApp
from services.kit.db import Database

Ctx: TypeAlias = grpc.aio.ServicerContext


class IndexerServicer(indexer_pb2_grpc.IndexerServiceServicer):
    def __init__(self, db: Database, settings: IndexerSettings, hostapp: HostApp, wake_relay: object = None) -> None:
        self.db = db
        self.settings = settings
        self.hostapp = hostapp
        self.cap = RepositoryCap(settings.billing_addr, deadline=settings.grpc_deadline_seconds)
        self._wake = wake_relay if callable(wake_relay) else (lambda: None)

    async def CreateRepository(
        self, request: indexer_pb2.CreateRepositoryRequest, context: Ctx
    ) -> indexer_pb2.Repository:
        repo, status = await repositories.create(self.db, self.settings, request, self.cap)
        self._wake()  # its repository.changed event: gateways drop their cached listings
        return repositories.to_proto(repo, status)

    async def GetRepository(self, request: indexer_pb2.GetRepositoryRequest, context: Ctx) -> indexer_pb2.Repository:
        repo, status = await repositories.get(self.db, request.repo)
        return repositories.to_proto(repo, status)

    async def ListRepositories(
        self, request: indexer_pb2.ListRepositoriesRequest, context: Ctx
    ) -> indexer_pb2.ListRepositoriesResponse:
        items, page = await repositories.list_page(self.db, request.page)
        return indexer_pb2.ListRepositoriesResponse(
            repositories=[repositories.to_proto(r, s) for r, s in items], page=page
        )

    async def CountRepositories(
        self, request: indexer_pb2.CountRepositoriesRequest, context: Ctx
    ) -> indexer_pb2.RepositoryCount:
        return indexer_pb2.RepositoryCount(owner=request.owner, count=await repositories.count(self.db, request.owner))

    async def DeleteRepository(
        self, request: indexer_pb2.GetRepositoryRequest, context: Ctx
    ) -> indexer_pb2.DeleteRepositoryResponse:
        await repositories.delete(self.db, self.settings, request.repo)
        self._wake()
        return indexer_pb2.DeleteRepositoryResponse()

    async def StartIndex(self, request: indexer_pb2.StartIndexRequest, context: Ctx) -> indexer_pb2.IndexStatus:
        status = await runs.trigger(self.db, request.repo, incremental=request.incremental, ref_name=request.ref)
        self._wake()
        return status

    async def GetIndexStatus(self, request: indexer_pb2.GetRepositoryRequest, context: Ctx) -> indexer_pb2.IndexStatus:
        return await runs.status(self.db, request.repo)

    async def HostIndex(self, request: indexer_pb2.HostIndexRequest, context: Ctx) -> indexer_pb2.IndexStatus:
        repo = await repositories.host_index(self.db, self.settings, self.hostapp, request, self.cap)
        self._wake()
        return await runs.status(self.db, repo.id)

    async def GetDomains(self, request: indexer_pb2.ReadRequest, context: Ctx) -> indexer_pb2.Domains:
        return await reads.domains(self.db, request)

    async def GetSegments(self, request: indexer_pb2.ReadRequest, context: Ctx) -> indexer_pb2.Segments:
        return await reads.segments(self.db, request)

    async def GetNetwork(self, request: indexer_pb2.ReadRequest, context: Ctx) -> indexer_pb2.Network:
        return await reads.network(self.db, request)

    async def GetHistory(self, request: indexer_pb2.ReadRequest, context: Ctx) -> indexer_pb2.History:
        return await reads.history(self.db, request)

    async def StreamFacts(
        self, request: indexer_pb2.StreamFactsRequest, context: Ctx
    ) -> AsyncIterator[indexer_pb2.FactsChunk]:
        async for chunk in files.stream_facts(self.db, request):
            yield chunk

    async def GetFile(self, request: indexer_pb2.GetFileRequest, context: Ctx) -> indexer_pb2.FileContent:
        return await files.get_file(self.db, self.settings, request)

    async def StreamFiles(
        self, request: indexer_pb2.StreamFilesRequest, context: Ctx
    ) -> AsyncIterator[indexer_pb2.FilesChunk]:
        async for chunk in files.stream_files(self.db, self.settings, request):
            yield chunk

    async def GetChanges(self, request: indexer_pb2.GetChangesRequest, context: Ctx) -> indexer_pb2.Changes:
        return await files.get_changes(self.db, self.settings, self.hostapp, request)

    async def GetCoChanges(self, request: indexer_pb2.GetRepositoryRequest, context: Ctx) -> indexer_pb2.CoChanges:
        return await reads.cochanges(self.db, request)
