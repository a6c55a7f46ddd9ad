"""The channel's retry policy comes from the contract: the methods a proto marks with
``option idempotency_level`` are retried on UNAVAILABLE, and no other method is."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from types import ModuleType

import grpc
import pytest

from services.contracts.v1 import analyzer_pb2, billing_pb2, billing_pb2_grpc, hostapp_pb2, indexer_pb2
from services.kit.grpc_client import RemoteError, call, make_channel, retry_service_config
from tests.conftest import ROOT

PROTOS = ROOT / "protos" / "services" / "contracts" / "v1"
BILLING = billing_pb2.DESCRIPTOR.services_by_name["BillingService"]


def annotated_in_source(proto: str) -> set[str]:
    """The rpcs whose body in the .proto text sets idempotency_level (read without protobuf)."""
    text = (PROTOS / proto).read_text()
    return {m.group(1) for m in re.finditer(r"rpc (\w+)\([^)]*\) returns \([^)]*\) \{[^}]*idempotency_level", text)}


@pytest.mark.parametrize(
    ("module", "service", "proto"),
    [
        (billing_pb2, "BillingService", "billing.proto"),
        (indexer_pb2, "IndexerService", "indexer.proto"),
        (analyzer_pb2, "AnalyzerService", "analyzer.proto"),
        (hostapp_pb2, "HostAppService", "hostapp.proto"),
    ],
)
def test_the_retry_config_names_exactly_the_annotated_methods(module: ModuleType, service: str, proto: str) -> None:
    config = json.loads(retry_service_config(module.DESCRIPTOR.services_by_name[service]))
    (method_config,) = config["methodConfig"]
    names = method_config["name"]
    assert {n["service"] for n in names} == {f"services.contracts.v1.{service}"}
    assert {n["method"] for n in names} == annotated_in_source(proto)
    assert method_config["retryPolicy"]["retryableStatusCodes"] == ["UNAVAILABLE"]


def test_the_source_reading_sees_the_annotations() -> None:
    # Guards the regex above: a few methods whose level is known.
    assert {"CheckQuota", "ValidateToken", "HandlePaymentEvent"} <= annotated_in_source("billing.proto")
    assert {"CreateUser", "RecordAiUsage"}.isdisjoint(annotated_in_source("billing.proto"))
    assert "StreamFacts" in annotated_in_source("indexer.proto")


class FailsOnce(billing_pb2_grpc.BillingServiceServicer):
    """Each method answers UNAVAILABLE to its first attempt and succeeds after."""

    def __init__(self) -> None:
        self.attempts: dict[str, int] = {}

    async def _first_fails(self, name: str, context: grpc.aio.ServicerContext[object, object]) -> None:
        self.attempts[name] = self.attempts.get(name, 0) + 1
        if self.attempts[name] == 1:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "going away")

    async def CheckQuota(  # type: ignore[override]
        self, request: billing_pb2.CheckQuotaRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> billing_pb2.CheckQuotaResponse:
        await self._first_fails("CheckQuota", context)
        return billing_pb2.CheckQuotaResponse(allowed=True, used=request.amount)

    async def CreateUser(  # type: ignore[override]
        self, request: billing_pb2.CreateUserRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> billing_pb2.CreateUserResponse:
        await self._first_fails("CreateUser", context)
        return billing_pb2.CreateUserResponse(user_id="u1")


@pytest.fixture
async def billing_stand_in() -> AsyncIterator[tuple[FailsOnce, str]]:
    server = grpc.aio.server()
    servicer = FailsOnce()
    billing_pb2_grpc.add_BillingServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield servicer, f"127.0.0.1:{port}"
    finally:
        await server.stop(None)


async def test_an_idempotent_call_is_retried_on_unavailable(billing_stand_in: tuple[FailsOnce, str]) -> None:
    servicer, address = billing_stand_in
    async with make_channel(address, BILLING) as channel:
        stub = billing_pb2_grpc.BillingServiceStub(channel)
        reply = await call(stub.CheckQuota, billing_pb2.CheckQuotaRequest(owner="o", metric="analyses", amount=3))
    assert (reply.allowed, reply.used) == (True, 3)
    assert servicer.attempts == {"CheckQuota": 2}


async def test_a_non_idempotent_call_is_not_retried(billing_stand_in: tuple[FailsOnce, str]) -> None:
    servicer, address = billing_stand_in
    async with make_channel(address, BILLING) as channel:
        stub = billing_pb2_grpc.BillingServiceStub(channel)
        with pytest.raises(RemoteError) as raised:
            await call(stub.CreateUser, billing_pb2.CreateUserRequest(login="ada"))
    assert (raised.value.code, raised.value.status) == ("service_unavailable", grpc.StatusCode.UNAVAILABLE)
    assert servicer.attempts == {"CreateUser": 1}
