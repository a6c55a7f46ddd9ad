"""An in-process hostapp for worker tests: the real worker, outbox relay and index-event
consumer on real PostgreSQL and NATS, the GitHub stand-in over loopback, and stub
analyzer/indexer gRPC servers whose answers a test sets."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import orjson

from services.contracts.v1 import (
    analyzer_pb2,
    analyzer_pb2_grpc,
    indexer_pb2,
    indexer_pb2_grpc,
)
from services.hostapp import indexing, webhooks
from services.hostapp.deliveries import DeliveryProcessor
from services.hostapp.feedback import FeedbackSender
from services.hostapp.github import GitHubApp
from services.hostapp.indexing import IndexGate
from services.hostapp.models import PrJob, inbox, outbox
from services.hostapp.settings import HostAppSettings
from services.hostapp.threads import Tracker
from services.hostapp.worker import PrWorker
from services.kit.bus import SUBJECT_REPOSITORY_INDEXED, Bus
from services.kit.db import Database
from services.kit.errors import ServiceError
from services.kit.grpc_client import make_channel
from services.kit.grpc_server import GrpcServer
from services.kit.inbox import EventConsumer
from services.kit.outbox import OutboxRelay
from tests.hostapp.conftest import deliver_and_process, settings_for
from tests.standins.github_api import GitHubStandIn


class FakeAnalyzer(analyzer_pb2_grpc.AnalyzerServiceServicer):
    def __init__(self) -> None:
        self.requests: list[analyzer_pb2.AnalyzePullRequestRequest] = []
        self.reports: list[analyzer_pb2.ReportFindingsRequest] = []
        self.findings: list[analyzer_pb2.Finding] = []
        self.preexisting: list[analyzer_pb2.Finding] = []
        self.error: ServiceError | None = None
        self.implemented = True

    async def AnalyzePullRequest(
        self, request: analyzer_pb2.AnalyzePullRequestRequest, context: grpc.aio.ServicerContext
    ) -> analyzer_pb2.AnalysisResult:
        self.requests.append(request)
        if not self.implemented:
            raise NotImplementedError("Method not implemented!")  # what the generated base does
        if self.error is not None:
            raise self.error
        return analyzer_pb2.AnalysisResult(
            audit_id="audit-1",
            commit=request.head,
            findings=self.findings,
            files_analyzed=len(request.files),
            preexisting=self.preexisting,
            preexisting_count=len(self.preexisting),
        )

    async def ReportFindings(
        self, request: analyzer_pb2.ReportFindingsRequest, context: grpc.aio.ServicerContext
    ) -> analyzer_pb2.ReportFindingsResponse:
        self.reports.append(request)
        return analyzer_pb2.ReportFindingsResponse(accepted=len(request.feedback))

    def verdicts(self) -> list[tuple[str, str]]:
        return [(item.fingerprint, item.verdict) for r in self.reports for item in r.feedback]


class FakeIndexer(indexer_pb2_grpc.IndexerServiceServicer):
    def __init__(self) -> None:
        self.state = "ready"
        self.head_sha = "0" * 40
        self.error: ServiceError | None = None
        self.asked = 0

    async def GetIndexStatus(
        self, request: indexer_pb2.GetRepositoryRequest, context: grpc.aio.ServicerContext
    ) -> indexer_pb2.IndexStatus:
        self.asked += 1
        if self.error is not None:
            raise self.error
        return indexer_pb2.IndexStatus(repository_id="r1", state=self.state, head_sha=self.head_sha)


class Hostapp:
    def __init__(self, db: Database, bus: Bus, standin: GitHubStandIn) -> None:
        self.db = db
        self.bus = bus
        self.standin = standin
        self.analyzer = FakeAnalyzer()
        self.indexer = FakeIndexer()
        self.tasks: list[asyncio.Task[Any]] = []
        self.servers: list[GrpcServer] = []
        self.worker: PrWorker | None = None

    async def start(self, **overrides: Any) -> Hostapp:
        # A connection of the hostapp's own, closed (not drained) at the end: nats-py's drain
        # waits its full timeout on pull subscriptions whose messages were fetched.
        self.own_bus = Bus(self.bus.url, self.bus.prefix)
        await self.own_bus.connect()
        ports = {}
        for name, servicer, register in (
            ("analyzer", self.analyzer, analyzer_pb2_grpc.add_AnalyzerServiceServicer_to_server),
            ("indexer", self.indexer, indexer_pb2_grpc.add_IndexerServiceServicer_to_server),
        ):
            server = GrpcServer(f"fake-{name}", "127.0.0.1:0")
            server.add(register, servicer, name)
            ports[name] = await server.start()
            self.servers.append(server)
        self.settings: HostAppSettings = settings_for(
            self.standin,
            analyzer_addr=f"127.0.0.1:{ports['analyzer']}",
            indexer_addr=f"127.0.0.1:{ports['indexer']}",
            **overrides,
        )
        self.github = GitHubApp(self.settings)
        self.relay = OutboxRelay(self.db, self.own_bus, outbox, "hostapp-test", poll_seconds=0.1)
        self.spawn(self.relay.run())
        self.indexed_consumer = EventConsumer(
            self.own_bus, self.db, inbox, "hostapp-repository-indexed", SUBJECT_REPOSITORY_INDEXED, service="test"
        )
        self.spawn(self.indexed_consumer.consume(indexing.on_repository_indexed))
        self.start_worker()
        return self

    def spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self.tasks.append(task)
        return task

    def start_worker(self) -> asyncio.Task[Any]:
        s = self.settings
        analyzer = analyzer_pb2_grpc.AnalyzerServiceStub(
            make_channel(s.analyzer_addr, analyzer_pb2.DESCRIPTOR.services_by_name["AnalyzerService"])
        )
        indexer = indexer_pb2_grpc.IndexerServiceStub(
            make_channel(s.indexer_addr, indexer_pb2.DESCRIPTOR.services_by_name["IndexerService"])
        )
        gate = IndexGate(self.db, indexer, s.grpc_deadline_seconds)
        self.feedback = FeedbackSender(self.db, self.github, analyzer, s)
        self.spawn(self.feedback.run())
        self.tracker = Tracker(self.db, self.github, wake=self.feedback.wake)
        self.worker = PrWorker(
            self.db,
            self.own_bus,
            self.github,
            analyzer,
            gate,
            s,
            wake=self.relay.wake,
            tracker=self.tracker,
            feedback=self.feedback,
        )
        self.worker_task = self.spawn(self.worker.run())
        return self.worker_task

    async def kill_worker(self) -> None:
        """Like kill -9 for the worker: no ack, no cleanup of the job row."""
        self.worker_task.cancel()
        await asyncio.gather(self.worker_task, return_exceptions=True)

    async def deliver(self, event: str, body: dict[str, Any], delivery_id: str = "") -> webhooks.Outcome:
        processor = DeliveryProcessor(
            self.db, slug=self.settings.app_slug, wake_relay=self.relay.wake, wake_feedback=self.feedback.wake
        )
        return await deliver_and_process(self.db, event, orjson.dumps(body), delivery_id, processor=processor)

    async def job(self, job_id: str) -> PrJob:
        async with self.db.session() as session:
            found = await session.get(PrJob, job_id)
        assert found is not None
        return found

    async def wait_for_state(self, job_id: str, *states: str, timeout: float = 20) -> PrJob:
        job: PrJob | None = None

        async def reached() -> bool:
            nonlocal job
            job = await self.job(job_id)
            return job.state in states

        await wait_until(reached, timeout, lambda: f"job stayed {job.state}: {job.summary}" if job else "")
        assert job is not None
        return job

    async def stop(self) -> None:
        if self.worker is not None:
            self.worker.stop()
            self.feedback.stop()
        self.relay.stop()
        self.indexed_consumer.stop()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.own_bus.nc is not None:
            await self.own_bus.nc.close()
        for server in self.servers:
            await server.server.stop(0)


async def wait_until(
    predicate: Callable[[], Awaitable[bool]], timeout: float, describe: Callable[[], str] = lambda: ""
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await predicate():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"condition not met within {timeout}s {describe()}")
