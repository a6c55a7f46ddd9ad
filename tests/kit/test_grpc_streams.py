"""A server stream the client cancels is closed by grpc from another task: the interceptor's
request context must close quietly there (it used to raise ``ValueError: <Token> was created in
a different Context`` into grpc's cleanup, logged by the indexer on every cancelled stream)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc

from services.kit.context import current_request_id
from services.kit.grpc_server import ServiceInterceptor


class _Details:
    method = "/services.contracts.v1.IndexerService/StreamFacts"
    invocation_metadata = (("x-request-id", "req-stream"),)


async def test_a_stream_closed_from_another_task_closes_quietly() -> None:
    seen: list[str] = []

    async def stream(request: Any, context: Any) -> AsyncIterator[int]:
        for i in range(10):
            seen.append(current_request_id())
            yield i

    async def continuation(details: Any) -> grpc.RpcMethodHandler[Any, Any]:
        return grpc.unary_stream_rpc_method_handler(stream)

    handler = await ServiceInterceptor("test").intercept_service(continuation, _Details())  # type: ignore[arg-type]
    assert handler is not None
    replies = handler.unary_stream(None, None)  # type: ignore[misc]

    async def first() -> int:
        return await replies.__anext__()

    assert await asyncio.create_task(first()) == 0  # the RPC's task, with its own Context
    await asyncio.create_task(replies.aclose())  # grpc's cancellation, from another task: no ValueError
    assert seen == ["req-stream"]
