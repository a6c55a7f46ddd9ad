"""The billing service process."""

from __future__ import annotations

from pathlib import Path

from services.billing.models import outbox
from services.billing.servicer import BillingServicer
from services.billing.settings import load
from services.contracts.v1 import billing_pb2_grpc
from services.kit.runtime import ServiceRuntime, run_service


async def setup(runtime: ServiceRuntime) -> None:
    runtime.server.add(
        billing_pb2_grpc.add_BillingServiceServicer_to_server,
        BillingServicer(runtime.db),
        "services.contracts.v1.BillingService",
    )


if __name__ == "__main__":
    run_service(load(), Path(__file__).parent, outbox, setup)
