"""Structured logs: JSON when stderr is not a terminal, with service name and request id."""

from __future__ import annotations

import logging
import sys

from pythonjsonlogger.json import JsonFormatter

from services.kit.context import request_id_var


class _ContextFilter(logging.Filter):
    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def filter(self, record: logging.LogRecord) -> bool:
        record.service = self.service
        record.request_id = request_id_var.get()
        return True


def configure_logging(service: str, level: str = "INFO", json_output: bool | None = None) -> None:
    if json_output is None:
        json_output = not sys.stderr.isatty()
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_ContextFilter(service))
    if json_output:
        handler.setFormatter(
            JsonFormatter(
                "%(asctime)s %(levelname)s %(name)s %(message)s %(service)s %(request_id)s",
                rename_fields={"asctime": "ts", "levelname": "level", "name": "logger"},
            )
        )
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)-5s %(service)s [%(request_id)s] %(name)s: %(message)s")
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # Libraries that log every request at INFO would drown the service's own lines.
    for noisy in ("nats", "uvicorn.access", "alembic.runtime.migration", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
