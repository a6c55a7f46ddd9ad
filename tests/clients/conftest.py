"""The clients' end-to-end tests reuse the e2e harness: one running system per test session."""

from tests.e2e.conftest import http, system

__all__ = ["http", "system"]
