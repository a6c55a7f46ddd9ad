"""gRPC server bootstrap: health (reflecting real readiness), reflection, interceptors
for request-id and principal propagation, error mapping and metrics, graceful shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import grpc
import psycopg
from google.protobuf import any_pb2, struct_pb2
from google.rpc import status_pb2
from grpc_health.v1 import _async as health_async
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from nats import errors as nats_errors
from sqlalchemy import exc as sa_exc

from services.contracts.v1 import common_pb2
from services.kit.context import new_request_id, request_id_var
from services.kit.errors import ServiceError
from services.kit.identity import PRINCIPAL_METADATA_KEY, REQUEST_ID_METADATA_KEY, principal_var
from services.kit.metrics import RPC_LATENCY, RPC_REQUESTS

log = logging.getLogger(__name__)
STATUS_DETAILS_KEY = "grpc-status-details-bin"

Req = TypeVar("Req")
Resp = TypeVar("Resp")
Trailer = tuple[tuple[str, bytes], ...]


def error_detail(error_code: str, message: str, details: dict[str, Any]) -> common_pb2.ErrorDetail:
    """The spec's code, message and details as they cross a service boundary."""
    detail = common_pb2.ErrorDetail(code=error_code, message=message)
    if details:
        struct = struct_pb2.Struct()
        struct.update(_jsonable(details))
        detail.details.CopyFrom(struct)
    return detail


def status_trailer(code: grpc.StatusCode, message: str, error_code: str, details: dict[str, Any]) -> Trailer:
    packed = any_pb2.Any()
    packed.Pack(error_detail(error_code, message, details))
    status = status_pb2.Status(code=code.value[0], message=message, details=[packed])
    return ((STATUS_DETAILS_KEY, status.SerializeToString()),)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    return str(value)


def unavailable(exc: BaseException) -> bool:
    """An outage of a dependency, not a bug: the database refusing or dropping connections, the
    pool timing out, NATS gone. One place decides, for every service's RPCs."""
    if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError | sa_exc.TimeoutError):
        return True
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        return True
    return isinstance(exc, ConnectionError | nats_errors.ConnectionClosedError | nats_errors.NoServersError)


class _Context:
    """Binds request id and principal from metadata for the handler's duration."""

    def __init__(self, metadata: Sequence[tuple[str, str | bytes]] | None) -> None:
        md = dict(metadata or ())
        # gRPC hands ``-bin`` keys' values as bytes and every other key's as str.
        request_id = md.get(REQUEST_ID_METADATA_KEY)
        self.request_id = request_id if isinstance(request_id, str) and request_id else new_request_id()
        raw = md.get(PRINCIPAL_METADATA_KEY)
        self.principal = common_pb2.Principal.FromString(raw) if isinstance(raw, bytes) and raw else None

    def __enter__(self) -> None:
        self._tokens = (request_id_var.set(self.request_id), principal_var.set(self.principal))

    def __exit__(self, *exc: object) -> None:
        # A stream the client cancelled is closed by grpc from another task, whose Context never
        # held our values: there is nothing to undo, and reset() would raise ValueError ("created
        # in a different Context") into grpc's cleanup, logged as an error on every cancel.
        with contextlib.suppress(ValueError):
            request_id_var.reset(self._tokens[0])
        with contextlib.suppress(ValueError):
            principal_var.reset(self._tokens[1])


class ServiceInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, service: str) -> None:
        self.service = service

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Req, Resp] | None]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Req, Resp] | None:
        handler = await continuation(details)
        if handler is None or details.method.startswith(("/grpc.health", "/grpc.reflection")):
            return handler
        method = details.method.rsplit("/", 1)[-1]
        metadata = details.invocation_metadata
        service = self.service

        async def fail(context: grpc.aio.ServicerContext[Any, Any], exc: BaseException) -> None:
            if isinstance(exc, ServiceError):
                code, message, error_code, extra = exc.grpc_status, exc.message, exc.code, exc.details
            elif unavailable(exc):
                # The service's own database (or bus) is down: the caller should come back,
                # not report a bug. The gateway answers 503 service_unavailable with Retry-After.
                log.warning("%s: a dependency is unavailable: %s", method, exc.__class__.__name__)
                code, message, error_code, extra = (
                    grpc.StatusCode.UNAVAILABLE,
                    f"{service} cannot reach its database or message bus",
                    "service_unavailable",
                    {},
                )
            elif isinstance(exc, NotImplementedError):
                # A method the servicer does not override yet (the generated base raises this):
                # UNIMPLEMENTED, so callers can tell "not built" from a crash.
                code, message, error_code, extra = (
                    grpc.StatusCode.UNIMPLEMENTED,
                    f"{method} is not implemented",
                    "not_implemented",
                    {},
                )
            else:
                log.exception("unhandled error in %s", method)
                code, message, error_code, extra = (
                    grpc.StatusCode.INTERNAL,
                    "internal error",
                    "internal_error",
                    {},
                )
            RPC_REQUESTS.labels(service, method, code.name).inc()
            await context.abort(code, message, trailing_metadata=status_trailer(code, message, error_code, extra))

        # grpc's stubs type a handler's behaviours as the sync server calls them; on the aio
        # server they are coroutine functions (unary) and async generators (streams).
        if handler.unary_unary:
            inner_uu: Callable[[Req, grpc.aio.ServicerContext[Req, Resp]], Awaitable[Resp]]
            inner_uu = handler.unary_unary  # type: ignore[assignment]

            async def unary_unary(request: Req, context: grpc.aio.ServicerContext[Req, Resp]) -> Resp:
                start = time.perf_counter()
                with _Context(metadata):
                    try:
                        response = await inner_uu(request, context)
                    except asyncio.CancelledError:
                        raise
                    except Exception as exc:
                        if isinstance(exc, grpc.aio.AbortError):
                            raise
                        await fail(context, exc)
                    finally:
                        RPC_LATENCY.labels(service, method).observe(time.perf_counter() - start)
                RPC_REQUESTS.labels(service, method, "OK").inc()
                return response

            return grpc.unary_unary_rpc_method_handler(
                unary_unary,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream:
            inner_us: Callable[[Req, grpc.aio.ServicerContext[Req, Resp]], AsyncIterator[Resp]]
            inner_us = handler.unary_stream  # type: ignore[assignment]

            async def unary_stream(request: Req, context: grpc.aio.ServicerContext[Req, Resp]) -> AsyncIterator[Resp]:
                with _Context(metadata):
                    try:
                        async for item in inner_us(request, context):
                            yield item
                    except asyncio.CancelledError:
                        raise
                    except Exception as exc:
                        if isinstance(exc, grpc.aio.AbortError):
                            raise
                        await fail(context, exc)
                RPC_REQUESTS.labels(service, method, "OK").inc()

            return grpc.unary_stream_rpc_method_handler(
                unary_stream,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler


ReadinessCheck = Callable[[], Awaitable[bool]]


class GrpcServer:
    """Owns the aio server, its health status and the background tasks of a service."""

    def __init__(self, service: str, bind: str, *, max_message_mb: int = 64) -> None:
        self.service = service
        self.bind = bind
        opts = [
            ("grpc.max_receive_message_length", max_message_mb * 1024 * 1024),
            ("grpc.max_send_message_length", max_message_mb * 1024 * 1024),
            ("grpc.so_reuseport", 0),
            # Clients reconnect, and so re-resolve the name, at least this often: replicas added
            # by an autoscaler start getting calls within minutes; calls in flight may finish.
            ("grpc.max_connection_age_ms", 300_000),
            ("grpc.max_connection_age_grace_ms", 900_000),  # longer than a learning stream
        ]
        self.server = grpc.aio.server(interceptors=[ServiceInterceptor(service)], options=opts)
        self.health = health_async.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self.service_names: list[str] = [health_pb2.DESCRIPTOR.services_by_name["Health"].full_name]
        self.port = 0
        self.tasks: list[asyncio.Task[Any]] = []
        self._stop = asyncio.Event()

    def add(self, register: Callable[[Any, grpc.aio.Server], None], servicer: Any, full_name: str) -> None:
        register(servicer, self.server)
        self.service_names.append(full_name)

    async def start(self) -> int:
        reflection.enable_server_reflection([*self.service_names, reflection.SERVICE_NAME], self.server)
        self.port = self.server.add_insecure_port(self.bind)
        if self.port == 0:
            raise RuntimeError(f"cannot bind {self.bind}")
        await self.server.start()
        return self.port

    def spawn(self, coro: Awaitable[Any], name: str) -> None:
        self.tasks.append(asyncio.ensure_future(coro))
        self.tasks[-1].set_name(name)

    async def watch_readiness(
        self, checks: Mapping[str, ReadinessCheck], interval: float = 2.0, wake: asyncio.Event | None = None
    ) -> None:
        """Health is SERVING only while every check (database, NATS, the supervised loops)
        passes; ``wake`` re-checks at once (a loop died) instead of at the next interval."""
        failing: list[str] = []
        served = False  # not ready while starting is no news; losing readiness is
        while True:
            now_failing = []
            for name, check in checks.items():
                try:
                    ok = await check()
                except Exception:
                    ok = False
                if not ok:
                    now_failing.append(name)
            if served and now_failing != failing:
                if now_failing:
                    log.warning("%s NOT_SERVING: %s", self.service, ", ".join(now_failing))
                else:
                    log.info("%s SERVING again", self.service)
            served = served or not now_failing
            failing = now_failing
            status = health_pb2.HealthCheckResponse.NOT_SERVING if failing else health_pb2.HealthCheckResponse.SERVING
            for name in ("", *self.service_names[1:]):
                await self.health.set(name, status)
            if wake is None:
                await asyncio.sleep(interval)
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), timeout=interval)
            wake.clear()

    def request_stop(self) -> None:
        """Stop as on SIGTERM (a loop could not be kept running)."""
        self._stop.set()

    async def serve_until_signal(self, on_stop: Callable[[], Awaitable[None]] | None = None) -> None:
        stop = self._stop
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        log.info("stopping %s", self.service)
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace=5)
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if on_stop is not None:
            await on_stop()
