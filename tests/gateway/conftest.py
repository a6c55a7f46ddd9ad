"""The gateway against a real billing service (gRPC, PostgreSQL) where a test needs a valid
token; the other services stay absent, so a 4xx here is proven to come from the edge."""

from tests.billing.conftest import billing, standins

__all__ = ["billing", "standins"]
