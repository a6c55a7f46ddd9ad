"""Bodies over the gateway's bound are refused with 413 in the error shape, before any handler."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from services.gateway.app import create_app
from services.gateway.clients import Clients
from services.gateway.settings import GatewaySettings


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    settings = GatewaySettings(max_body_bytes=1024, payment_webhook_secret="whsec_test")
    app = create_app(settings)
    app.state.clients = Clients.connect(settings)  # never dialled: the bound or the signature refuses first
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway") as c:
        yield c
    await app.state.clients.close()


def assert_too_large(reply: httpx.Response) -> None:
    assert reply.status_code == 413, reply.text
    body = reply.json()
    assert body["code"] == "payload_too_large"
    assert body["details"] == {"max_bytes": 1024}


async def test_declared_length_over_the_bound(client: httpx.AsyncClient) -> None:
    assert_too_large(await client.post("/webhooks/payment", content=b"x" * 2048))


async def test_streamed_body_over_the_bound(client: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(8):
            yield b"y" * 512

    assert_too_large(await client.post("/webhooks/payment", content=chunks()))


async def test_body_under_the_bound_reaches_the_handler(client: httpx.AsyncClient) -> None:
    reply = await client.post("/webhooks/payment", content=b"{}", headers={"Payment-Signature": "t=1,v1=00"})
    assert reply.status_code == 400
    assert reply.json()["code"] == "invalid_signature"
