"""The FastAPI gateway: /v1 REST, /webhooks/*, OpenAPI, health and metrics."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI, Response
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from services.contracts.v1 import billing_pb2, common_pb2
from services.gateway import errors, openapi
from services.gateway.clients import Clients
from services.gateway.deliveries import DeliveryBatches
from services.gateway.errors import OrjsonResponse
from services.gateway.listings import SUBJECTS as listing_subjects
from services.gateway.listings import RepositoryListCache
from services.gateway.livecache import LiveCache
from services.gateway.middleware import BodyLimitMiddleware, RequestContextMiddleware
from services.gateway.principals import PrincipalCache
from services.gateway.ratelimit import RateBudgets
from services.gateway.routes import V1_ROUTERS, webhooks
from services.gateway.routing import add_routes
from services.gateway.settings import GatewaySettings
from services.gateway.settings import load as load_settings
from services.kit.bus import SUBJECT_PRINCIPALS_CHANGED, SUBJECT_SUBSCRIPTION_CHANGED, Bus
from services.kit.errors import error_body
from services.kit.grpc_client import call
from services.web import routes as web

log = logging.getLogger(__name__)

API_DESCRIPTION = """Code-review service REST interface. Every /v1 route needs `Authorization: Bearer <token>`.
Errors always have the body `{"error", "code", "details"}`; see docs/api.md for the code to status table."""


def create_app(settings: GatewaySettings | None = None, clients: Clients | None = None) -> FastAPI:
    settings = settings or load_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.clients = connected = clients or Clients.connect(settings)
        app.state.ai_client = httpx.AsyncClient()
        app.state.deliveries = DeliveryBatches(connected.hostapp)
        cache = app.state.principals = PrincipalCache(
            settings.principal_cache_seconds, settings.principal_cache_entries
        )
        listings = app.state.listings = RepositoryListCache(
            settings.repository_list_cache_seconds, settings.repository_list_cache_entries
        )
        if app.state.rate_limits:

            async def reserve(
                principal: common_pb2.Principal, org_id: str, want: int
            ) -> billing_pb2.RateBudgetResponse:
                request = billing_pb2.RateBudgetRequest(org_id=org_id, want=want)
                return await call(connected.billing.ReserveRateBudget, request, timeout=5, principal=principal)

            app.state.rate_budgets = RateBudgets(reserve, settings.rate_budget_max_batch, settings.rate_budget_share)
        bus = Bus(settings.nats_url, settings.nats_stream_prefix)
        watching = asyncio.create_task(watch_events(bus, cache, listings))
        yield
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
        await bus.close()
        await app.state.ai_client.aclose()
        await app.state.clients.close()

    app = FastAPI(
        title="Code Review Service",
        version="1.0.0",
        description=API_DESCRIPTION,
        openapi_url="/v1/openapi.json",
        docs_url=None,  # served offline by the dashboard (services/web)
        redoc_url=None,
        default_response_class=OrjsonResponse,
        lifespan=lifespan,
        servers=[{"url": settings.base_url.removesuffix("/v1"), "description": "production"}]
        + (
            [{"url": settings.staging_base_url.removesuffix("/v1"), "description": "staging"}]
            if settings.staging_base_url
            else []
        ),
    )
    app.state.settings = settings
    app.state.rate_limits = True
    errors.install(app)
    app.add_middleware(RepoPathMiddleware)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(RequestContextMiddleware)

    # Matched once each, in this order (services/gateway/routing.py): the webhooks first, the
    # route taking the most requests with the least work of its own.
    add_routes(app, webhooks.router)
    for router in V1_ROUTERS:
        add_routes(app, router, "/v1")
    openapi.install(app)
    web.install(app)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", include_in_schema=False)
    async def readyz() -> Any:
        states: dict[str, str] = {}
        for name, channel in app.state.clients.channels.items():
            try:
                reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=2)
                states[name] = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
            except Exception:
                states[name] = "UNREACHABLE"
        ok = all(s == "SERVING" for s in states.values())
        if ok:
            return {"status": "ready", "services": states}
        return OrjsonResponse(error_body("service_unavailable", "not ready", {"services": states}), status_code=503)

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # several workers (services/gateway/main.py)
            registry = CollectorRegistry()
            MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
            return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return app


async def watch_events(
    bus: Bus, principals: PrincipalCache, listings: RepositoryListCache | None = None, retry_seconds: float = 1.0
) -> None:
    """Subscribe this process to billing's identity and plan events and the indexer's repository
    events; each cache is live only while the subscription is (docs/accounts.md, "Revocation";
    docs/accounts.md, "Cached listings")."""
    caches: list[LiveCache[Any, Any]] = [principals] + ([listings] if listings is not None else [])
    while True:
        try:
            await bus.connect(connect_timeout=2)
            break
        except Exception as exc:  # NATS down at start: no caching until it answers
            log.warning("gateway caches off: NATS unreachable (%s); retrying", exc)
            await asyncio.sleep(retry_seconds)

    def on_connection(what: str) -> None:
        for cache in caches:
            if what == "slow_consumer":
                cache.clear(what)
            else:
                cache.set_live(what == "reconnected", what)

    bus.listeners.append(on_connection)
    await bus.watch(SUBJECT_PRINCIPALS_CHANGED, principals.on_principals_changed)
    await bus.watch(SUBJECT_SUBSCRIPTION_CHANGED, principals.on_subscription_changed)
    if listings is not None:
        for subject in listing_subjects:
            await bus.watch(subject, listings.on_repository_event)
    if bus.nc is not None:
        await bus.nc.flush()  # the server has the subscriptions before anything is cached
    for cache in caches:
        cache.set_live(True, "subscribed")


class RepoPathMiddleware:
    """``/v1/repositories/<owner>/<repo>/...`` addresses a hosted repository: rewrite it to
    the path-safe ``<owner>:<repo>`` id form before routing."""

    SUFFIXES = frozenset(
        {
            "index_repo",
            "index",
            "analyze",
            "analyze_pr",
            "review_changeset",
            "review_context",
            "report_findings",
            "domains",
            "segments",
            "network",
            "history",
            "file",
            "dashboard",
            "global_context",
        }
    )

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/v1/repositories/"):
            parts = scope["path"].split("/")
            # ["", "v1", "repositories", owner, repo, ...]
            if len(parts) >= 5 and parts[4] and parts[4] not in self.SUFFIXES and parts[3] != "host_index":
                rest = "/".join(parts[5:])
                path = f"/v1/repositories/{parts[3]}:{parts[4]}" + (f"/{rest}" if rest else "")
                scope = {**scope, "path": path, "raw_path": path.encode()}
        await self.app(scope, receive, send)
