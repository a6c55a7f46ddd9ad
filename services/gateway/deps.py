"""Dependencies shared by the routes: the gRPC clients and the authenticated principal."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import HTTPBearer

from services.contracts.v1 import billing_pb2, common_pb2
from services.gateway.clients import Clients
from services.gateway.principals import PrincipalCache
from services.gateway.ratelimit import RateBudgets, org_of
from services.kit import tokens
from services.kit.errors import ServiceError
from services.kit.grpc_client import call
from services.kit.identity import principal_var


async def get_clients(request: Request) -> Clients:  # async: a sync dependency costs a thread hop
    clients: Clients = request.app.state.clients
    return clients


ClientsDep = Annotated[Clients, Depends(get_clients)]


def bearer_token(request: Request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if not header:
        raise ServiceError("not_authenticated", "missing Authorization header")
    if scheme.lower() != "bearer" or not token.strip():
        raise ServiceError("invalid_token", "Authorization must be 'Bearer <token>'")
    return token.strip()


def client_ip(request: Request) -> str:
    """The client's address (a trusted proxy's X-Forwarded-For already applied by uvicorn)."""
    return request.client.host if request.client else ""


# The scheme the OpenAPI document declares on every operation that depends on the principal
# (services/gateway/openapi.py reads the dependency tree). It is not itself a dependency: each node
# of a route's dependency tree costs every request, and ``bearer_token`` refuses, with the codes of
# the error table.
BEARER = HTTPBearer(
    scheme_name="bearer",
    bearerFormat="crp_... (personal access token) or crs_... (session token)",
    description="`Authorization: Bearer <token>`; a missing or invalid token is 401 with `WWW-Authenticate: Bearer`",
    auto_error=False,
)


async def current_principal(request: Request) -> common_pb2.Principal:
    """Every /v1 call: the principal from this process's cache (docs/accounts.md, "Revocation"),
    else validated by billing; then one request spent from the process's rate budget."""
    clients: Clients = request.app.state.clients
    token = bearer_token(request)
    state = request.app.state
    cache: PrincipalCache | None = getattr(state, "principals", None)
    digest = tokens.digest(token)
    principal = cache.get(digest) if cache is not None else None
    if principal is None:
        generation = cache.generation if cache is not None else 0
        validate = billing_pb2.ValidateTokenRequest(token=token, client_ip=client_ip(request))
        response = await call(clients.billing.ValidateToken, validate, timeout=5)
        principal = response.principal
        if cache is not None:
            cache.put(digest, principal, response.expires_at, generation)
    principal_var.set(principal)
    request.state.principal = principal
    request.state.token = token
    budgets: RateBudgets | None = getattr(state, "rate_budgets", None)
    if budgets is not None:
        await budgets.take(principal, org_of(request))
    return principal


PrincipalDep = Annotated[common_pb2.Principal, Depends(current_principal)]


def uses_principal(dependant: Any) -> bool:
    """The route's dependency tree includes ``current_principal`` (it needs a token)."""
    return dependant is not None and (
        dependant.call is current_principal or any(uses_principal(d) for d in dependant.dependencies)
    )
