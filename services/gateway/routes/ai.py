"""AI proxy (internal): an authenticated pass-through to an OpenAI-compatible upstream."""

from __future__ import annotations

import logging
import uuid
from typing import Any

import httpx
import orjson
from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from services.api.schemas import Chat
from services.contracts.v1 import billing_pb2
from services.gateway.deps import ClientsDep, PrincipalDep
from services.kit.errors import ServiceError
from services.kit.grpc_client import call
from services.kit.identity import owner_of_user

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
    # Refuse before spending upstream tokens: plan_required without AI in the plan, quota_exceeded past the cap.
    quota = billing_pb2.CheckQuotaRequest(owner=owner_of_user(principal.user_id), metric="ai_tokens", amount=1)
    await call(clients.billing.CheckQuota, quota, principal=principal)
    # The usage record's dedupe key: one per proxied call (the request id can come from the client).
    usage_id = f"ai-{uuid.uuid4().hex}"

    async def record(usage: dict[str, Any]) -> None:
        try:
            await call(
                clients.billing.RecordAiUsage,
                billing_pb2.RecordAiUsageRequest(
                    request_id=usage_id,
                    prompt_tokens=int(usage.get("prompt_tokens") or 0),
                    completion_tokens=int(usage.get("completion_tokens") or 0),
                    model=str(payload["model"]),
                ),
                principal=principal,
            )
        except Exception as exc:  # the answer is already paid for upstream; losing the record must not lose it
            log.warning("could not record AI usage %s: %s", usage_id, exc)

    if not body.stream:
        try:
            upstream = await client.post(url, json=payload, headers=headers, timeout=120)
        except httpx.HTTPError as exc:
            raise ServiceError("upstream_error", f"AI upstream unreachable: {exc}") from None
        if upstream.status_code >= 400:
            raise ServiceError("upstream_error", "AI upstream refused the request", {"status": upstream.status_code})
        try:
            data = upstream.json()
        except ValueError:
            raise ServiceError("upstream_error", "AI upstream answered with something other than JSON") from None
        await record((data.get("usage") if isinstance(data, dict) else None) or {})
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
                        chunk = orjson.loads(line[6:])
                    except orjson.JSONDecodeError:
                        chunk = None
                    if isinstance(chunk, dict):
                        usage = chunk.get("usage") or usage
                yield (line + "\n").encode()
        finally:
            await upstream.aclose()
            await record(usage)

    # No buffering between the upstream and the client (proxies included).
    stream_headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(relay(), media_type="text/event-stream", headers=stream_headers)
