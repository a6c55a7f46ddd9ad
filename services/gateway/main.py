"""The gateway process: uvicorn with uvloop and httptools, no access log."""

from __future__ import annotations

import uvicorn

from services.gateway.app import create_app
from services.gateway.settings import load
from services.kit.logs import configure_logging


def main() -> None:
    settings = load()
    configure_logging("gateway", settings.log_level, settings.log_json)
    uvicorn.run(
        create_app(settings),
        host=settings.listen_host(),
        port=settings.port,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_config=None,
        timeout_graceful_shutdown=5,
        proxy_headers=True,
        forwarded_allow_ips=settings.forwarded_allow_ips,
    )


if __name__ == "__main__":
    main()
