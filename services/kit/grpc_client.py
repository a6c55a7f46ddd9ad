"""gRPC client helpers: channels with deadlines, retries for the methods the contract marks
idempotent, metadata propagation (request id, principal) and errors turned back into ServiceError.

``call`` and ``stream`` are generic over the stub's request and response types: the ``.pyi``
stubs ``make proto`` generates type every attribute of an async stub as
``grpc.aio.UnaryUnaryMultiCallable[Req, Resp]`` (or ``UnaryStreamMultiCallable``), which the
protocols below accept, so a caller gets the response message type without a cast. (They are
protocols, with a covariant response, rather than grpc's invariant classes, so that
``plain(await call(...))`` infers the precise type too.)
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable
from typing import Any, Protocol, TypeVar

import grpc
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.descriptor_pb2 import MethodOptions
from google.protobuf.message import Message
from google.rpc import status_pb2

from services.contracts.v1 import common_pb2
from services.kit.context import current_request_id
from services.kit.errors import CODE_TABLE, GRPC_TO_HTTP, ServiceError
from services.kit.grpc_server import STATUS_DETAILS_KEY
from services.kit.identity import PRINCIPAL_METADATA_KEY, REQUEST_ID_METADATA_KEY, current_principal
from services.kit.messages import struct_values

Req = TypeVar("Req", bound=Message)
Resp = TypeVar("Resp", bound=Message)
Req_contra = TypeVar("Req_contra", bound=Message, contravariant=True)
Resp_co = TypeVar("Resp_co", bound=Message, covariant=True)

Metadata = tuple[tuple[str, str | bytes], ...]


class UnaryMethod(Protocol[Req_contra, Resp_co]):
    """A unary method of an async stub (``stub.GetRepository``)."""

    def __call__(
        self, request: Req_contra, *, timeout: float | None = ..., metadata: Metadata | None = ...
    ) -> Awaitable[Resp_co]: ...


class StreamingCall(Protocol[Resp_co]):
    """A server-streaming call in progress: its messages, read with ``async for``."""

    def __aiter__(self) -> AsyncIterator[Resp_co]: ...


class StreamMethod(Protocol[Req_contra, Resp_co]):
    """A server-streaming method of an async stub (``stub.StreamFacts``)."""

    def __call__(
        self, request: Req_contra, *, timeout: float | None = ..., metadata: Metadata | None = ...
    ) -> StreamingCall[Resp_co]: ...


# What the channel does with a method the contract marks safe to repeat: retry on UNAVAILABLE
# only (no server took the call, one was going away, or a dependency of it was down), nothing else.
MAX_ATTEMPTS = 4
RETRY_POLICY: dict[str, object] = {
    "maxAttempts": MAX_ATTEMPTS,
    "initialBackoff": "0.1s",
    "maxBackoff": "1s",
    "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE"],
}


RECONNECT_BACKOFF_MS = (100, 1000)  # first and longest wait before dialling a lost peer again


class RemoteError(ServiceError):
    """A ServiceError raised by another service, with its gRPC status preserved."""

    def __init__(self, code: str, message: str, details: dict[str, Any], status: grpc.StatusCode) -> None:
        if code not in CODE_TABLE:
            code = GRPC_TO_HTTP.get(status, (500, "internal_error"))[1]
            code = code if code in CODE_TABLE else "internal_error"
        super().__init__(code, message, details)
        self.status = status


def is_idempotent(method: MethodDescriptor) -> bool:
    """The contract says so: ``option idempotency_level`` is NO_SIDE_EFFECTS or IDEMPOTENT."""
    level: int = method.GetOptions().idempotency_level
    return level in (MethodOptions.NO_SIDE_EFFECTS, MethodOptions.IDEMPOTENT)


def idempotent_methods(service: ServiceDescriptor) -> list[str]:
    """The service's methods a channel may retry, in declaration order."""
    return [m.name for m in service.methods if is_idempotent(m)]


def retry_service_config(service: ServiceDescriptor) -> str:
    """The channel's service config: retries for the service's idempotent methods only."""
    names = [{"service": service.full_name, "method": m} for m in idempotent_methods(service)]
    # round_robin over every address the name resolves to: behind a headless Service each replica
    # gets a share of the calls (one address locally, where it changes nothing).
    config: dict[str, Any] = {"loadBalancingConfig": [{"round_robin": {}}], "methodConfig": []}
    if names:
        config["methodConfig"].append({"name": names, "retryPolicy": RETRY_POLICY})
    return json.dumps(config)


def make_channel(address: str, service: ServiceDescriptor) -> grpc.aio.Channel:
    """A channel to ``service`` (``<module>_pb2.DESCRIPTOR.services_by_name[...]``) at ``address``."""
    return grpc.aio.insecure_channel(
        address,
        options=[
            ("grpc.enable_retries", 1),
            ("grpc.service_config", retry_service_config(service)),
            ("grpc.max_receive_message_length", 64 * 1024 * 1024),
            ("grpc.max_send_message_length", 64 * 1024 * 1024),
            ("grpc.keepalive_time_ms", 30_000),
            # A restarted peer must be found again within a second by every process that dials it:
            # gRPC's default backoff grows to 120 s, so one gateway worker kept answering 503 long
            # after the indexer was back while another worker (the one /readyz asked) had found it.
            ("grpc.initial_reconnect_backoff_ms", RECONNECT_BACKOFF_MS[0]),
            ("grpc.min_reconnect_backoff_ms", RECONNECT_BACKOFF_MS[0]),
            ("grpc.max_reconnect_backoff_ms", RECONNECT_BACKOFF_MS[1]),
        ],
    )


def outgoing_metadata(principal: common_pb2.Principal | None = None) -> Metadata:
    md: list[tuple[str, str | bytes]] = [(REQUEST_ID_METADATA_KEY, current_request_id() or "")]
    principal = principal if principal is not None else current_principal()
    if principal is not None:
        md.append((PRINCIPAL_METADATA_KEY, principal.SerializeToString()))
    return tuple(md)


def error_from_detail(detail: common_pb2.ErrorDetail, status: grpc.StatusCode | None = None) -> RemoteError:
    """The error another service sent (``grpc_server.error_detail``), raised here; ``status``:
    the call's, when the error failed a call (else the code's own)."""
    details = struct_values(detail.details) if detail.HasField("details") else {}
    if status is None:
        status = CODE_TABLE[detail.code].grpc if detail.code in CODE_TABLE else grpc.StatusCode.UNKNOWN
    return RemoteError(detail.code, detail.message, details, status)


def error_from_rpc(err: grpc.aio.AioRpcError) -> RemoteError:
    for key, value in err.trailing_metadata() or ():
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            for packed in status.details:
                detail = common_pb2.ErrorDetail()
                if packed.Unpack(detail):
                    return error_from_detail(detail, err.code())
    code = err.code()
    if code == grpc.StatusCode.UNAVAILABLE:
        return RemoteError("service_unavailable", "a backing service is unavailable", {}, code)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return RemoteError("timeout", "a backing service did not answer in time", {}, code)
    return RemoteError("internal_error", err.details() or "internal error", {}, code)


async def call(
    method: UnaryMethod[Req, Resp],
    request: Req,
    *,
    timeout: float = 10.0,
    principal: common_pb2.Principal | None = None,
) -> Resp:
    """Invoke a unary stub method with a deadline and our metadata."""
    try:
        return await method(request, timeout=timeout, metadata=outgoing_metadata(principal))
    except grpc.aio.AioRpcError as err:
        raise error_from_rpc(err) from None


def stream(
    method: StreamMethod[Req, Resp],
    request: Req,
    *,
    timeout: float = 120.0,
    principal: common_pb2.Principal | None = None,
) -> StreamingCall[Resp]:
    """Start a server-streaming call with a deadline and our metadata; iterate it with
    ``async for`` (an error surfaces there as ``grpc.aio.AioRpcError``: see ``error_from_rpc``)."""
    return method(request, timeout=timeout, metadata=outgoing_metadata(principal))
