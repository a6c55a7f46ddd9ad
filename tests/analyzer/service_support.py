"""A real analyzer gRPC server on a fresh database, in front of an in-memory IndexerService.

The stand-in indexer speaks the real contract (``indexer.proto``) over a real gRPC server, with
facts from the real extractor, and authorizes by owner as the indexer does; it counts calls so
tests can hold the analyzer to its round-trip budget.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest

from services.analyzer.deps import Deps
from services.analyzer.servicer import AnalyzerServicer
from services.analyzer.settings import AnalyzerSettings
from services.contracts.v1 import analyzer_pb2, analyzer_pb2_grpc, common_pb2, indexer_pb2, indexer_pb2_grpc
from services.kit.errors import ServiceError
from services.kit.grpc_client import make_channel
from services.kit.grpc_server import GrpcServer
from services.kit.identity import can_access_owner, current_principal
from services.source.extract import extract
from services.source.facts import encode
from tests.analyzer import service_corpus

ALICE = common_pb2.Principal(user_id="u-alice", login="alice")
BOB = common_pb2.Principal(user_id="u-bob", login="bob")


@dataclass
class FakeRepo:
    id: str
    owner: str
    files: dict[str, bytes]
    head: str = "c0ffee0000000000000000000000000000000001"
    full_name: str = ""
    pairs: list[tuple[str, str, int, float]] = field(default_factory=list)
    staged: list[indexer_pb2.ChangedFile] | None = None
    changes: dict[tuple[str, str], list[indexer_pb2.ChangedFile]] = field(default_factory=dict)
    indexed: bool = True
    failed: str = ""  # not indexed because the last index failed with this error


class FakeIndexer(indexer_pb2_grpc.IndexerServiceServicer):
    def __init__(self) -> None:
        self.repos: dict[str, FakeRepo] = {}
        self.calls: Counter[str] = Counter()

    def add(self, repo: FakeRepo) -> FakeRepo:
        self.repos[repo.id] = repo
        return repo

    def _named(self, ref: str) -> FakeRepo:
        # As the real indexer: repository reads name a caller; only the facts RPCs serve internal ones.
        if current_principal() is None:
            raise ServiceError("not_authenticated", "authentication required")
        return self._repo(ref)

    def _repo(self, ref: str) -> FakeRepo:
        repo = self.repos.get(ref) or next((r for r in self.repos.values() if r.full_name == ref), None)
        principal = current_principal()
        if repo is None or (principal is not None and not can_access_owner(principal, repo.owner)):
            raise ServiceError("repo_not_found", "repository not found")
        return repo

    def _indexed(self, ref: str) -> FakeRepo:
        repo = self._repo(ref)
        if not repo.indexed:
            raise ServiceError("repo_not_indexed", "not indexed")
        return repo

    def _status(self, repo: FakeRepo) -> indexer_pb2.IndexStatus:
        if repo.failed:
            return indexer_pb2.IndexStatus(repository_id=repo.id, state="failed", error=repo.failed)
        if not repo.indexed:
            return indexer_pb2.IndexStatus(repository_id=repo.id, state="indexing")
        return indexer_pb2.IndexStatus(repository_id=repo.id, state="ready", head_sha=repo.head, files_done=9)

    async def GetRepository(self, request: Any, context: Any) -> indexer_pb2.Repository:
        self.calls["GetRepository"] += 1
        repo = self._named(request.repo)
        return indexer_pb2.Repository(
            id=repo.id,
            name=repo.id,
            kind="hosted" if repo.full_name else "local",
            source=repo.full_name or "/srv/" + repo.id,
            owner=repo.owner,
            index=self._status(repo),
        )

    async def GetIndexStatus(self, request: Any, context: Any) -> indexer_pb2.IndexStatus:
        self.calls["GetIndexStatus"] += 1
        return self._status(self._named(request.repo))

    async def StreamFacts(self, request: Any, context: Any) -> AsyncIterator[indexer_pb2.FactsChunk]:
        self.calls["StreamFacts"] += 1
        repo = self._indexed(request.repo)
        blobs = [
            indexer_pb2.FileFactsBlob(path=p, facts=encode(extract(p, data))) for p, data in sorted(repo.files.items())
        ]
        for i in range(0, len(blobs), 25):
            yield indexer_pb2.FactsChunk(commit=repo.head, files=blobs[i : i + 25])

    async def GetFile(self, request: Any, context: Any) -> indexer_pb2.FileContent:
        self.calls["GetFile"] += 1
        repo = self._indexed(request.repo)
        data = repo.files.get(request.path)
        if data is None:
            raise ServiceError("file_not_found", f"{request.path} is not in the indexed snapshot")
        facts = extract(request.path, data)
        if facts.skipped in ("binary", "oversized"):
            raise ServiceError("unsupported_file_type", "cannot analyze", {"reason": facts.skipped})
        return indexer_pb2.FileContent(
            path=request.path, content=data, facts=encode(facts), skipped=facts.skipped, commit=repo.head
        )

    async def StreamFiles(self, request: Any, context: Any) -> AsyncIterator[indexer_pb2.FilesChunk]:
        self.calls["StreamFiles"] += 1
        repo = self._indexed(request.repo)
        chunk = indexer_pb2.FilesChunk(commit=repo.head)
        for path in dict.fromkeys(request.paths):
            data = repo.files.get(path)
            if data is None:
                continue
            facts = extract(path, data)
            if facts.skipped in ("binary", "oversized"):
                chunk.files.add(path=path, skipped=facts.skipped, commit=repo.head)
            else:
                chunk.files.add(path=path, content=data, facts=encode(facts), skipped=facts.skipped, commit=repo.head)
            if len(chunk.files) == 25:
                yield chunk
                chunk = indexer_pb2.FilesChunk(commit=repo.head)
        if chunk.files:
            yield chunk

    async def GetChanges(self, request: Any, context: Any) -> indexer_pb2.Changes:
        self.calls["GetChanges"] += 1
        repo = self._indexed(request.repo)
        if request.staged:
            if repo.staged is None:
                raise ServiceError("validation_failed", "staged changes need a local repository")
            return indexer_pb2.Changes(files=repo.staged)
        files = repo.changes.get((request.base, request.head))
        if files is None:
            raise ServiceError("validation_failed", "unknown commits")
        return indexer_pb2.Changes(base=request.base, head=request.head, files=files)

    async def GetCoChanges(self, request: Any, context: Any) -> indexer_pb2.CoChanges:
        self.calls["GetCoChanges"] += 1
        repo = self._indexed(request.repo)
        return indexer_pb2.CoChanges(
            pairs=[indexer_pb2.CoChange(path=a, other=b, support=s, confidence=c) for a, b, s, c in repo.pairs]
        )

    async def GetDomains(self, request: Any, context: Any) -> indexer_pb2.Domains:
        self.calls["GetDomains"] += 1
        self._indexed(request.repo)
        domains = [
            indexer_pb2.Domain(name=p, path_prefix=f"app/{p}/", file_count=16) for p in service_corpus.PACKAGES
        ] + [indexer_pb2.Domain(name="tests", path_prefix="tests/", file_count=45)]
        return indexer_pb2.Domains(domains=domains)

    async def GetSegments(self, request: Any, context: Any) -> indexer_pb2.Segments:
        self.calls["GetSegments"] += 1
        self._indexed(request.repo)
        segments = [
            indexer_pb2.Segment(domain=p, name=".", path_prefix=f"app/{p}/", kind="package", file_count=16)
            for p in service_corpus.PACKAGES
        ]
        return indexer_pb2.Segments(segments=segments)

    async def GetHistory(self, request: Any, context: Any) -> indexer_pb2.History:
        self.calls["GetHistory"] += 1
        self._indexed(request.repo)
        reply = indexer_pb2.History(commits=7)
        if request.path:
            reply.single_file.path = request.path
            reply.single_file.file.CopyFrom(indexer_pb2.FileHistory(path=request.path, commits=1, authors=1))
        else:
            spot = indexer_pb2.HotSpot(path="app/billing/invoice.py", score=3.5, commits=7, churn=20)
            reply.repository.hot_spots.append(spot)
        return reply


def corpus_files(tmp: Path) -> dict[str, bytes]:
    paths = service_corpus.write_corpus(tmp)
    return {p: (tmp / p).read_bytes() for p in paths}


@dataclass
class Harness:
    stub: analyzer_pb2_grpc.AnalyzerServiceAsyncStub
    indexer: FakeIndexer
    deps: Deps
    files: dict[str, bytes]


@pytest.fixture(name="harness")
async def harness_fixture(make_db, tmp_path: Path) -> AsyncIterator[Harness]:
    fake = FakeIndexer()
    indexer_server = GrpcServer("indexer", "127.0.0.1:0")
    indexer_server.add(indexer_pb2_grpc.add_IndexerServiceServicer_to_server, fake, "IndexerService")
    indexer_port = await indexer_server.start()
    db = make_db("analyzer")
    settings = AnalyzerSettings(
        database_url=db.url,
        indexer_addr=f"127.0.0.1:{indexer_port}",
        cache_revalidate_seconds=0.0,
        enforce_quota=False,  # plan caps: tests/billing/test_analysis_quota.py, against real billing
    )
    deps = Deps.build(db, settings)
    server = GrpcServer("analyzer", "127.0.0.1:0")
    server.add(analyzer_pb2_grpc.add_AnalyzerServiceServicer_to_server, AnalyzerServicer(deps), "AnalyzerService")
    port = await server.start()
    channel = make_channel(f"127.0.0.1:{port}", analyzer_pb2.DESCRIPTOR.services_by_name["AnalyzerService"])
    files = corpus_files(tmp_path / "corpus")
    fake.add(
        FakeRepo(
            id="r-alice",
            owner="user:u-alice",
            files=files,
            pairs=[("app/billing/invoice.py", "app/billing/payment.py", 6, 1.0)],
        )
    )
    yield Harness(analyzer_pb2_grpc.AnalyzerServiceStub(channel), fake, deps, files)
    await channel.close()
    await server.server.stop(0)
    await indexer_server.server.stop(0)
    await deps.indexer.close()


def grpc_code(exc: BaseException) -> grpc.StatusCode | None:
    return getattr(exc, "status", None)
