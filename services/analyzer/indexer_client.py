"""The analyzer's calls to the indexer: facts, files, changes, co-changes and structure documents.

Every call forwards the caller's principal (``grpc_client.call`` reads it from the request
context), so the indexer authorizes as it does for the gateway. Calls made while consuming an
event carry no principal: they are the service's own.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf.message import Message

from services.api.types import rfc3339
from services.contracts.v1 import common_pb2, indexer_pb2, indexer_pb2_grpc
from services.kit.grpc_client import call, error_from_rpc, make_channel, stream
from services.kit.messages import as_datetime, plain

CoChangePair = tuple[str, str, int, float]


class IndexerClient:
    def __init__(self, address: str, *, deadline: float = 10.0) -> None:
        self.channel = make_channel(address, indexer_pb2.DESCRIPTOR.services_by_name["IndexerService"])
        self.stub = indexer_pb2_grpc.IndexerServiceStub(self.channel)
        self.deadline = deadline

    async def close(self) -> None:
        await self.channel.close()

    async def repository(self, ref: str) -> indexer_pb2.Repository:
        return await call(self.stub.GetRepository, indexer_pb2.GetRepositoryRequest(repo=ref), timeout=self.deadline)

    async def index_status(self, ref: str) -> indexer_pb2.IndexStatus:
        return await call(self.stub.GetIndexStatus, indexer_pb2.GetRepositoryRequest(repo=ref), timeout=self.deadline)

    async def facts(self, repo_id: str, commit: str, *, timeout: float) -> tuple[str, list[tuple[str, bytes]]]:
        """Every file's encoded facts of a snapshot, ``(path, bytes)`` in path order, and the commit
        the indexer answered for. Decoding is the caller's (``snapshot_facts`` decodes only what changed)."""
        out: list[tuple[str, bytes]] = []
        answered = commit
        chunks = stream(
            self.stub.StreamFacts, indexer_pb2.StreamFactsRequest(repo=repo_id, commit=commit), timeout=timeout
        )
        try:
            async for chunk in chunks:
                answered = chunk.commit or answered
                out.extend((blob.path, blob.facts) for blob in chunk.files if blob.facts)
        except grpc.aio.AioRpcError as err:
            raise error_from_rpc(err) from None
        return answered, out

    async def file(self, repo_id: str, path: str, commit: str = "") -> indexer_pb2.FileContent:
        request = indexer_pb2.GetFileRequest(repo=repo_id, path=path, commit=commit)
        return await call(self.stub.GetFile, request, timeout=self.deadline)

    async def files(self, repo_id: str, paths: list[str]) -> dict[str, indexer_pb2.FileContent]:
        """The indexed snapshot's files among ``paths`` (absent when the snapshot lacks one,
        ``skipped`` set when it skipped one), in one streamed call."""
        out: dict[str, indexer_pb2.FileContent] = {}
        chunks = stream(
            self.stub.StreamFiles, indexer_pb2.StreamFilesRequest(repo=repo_id, paths=paths), timeout=self.deadline
        )
        try:
            async for chunk in chunks:
                out.update((f.path, f) for f in chunk.files)
        except grpc.aio.AioRpcError as err:
            raise error_from_rpc(err) from None
        return out

    async def changes(
        self, repo_id: str, *, base: str = "", head: str = "", staged: bool = False
    ) -> indexer_pb2.Changes:
        request = indexer_pb2.GetChangesRequest(repo=repo_id, base=base, head=head, staged=staged)
        return await call(self.stub.GetChanges, request, timeout=max(self.deadline, 60.0))

    async def co_changes(self, repo_id: str) -> list[CoChangePair]:
        reply = await call(self.stub.GetCoChanges, indexer_pb2.GetRepositoryRequest(repo=repo_id), timeout=30.0)
        return [(p.path, p.other, p.support, p.confidence) for p in reply.pairs]

    async def segments(self, repo_id: str, limit: int) -> indexer_pb2.Segments:
        request = indexer_pb2.ReadRequest(repo=repo_id, page=common_pb2.PageRequest(limit=limit))
        return await call(self.stub.GetSegments, request, timeout=self.deadline)

    async def history(self, repo_id: str, path: str) -> indexer_pb2.History:
        request = indexer_pb2.ReadRequest(repo=repo_id, path=path)
        return await call(self.stub.GetHistory, request, timeout=self.deadline)

    async def document(self, method: str, repo_id: str, path: str = "", limit: int = 0) -> dict[str, Any]:
        """A read (``GetDomains``, ``GetSegments``, ``GetHistory``) as the REST endpoint's body: plain
        values, times as RFC 3339 strings, the history's view (repository or one file) inlined."""
        request = indexer_pb2.ReadRequest(repo=repo_id, path=path)
        if limit:
            request.page.limit = limit
        reply = await call(getattr(self.stub, method), request, timeout=self.deadline)
        return read_document(reply)


def read_document(reply: Message) -> dict[str, Any]:
    document = plain(reply, timestamp=lambda t: rfc3339(as_datetime(t)))
    for view in ("repository", "single_file"):  # History's oneof
        document.update(document.pop(view, None) or {})
    return document
