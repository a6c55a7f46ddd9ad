"""AI proxy (internal): an authenticated pass-through to an OpenAI-compatible upstream."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import orjson
from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from services.contracts.v1 import billing_pb2
from services.gateway.deps import ClientsDep, PrincipalDep
from services.gateway.schemas import Chat
from services.kit.context import current_request_id
from services.kit.errors import ServiceError
from services.kit.grpc_client import call

log = logging.getLogger(__name__)
router = APIRouter(prefix="/ai", tags=["internal"])


@router.post(
    "/chat",
    summary="Chat-completion proxy (internal, unsupported for external use)",
    openapi_extra={"x-internal": True},
)
async def chat(body: Chat, request: Request, principal: PrincipalDep, clients: ClientsDep) -> Any:
    settings = request.app.state.settings
    if not settings.ai_upstream_url:
        raise ServiceError("not_configured", "no AI upstream is configured (CR_GATEWAY_AI_UPSTREAM_URL)")
    payload = body.model_dump(exclude_none=True)
    if not payload.get("model"):
        payload["model"] = settings.ai_default_model
    url = settings.ai_upstream_url.rstrip("/") + "/chat/completions"
    headers = {"authorization": f"Bearer {settings.ai_upstream_key}"} if settings.ai_upstream_key else {}
    client: httpx.AsyncClient = request.app.state.ai_client

    async def record(usage: dict[str, Any]) -> None:
        await call(
            clients.billing.RecordAiUsage,
            billing_pb2.RecordAiUsageRequest(
                request_id=current_request_id(),
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
                model=str(payload["model"]),
            ),
            principal=principal,
        )

    if not body.stream:
        try:
            upstream = await client.post(url, json=payload, headers=headers, timeout=120)
        except httpx.HTTPError as exc:
            raise ServiceError("upstream_error", f"AI upstream unreachable: {exc}") from None
        if upstream.status_code >= 400:
            raise ServiceError("upstream_error", "AI upstream refused the request", {"status": upstream.status_code})
        data = upstream.json()
        await record(data.get("usage") or {})
        return data

    payload["stream_options"] = {"include_usage": True}
    req = client.build_request("POST", url, json=payload, headers=headers, timeout=120)
    try:
        upstream = await client.send(req, stream=True)
    except httpx.HTTPError as exc:
        raise ServiceError("upstream_error", f"AI upstream unreachable: {exc}") from None
    if upstream.status_code >= 400:
        await upstream.aclose()
        raise ServiceError("upstream_error", "AI upstream refused the request", {"status": upstream.status_code})

    async def relay() -> Any:
        usage: dict[str, Any] = {}
        try:
            async for line in upstream.aiter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    try:
                        usage = orjson.loads(line[6:]).get("usage") or usage
                    except orjson.JSONDecodeError:
                        pass
                yield (line + "\n").encode()
        finally:
            await upstream.aclose()
            try:
                await record(usage)
            except Exception as exc:  # usage recording must not break a finished stream
                log.warning("could not record AI usage: %s", exc)

    return StreamingResponse(relay(), media_type="text/event-stream")
