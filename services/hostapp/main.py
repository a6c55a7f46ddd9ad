"""The hostapp service process: the gRPC servicer (webhook intake, credentials), the webhook
delivery processor, the PR job worker, the index-event consumers that release waiting jobs,
and the reconciler."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from services.contracts.v1 import analyzer_pb2, analyzer_pb2_grpc, hostapp_pb2_grpc, indexer_pb2, indexer_pb2_grpc
from services.hostapp import indexing
from services.hostapp.deliveries import DeliveryProcessor
from services.hostapp.feedback import FeedbackSender
from services.hostapp.github import GitHubApp
from services.hostapp.indexing import IndexGate
from services.hostapp.intake import Intake
from services.hostapp.models import inbox, outbox
from services.hostapp.reconciler import Reconciler
from services.hostapp.servicer import HostAppServicer
from services.hostapp.settings import HostAppSettings, load
from services.hostapp.threads import Tracker
from services.hostapp.worker import PrWorker
from services.kit.bus import SUBJECT_INDEX_FAILED, SUBJECT_REPOSITORY_INDEXED
from services.kit.grpc_client import make_channel
from services.kit.inbox import EventConsumer
from services.kit.runtime import ServiceRuntime, run_service


async def setup(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    assert isinstance(settings, HostAppSettings)
    github = GitHubApp(settings)
    indexer = indexer_pb2_grpc.IndexerServiceStub(
        make_channel(settings.indexer_addr, indexer_pb2.DESCRIPTOR.services_by_name["IndexerService"])
    )
    analyzer = analyzer_pb2_grpc.AnalyzerServiceStub(
        make_channel(settings.analyzer_addr, analyzer_pb2.DESCRIPTOR.services_by_name["AnalyzerService"])
    )
    feedback = FeedbackSender(runtime.db, github, analyzer, settings)
    runtime.supervise("feedback-sender", feedback.run, stop=feedback.stop, stall_after=300.0)
    intake = Intake(runtime.db)
    processor = DeliveryProcessor(
        runtime.db,
        slug=settings.app_slug,
        wake_relay=runtime.wake_relay,
        wake_feedback=feedback.wake,
        busy=intake.busy,
    )
    intake.wake = processor.wake
    runtime.supervise("webhook-deliveries", processor.run, stop=processor.stop)
    runtime.server.add(
        hostapp_pb2_grpc.add_HostAppServiceServicer_to_server,
        HostAppServicer(runtime.db, github, intake),
        "services.contracts.v1.HostAppService",
    )
    tracker = Tracker(runtime.db, github, wake=feedback.wake)
    gate = IndexGate(runtime.db, indexer, settings.grpc_deadline_seconds)
    worker = PrWorker(
        runtime.db,
        runtime.bus,
        github,
        analyzer,
        gate,
        settings,
        wake=runtime.wake_relay,
        tracker=tracker,
        feedback=feedback,
    )
    runtime.supervise("pr-job-worker", worker.run, stop=worker.stop)
    for durable, subject, handler in (
        ("hostapp-repository-indexed", SUBJECT_REPOSITORY_INDEXED, indexing.on_repository_indexed),
        ("hostapp-index-failed", SUBJECT_INDEX_FAILED, indexing.on_index_failed),
    ):
        consumer = EventConsumer(runtime.bus, runtime.db, inbox, durable, subject, service="hostapp")
        runtime.supervise(durable, partial(consumer.consume, handler), stop=consumer.stop)
    reconciler = Reconciler(runtime.db, github, settings, wake=runtime.wake_relay, tracker=tracker)
    # A pass makes code-host calls, each with its own timeout: allow a few minutes of them.
    runtime.supervise("reconciler", reconciler.run, stop=reconciler.stop, stall_after=300.0)


if __name__ == "__main__":
    run_service(load(), Path(__file__).parent, outbox, setup)
