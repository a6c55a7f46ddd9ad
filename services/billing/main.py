"""The billing service process."""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from pathlib import Path

from services.billing import ratelimit, usage
from services.billing.deps import BillingDeps
from services.billing.models import inbox, outbox
from services.billing.servicer import BillingServicer
from services.billing.settings import BillingSettings, load
from services.contracts.v1 import billing_pb2_grpc
from services.kit.bus import SUBJECT_ANALYSIS_COMPLETED
from services.kit.inbox import EventConsumer
from services.kit.runtime import ServiceRuntime, run_service
from services.kit.supervision import idle

log = logging.getLogger(__name__)
USAGE_CONSUMER = "billing-usage"


async def purge_rate_counters(deps: BillingDeps, every: float = 60.0) -> None:
    while True:
        with idle():
            await asyncio.sleep(every)
        try:
            async with deps.db.session() as session:
                await ratelimit.purge(session, deps.settings.rate_limit_window_seconds)
        except Exception as exc:  # housekeeping: the next round tries again
            log.warning("could not purge rate counters: %s", exc)


async def setup(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    assert isinstance(settings, BillingSettings)
    deps = BillingDeps.build(runtime.db, settings, runtime.wake_relay)
    runtime.server.add(
        billing_pb2_grpc.add_BillingServiceServicer_to_server,
        BillingServicer(deps),
        "services.contracts.v1.BillingService",
    )
    consumer = EventConsumer(
        runtime.bus, runtime.db, inbox, USAGE_CONSUMER, SUBJECT_ANALYSIS_COMPLETED, service="billing"
    )
    runtime.supervise("usage-consumer", partial(consumer.consume, usage.record_analysis), stop=consumer.stop)
    runtime.supervise("rate-counter-purge", partial(purge_rate_counters, deps))


if __name__ == "__main__":
    run_service(load(), Path(__file__).parent, outbox, setup)
