"""The dashboard's own calls to the public /v1 API (sign-in, sign-out), made in process through
the whole application, middleware included, exactly as an outside client's would be."""

from __future__ import annotations

from typing import Any

import httpx
from starlette.requests import Request


async def call(
    request: Request,
    method: str,
    path: str,
    token: str = "",
    json: Any = None,
    params: dict[str, str] | None = None,
) -> httpx.Response:
    # The caller's address goes along: sign-in attempts are rate-limited per client address.
    client = (request.client.host, request.client.port) if request.client else ("127.0.0.1", 0)
    transport = httpx.ASGITransport(app=request.app, client=client)
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client_:
        return await client_.request(method, path, json=json, params=params, headers=headers)
