"""The gateway's account edges in process (two replicas, one billing): the shared rate limit
with 429 and Retry-After, sign-in routes without a bearer token, and the AI proxy against an
OpenAI-compatible stand-in, streaming included."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import httpx
import pytest

from services.billing.models import Subscription
from services.contracts.v1 import billing_pb2, common_pb2
from services.gateway.app import create_app
from services.gateway.settings import GatewaySettings
from tests.billing.conftest import Billing, unique
from tests.standins import ai_upstream
from tests.standins.accounts import StandIns


async def gateway(stack: AsyncExitStack, billing: Billing, **settings: str) -> httpx.AsyncClient:
    app = create_app(GatewaySettings(billing_addr=billing.address, **settings))
    await stack.enter_async_context(app.router.lifespan_context(app))
    return await stack.enter_async_context(
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")
    )


@pytest.fixture(scope="module")
async def replicas(billing: Billing, standins: StandIns) -> AsyncIterator[list[httpx.AsyncClient]]:
    async with AsyncExitStack() as stack:
        ai = {"ai_upstream_url": f"{standins.url}/ai/v1", "ai_upstream_key": ai_upstream.API_KEY}
        yield [await gateway(stack, billing, **ai), await gateway(stack, billing, **ai)]


async def usage(billing: Billing, principal: common_pb2.Principal) -> billing_pb2.Usage:
    # Read from billing itself: the REST route adds the indexer's repository count, and no
    # indexer runs here.
    return await billing.call("GetUsage", billing_pb2.AccountRequest(), principal=principal)  # type: ignore[no-any-return]


async def on_plan(billing: Billing, user_id: str, plan: str) -> None:
    async with billing.db.session() as session:
        session.add(Subscription(owner=f"user:{user_id}", plan=plan, status="active", subscription_id=unique("sub")))


async def test_rate_limit_is_shared_by_gateway_replicas(billing: Billing, replicas: list[httpx.AsyncClient]) -> None:
    token, me = await billing.user()
    await on_plan(billing, me.user_id, "tiny")  # 5 requests a minute
    auth = {"Authorization": f"Bearer {token}"}
    statuses = [(await replicas[i % 2].get("/v1/auth/validate", headers=auth)).status_code for i in range(5)]
    if 429 in statuses:  # the five straddled a window boundary: the next window is fresh
        statuses = [(await replicas[i % 2].get("/v1/auth/validate", headers=auth)).status_code for i in range(5)]
    assert statuses == [200] * 5
    refused = await replicas[1].get("/v1/auth/validate", headers=auth)
    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limited"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert set(refused.json()) == {"error", "code", "details"}


async def test_sign_in_routes_need_no_bearer_token(replicas: list[httpx.AsyncClient]) -> None:
    started = await replicas[0].get("/v1/auth/host/authorize", params={"redirect_uri": "https://x.test/cb"})
    assert started.status_code == 200, started.text
    assert set(started.json()) == {"authorize_url", "state"}
    refused = await replicas[0].post("/v1/auth/host", json={"code": "c", "state": "not-ours"})
    assert refused.status_code == 401
    assert refused.json()["code"] == "oauth_failed"


async def test_ai_proxy_answers_and_records_usage(
    billing: Billing, replicas: list[httpx.AsyncClient], standins: StandIns
) -> None:
    token, me = await billing.user(unique("dashboard"))
    auth = {"Authorization": f"Bearer {token}"}
    body = {"messages": [{"role": "user", "content": "review this function please"}]}
    reply = await replicas[0].post("/v1/ai/chat", json=body, headers=auth)
    assert reply.status_code == 200, reply.text
    answer = reply.json()
    assert answer["choices"][0]["message"]["content"].startswith("echo:")
    assert standins.ai.requests[-1]["model"] == "gpt-4o-mini"  # the configured default
    used = await usage(billing, me)
    assert used.usage.ai_tokens.used == answer["usage"]["total_tokens"]


async def test_ai_proxy_streams_and_records_usage(
    billing: Billing, replicas: list[httpx.AsyncClient], standins: StandIns
) -> None:
    token, me = await billing.user(unique("streamer"))
    auth = {"Authorization": f"Bearer {token}"}
    body = {"model": "m1", "stream": True, "messages": [{"role": "user", "content": "one two three"}]}
    async with replicas[1].stream("POST", "/v1/ai/chat", json=body, headers=auth) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        lines = [line async for line in reply.aiter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in lines[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text.split() == ["echo:", "one", "two", "three"]
    assert standins.ai.requests[-1]["stream_options"] == {"include_usage": True}
    usage_chunk = chunks[-1]["usage"]
    used = await usage(billing, me)
    assert used.usage.ai_tokens.used == usage_chunk["prompt_tokens"] + usage_chunk["completion_tokens"]
    assert used.records[0].detail.startswith("m1:")


async def test_ai_proxy_needs_a_plan_with_ai(billing: Billing, replicas: list[httpx.AsyncClient]) -> None:
    token, me = await billing.user()
    await on_plan(billing, me.user_id, "tiny")  # ai_tokens cap 0
    reply = await replicas[0].post(
        "/v1/ai/chat",
        json={"messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert reply.status_code == 403
    assert reply.json()["code"] == "plan_required"


async def test_ai_proxy_without_upstream_is_not_configured(billing: Billing) -> None:
    token, _ = await billing.user()
    async with AsyncExitStack() as stack:
        client = await gateway(stack, billing)
        reply = await client.post(
            "/v1/ai/chat",
            json={"messages": [{"role": "user", "content": "x"}]},
            headers={"Authorization": f"Bearer {token}"},
        )
    assert reply.status_code == 501
    assert reply.json()["code"] == "not_configured"


async def test_ai_route_is_marked_internal(replicas: list[httpx.AsyncClient]) -> None:
    spec = (await replicas[0].get("/v1/openapi.json")).json()
    assert spec["paths"]["/v1/ai/chat"]["post"]["x-internal"] is True
