"""The /v1 routes are the application's own routes (services/gateway/routing.py): each is matched
once per request, and the OpenAPI document is what ``include_router`` would have made."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.routing import APIRoute

from services.gateway.app import create_app
from services.gateway.errors import OrjsonResponse
from services.gateway.routes import V1_ROUTERS as ROUTERS
from services.gateway.routing import add_routes


def test_every_v1_route_is_matched_by_the_applications_own_router() -> None:
    app = create_app()
    own = [r for r in app.router.routes if isinstance(r, APIRoute) and r.path.startswith("/v1/")]
    assert len(own) == sum(len(router.routes) for router in ROUTERS)
    documented = {path for path in app.openapi()["paths"] if path.startswith("/v1/")}
    assert documented == {r.path for r in own}


def test_added_routes_describe_themselves_as_included_ones() -> None:
    included = FastAPI(default_response_class=OrjsonResponse)
    added = FastAPI(default_response_class=OrjsonResponse)
    for router in ROUTERS:
        included.include_router(router, prefix="/v1")
        add_routes(added, router, "/v1")
    assert added.openapi() == included.openapi()
