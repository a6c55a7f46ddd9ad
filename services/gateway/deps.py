"""Dependencies shared by the routes: the gRPC clients and the authenticated principal."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from services.contracts.v1 import billing_pb2, common_pb2
from services.gateway.clients import Clients
from services.gateway.ratelimit import org_of
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


# Declares the scheme in the OpenAPI document (and ``security`` on every operation that depends on
# the principal). It never answers itself: ``bearer_token`` refuses, with the codes of the error table.
BEARER = HTTPBearer(
    scheme_name="bearer",
    bearerFormat="crp_... (personal access token) or crs_... (session token)",
    description="`Authorization: Bearer <token>`; a missing or invalid token is 401 with `WWW-Authenticate: Bearer`",
    auto_error=False,
)
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)]


async def current_principal(request: Request, clients: ClientsDep, _credentials: Credentials) -> common_pb2.Principal:
    """Every /v1 call: the token is validated by billing on each request (no cache), so a
    revoked or signed-out token stops working at once; the same round trip meters the
    request against the caller's rate limits."""
    token = bearer_token(request)
    meter = bool(getattr(request.app.state, "rate_limits", False))
    validate = billing_pb2.ValidateTokenRequest(
        token=token, meter=meter, org_id=org_of(request) if meter else "", client_ip=client_ip(request)
    )
    response = await call(clients.billing.ValidateToken, validate, timeout=5)
    principal: common_pb2.Principal = response.principal
    principal_var.set(principal)
    request.state.principal = principal
    request.state.token = token
    return principal


PrincipalDep = Annotated[common_pb2.Principal, Depends(current_principal)]
