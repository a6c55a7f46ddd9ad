"""Verified code-host deliveries on their way to hostapp: those that reach a worker process
together go in one ``HandleWebhooks`` call.

A gRPC call costs each side a few hundred microseconds of Python whatever it carries (measured
with a no-op handler: ~250 us in the caller, ~360 us in the callee, against ~30 and ~65 per
delivery with eight in a call), which was most of a delivery's cost at the gateway and at
hostapp. A lone delivery is sent at once (``kit.batching``), as is one arriving while a single
call is in flight; those arriving while two are go in the next. Each is answered with its own
result: recorded, duplicate, or its own refusal (400); a failure of the call (hostapp or its
database down) is every delivery's 503.
"""

from __future__ import annotations

from services.contracts.v1 import hostapp_pb2, hostapp_pb2_grpc
from services.kit.batching import Batcher
from services.kit.grpc_client import call, error_from_detail

# The code host gives up on a delivery after 10 s: a call, and a delivery's wait, stay under it.
DEADLINE_SECONDS = 8.0
MAX_DELIVERIES = 64  # per call
# Payload bytes per call past its first delivery: well under the 64 MiB message limit of the
# channels (a lone delivery may be as large as the body limit, 20 MiB by default).
MAX_BYTES = 16 * 1024 * 1024
# Calls in flight per worker. With one, a delivery arriving during a call waited for that whole
# round trip before its own began: at 16 connections the intake was bound by that wait (a
# delivery's ~17 ms were two ~8 ms calls end to end), not by the CPU. Two overlap one call's
# transfer and handling with the other's; what arrives while both are in flight waits for the
# first to end. Hostapp still records what reaches it together in one statement at a time.
CONCURRENCY = 2


def _payload_bytes(delivery: hostapp_pb2.HostWebhookRequest) -> int:
    return len(delivery.payload)


class DeliveryBatches:
    def __init__(self, hostapp: hostapp_pb2_grpc.HostAppServiceAsyncStub, *, concurrency: int = CONCURRENCY) -> None:
        self.hostapp = hostapp
        self._calls: Batcher[hostapp_pb2.HostWebhookRequest, hostapp_pb2.HostWebhookResponse] = Batcher(
            self._send, max_items=MAX_DELIVERIES, max_weight=MAX_BYTES, weight=_payload_bytes, concurrency=concurrency
        )

    async def forward(self, delivery: hostapp_pb2.HostWebhookRequest) -> hostapp_pb2.HostWebhookResponse:
        """Hostapp's answer for this delivery (a ``ServiceError`` for its refusal)."""
        return await self._calls.submit(delivery)

    async def _send(
        self, deliveries: list[hostapp_pb2.HostWebhookRequest]
    ) -> list[hostapp_pb2.HostWebhookResponse | Exception]:
        batch = hostapp_pb2.HostWebhookBatch(deliveries=deliveries)
        reply = await call(self.hostapp.HandleWebhooks, batch, timeout=DEADLINE_SECONDS)
        return [error_from_detail(r.error) if r.HasField("error") else r.response for r in reply.results]
