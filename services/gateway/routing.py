"""The /v1 routes as the application's own routes, not included routers.

FastAPI (0.165) matches an included router lazily: the application asks each included router
whether it matches (which tries every route in it), then the chosen router matches its routes
again to pick one, and one level of nesting more repeats both. A request for a route late in the
table paid about 50-85 route matches, which was most of the gateway's own cost per request
(cProfile of ``GET /v1/auth/validate``: routing 60 % of the time). A route added to the
application's router is matched once, by one regular expression.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute


def add_routes(app: FastAPI, router: APIRouter, prefix: str = "") -> None:
    """Add ``router``'s routes to ``app`` under ``prefix``, as ``include_router`` would describe
    them (the router's tags, dependencies and responses are already on each route)."""
    for route in router.routes:
        if not isinstance(route, APIRoute):
            raise TypeError(f"{route!r} is not a path operation")
        app.router.add_api_route(
            prefix + route.path,
            route.endpoint,
            response_model=route.response_model,
            status_code=route.status_code,
            tags=list(route.tags),
            dependencies=list(route.dependencies),
            summary=route.summary,
            description=route.description,
            response_description=route.response_description,
            responses=dict(route.responses),
            deprecated=route.deprecated,
            methods=set(route.methods or ()),
            operation_id=route.operation_id,
            response_model_include=route.response_model_include,
            response_model_exclude=route.response_model_exclude,
            response_model_by_alias=route.response_model_by_alias,
            response_model_exclude_unset=route.response_model_exclude_unset,
            response_model_exclude_defaults=route.response_model_exclude_defaults,
            response_model_exclude_none=route.response_model_exclude_none,
            include_in_schema=route.include_in_schema,
            response_class=route.response_class,
            name=route.name,
            route_class_override=type(route),
            callbacks=route.callbacks,
            openapi_extra=route.openapi_extra,
            generate_unique_id_function=route.generate_unique_id_function,
            strict_content_type=route.strict_content_type,
            max_body_size=route.max_body_size,
        )
