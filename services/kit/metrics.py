"""Prometheus metrics shared by every service (names are dotted-stable, prefixed ``cr_``)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram, start_http_server

RPC_REQUESTS = Counter("cr_rpc_requests_total", "gRPC requests handled", ["service", "method", "code"])
RPC_LATENCY = Histogram(
    "cr_rpc_duration_seconds",
    "gRPC handler latency",
    ["service", "method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
HTTP_REQUESTS = Counter("cr_http_requests_total", "HTTP requests handled", ["route", "method", "status"])
HTTP_LATENCY = Histogram(
    "cr_http_duration_seconds",
    "HTTP handler latency",
    ["route", "method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
OUTBOX_LAG = Gauge("cr_outbox_lag_seconds", "Age of the oldest unpublished outbox event", ["service"])
OUTBOX_PENDING = Gauge("cr_outbox_pending", "Unpublished outbox events", ["service"])
CONSUMER_LAG = Gauge("cr_consumer_pending", "Messages pending for a durable consumer", ["service", "consumer"])
# Set by each job queue's periodic pass (the indexer's reaper, hostapp's reconciler): 0 when none waits.
JOB_AGE = Gauge(
    "cr_job_oldest_age_seconds", "Age of the oldest job queued or running (not finished)", ["service", "queue"]
)
PRINCIPAL_CACHE = Counter("cr_gateway_principal_cache_total", "Principal lookups at the gateway", ["outcome"])
PRINCIPAL_CACHE_LIVE = Gauge(
    "cr_gateway_principal_cache_live",
    "1 while the gateway's principal cache hears billing's events (0: every request validates)",
    multiprocess_mode="livemin",
)
REPOSITORY_LIST_CACHE = Counter(
    "cr_gateway_repository_list_cache_total", "Repository listings looked up in the gateway's cache", ["outcome"]
)
EVENTS_CONSUMED = Counter("cr_events_consumed_total", "Events consumed", ["service", "consumer", "outcome"])


def serve_metrics(port: int, host: str) -> None:
    if port:
        start_http_server(port, addr=host)
