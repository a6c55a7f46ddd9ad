"""Typed Python client for the code-review service's REST ``/v1`` surface (sync and async).

No FastAPI here: the CLI and the MCP server import this and must start fast.
"""

from services.client import api
from services.client.client import AsyncClient, Client
from services.client.config import ClientConfig, ConfigError
from services.client.errors import ApiError
from services.client.retry import RetryPolicy, Wait

__all__ = ["ApiError", "AsyncClient", "Client", "ClientConfig", "ConfigError", "RetryPolicy", "Wait", "api"]
