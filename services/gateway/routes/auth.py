"""Sign-in through the code host, token validation, sign-out."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request, Response

from services.api.schemas import AuthorizeStart, HostSignIn, PrincipalInfo, SignedIn, Validated
from services.api.types import from_seconds
from services.contracts.v1 import billing_pb2
from services.gateway.deps import ClientsDep, PrincipalDep, bearer_token, client_ip
from services.kit.grpc_client import call
from services.kit.messages import plain

router = APIRouter(prefix="/auth", tags=["auth"])
# Empty (the configured default) or an absolute http(s) URL with a host, as billing checks it.
REDIRECT_URI = r"^$|^[hH][tT][tT][pP][sS]?://[^/?#]"


@router.get(
    "/host/authorize",
    response_model=AuthorizeStart,
    summary="Start code-host sign-in: the authorize URL and its state (no bearer token)",
)
async def authorize(
    request: Request,
    clients: ClientsDep,
    redirect_uri: str = Query(
        "", max_length=2048, pattern=REDIRECT_URI, description="Where the host sends the user back (absolute http(s))"
    ),
) -> Any:
    start = billing_pb2.StartHostSignInRequest(redirect_uri=redirect_uri, client_ip=client_ip(request))
    return plain(await call(clients.billing.StartHostSignIn, start))


@router.post(
    "/host",
    response_model=SignedIn,
    summary="Code-host OAuth, server-side flow: exchange the code for a session token (no bearer token)",
)
async def host_sign_in(request: Request, body: HostSignIn, clients: ClientsDep) -> Any:
    exchange = billing_pb2.SignInWithHostRequest(code=body.code, state=body.state, client_ip=client_ip(request))
    signed_in = await call(clients.billing.SignInWithHost, exchange, timeout=30)
    return SignedIn(
        access_token=signed_in.access_token,
        expires_at=from_seconds(signed_in.expires_at),
        principal=PrincipalInfo.model_validate(plain(signed_in.principal)),
    )


@router.get("/validate", response_model=Validated, summary="Verify a token and say whom it belongs to")
async def validate(principal: PrincipalDep) -> dict[str, Any]:
    body = plain(principal)
    return {"valid": True, "user": {"id": body["user_id"], "login": body["login"]}, **body}


@router.delete("/signout", status_code=204, summary="Sign out: revoke the presented token at once")
async def signout(request: Request, principal: PrincipalDep, clients: ClientsDep) -> Response:
    await call(clients.billing.SignOut, billing_pb2.SignOutRequest(token=bearer_token(request)), principal=principal)
    return Response(status_code=204)
