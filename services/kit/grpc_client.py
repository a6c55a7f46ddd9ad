"""gRPC client helpers: channels with deadlines, retries for idempotent calls only,
metadata propagation (request id, principal) and errors turned back into ServiceError."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TypeVar

import grpc
from google.protobuf import json_format
from google.rpc import status_pb2

from services.contracts.v1 import common_pb2
from services.kit.context import current_request_id
from services.kit.errors import CODE_TABLE, GRPC_TO_HTTP, ServiceError
from services.kit.grpc_server import STATUS_DETAILS_KEY
from services.kit.identity import PRINCIPAL_METADATA_KEY, REQUEST_ID_METADATA_KEY, current_principal

T = TypeVar("T")


class RemoteError(ServiceError):
    """A ServiceError raised by another service, with its gRPC status preserved."""

    def __init__(self, code: str, message: str, details: dict[str, Any], status: grpc.StatusCode) -> None:
        if code not in CODE_TABLE:
            code = GRPC_TO_HTTP.get(status, (500, "internal_error"))[1]
            code = code if code in CODE_TABLE else "internal_error"
        super().__init__(code, message, details)
        self.status = status


def retry_service_config(service: str, idempotent_methods: Iterable[str]) -> str:
    """Retries (on UNAVAILABLE only) for the named read-only or idempotent methods."""
    names = [{"service": service, "method": m} for m in idempotent_methods]
    # round_robin over every address the name resolves to: behind a headless Service each replica
    # gets a share of the calls (one address locally, where it changes nothing).
    config: dict[str, Any] = {"loadBalancingConfig": [{"round_robin": {}}], "methodConfig": []}
    if names:
        config["methodConfig"].append(
            {
                "name": names,
                "retryPolicy": {
                    "maxAttempts": 4,
                    "initialBackoff": "0.1s",
                    "maxBackoff": "1s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        )
    return json.dumps(config)


def make_channel(address: str, service: str, idempotent_methods: Iterable[str] = ()) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(
        address,
        options=[
            ("grpc.enable_retries", 1),
            ("grpc.service_config", retry_service_config(service, idempotent_methods)),
            ("grpc.max_receive_message_length", 64 * 1024 * 1024),
            ("grpc.max_send_message_length", 64 * 1024 * 1024),
            ("grpc.keepalive_time_ms", 30_000),
        ],
    )


def outgoing_metadata(principal: common_pb2.Principal | None = None) -> tuple[tuple[str, Any], ...]:
    md: list[tuple[str, Any]] = [(REQUEST_ID_METADATA_KEY, current_request_id() or "")]
    principal = principal if principal is not None else current_principal()
    if principal is not None:
        md.append((PRINCIPAL_METADATA_KEY, principal.SerializeToString()))
    return tuple(md)


def error_from_rpc(err: grpc.aio.AioRpcError) -> RemoteError:
    for key, value in err.trailing_metadata() or ():
        if key == STATUS_DETAILS_KEY:
            status = status_pb2.Status.FromString(value)
            for packed in status.details:
                detail = common_pb2.ErrorDetail()
                if packed.Unpack(detail):
                    details = json_format.MessageToDict(detail.details) if detail.HasField("details") else {}
                    return RemoteError(detail.code, detail.message, details, err.code())
    code = err.code()
    if code == grpc.StatusCode.UNAVAILABLE:
        return RemoteError("service_unavailable", "a backing service is unavailable", {}, code)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return RemoteError("timeout", "a backing service did not answer in time", {}, code)
    return RemoteError("internal_error", err.details() or "internal error", {}, code)


async def call(
    method: Any,
    request: Any,
    *,
    timeout: float = 10.0,
    principal: common_pb2.Principal | None = None,
) -> Any:
    """Invoke a unary stub method with a deadline and our metadata."""
    try:
        return await method(request, timeout=timeout, metadata=outgoing_metadata(principal))
    except grpc.aio.AioRpcError as err:
        raise error_from_rpc(err) from None


def stream(method: Any, request: Any, *, timeout: float = 120.0, principal: common_pb2.Principal | None = None) -> Any:
    return method(request, timeout=timeout, metadata=outgoing_metadata(principal))
