"""An OpenAI-compatible chat-completions upstream: a JSON answer, or server-sent events ending
with a usage chunk (when ``stream_options.include_usage``) and ``[DONE]``."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

API_KEY = "sk-standin-ai"


class AiUpstreamStandIn:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.complete, methods=["POST"])])

    async def complete(self, request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {API_KEY}":
            return JSONResponse({"error": {"message": "invalid api key", "type": "invalid_request_error"}}, 401)
        body = await request.json()
        self.requests.append(body)
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        words = ["echo:", *prompt.split()][:20]
        usage = {"prompt_tokens": len(prompt.split()) + 3, "completion_tokens": len(words)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        base = {"id": "chatcmpl-standin", "created": int(time.time()), "model": body.get("model", "")}
        if not body.get("stream"):
            choice = {"index": 0, "message": {"role": "assistant", "content": " ".join(words)}, "finish_reason": "stop"}
            return JSONResponse({**base, "object": "chat.completion", "choices": [choice], "usage": usage})

        async def events() -> AsyncIterator[bytes]:
            chunk = {**base, "object": "chat.completion.chunk"}
            yield _sse({**chunk, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})
            for word in words:
                yield _sse(
                    {**chunk, "choices": [{"index": 0, "delta": {"content": word + " "}, "finish_reason": None}]}
                )
            yield _sse({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            if (body.get("stream_options") or {}).get("include_usage"):
                yield _sse({**chunk, "choices": [], "usage": usage})
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")


def _sse(data: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()
