"""The baseline: a bare FastAPI app with one route, served by uvicorn with the gateway's options
(``services.gateway.main.server_options``: the same loop, HTTP parser and number of workers)."""

from __future__ import annotations

import sys

import uvicorn
from fastapi import FastAPI

from services.gateway.main import server_options
from services.gateway.settings import GatewaySettings


def create_app() -> FastAPI:
    app = FastAPI()

    @app.get("/ping")
    async def ping() -> dict[str, str]:
        return {"status": "ok"}

    return app


def main() -> None:
    options = server_options(GatewaySettings(port=int(sys.argv[1])))
    uvicorn.run("bench.gateway.ping:create_app", factory=True, **options)


if __name__ == "__main__":
    main()
