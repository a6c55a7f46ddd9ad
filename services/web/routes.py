"""The dashboard's routes: the pages (one shell; the scripts draw each page from /v1), the
browser session (sign in with a token or through the code host, sign out), offline API docs."""

from __future__ import annotations

import hmac
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import Field

from services.api.schemas import AuthorizeStart, SignedIn, Strict, Validated
from services.gateway.errors import OrjsonResponse
from services.kit.errors import ServiceError
from services.web import v1
from services.web.edge import WebEdge
from services.web.session import (
    MAX_AGE_SECONDS,
    OAUTH_STATE,
    OAUTH_STATE_MAX_AGE_SECONDS,
    SESSION,
    clear_cookie,
    cookie_name,
    csrf_ok,
    csrf_token,
    same_origin,
    session_token,
    set_cookie,
)

STATIC = Path(__file__).parent / "static"
PAGES = ("/", "/signin", "/repositories", "/repositories/{rest:path}", "/account", "/team", "/assistant")
NO_STORE = {"cache-control": "no-store"}

router = APIRouter(include_in_schema=False)


class TokenSignIn(Strict):
    token: str = Field(..., min_length=1, max_length=512)


async def shell() -> FileResponse:
    return FileResponse(STATIC / "index.html", headers=NO_STORE)


for _path in PAGES:
    router.add_api_route(_path, shell, methods=["GET"])


@router.get("/v1/docs")
async def docs() -> FileResponse:
    return FileResponse(STATIC / "docs.html")


def _relay(reply: httpx.Response) -> Response:
    """An API error, passed on as it came (its status and its error body)."""
    return Response(reply.content, status_code=reply.status_code, media_type="application/json", headers=NO_STORE)


def _session_body(request: Request, principal: Validated | None, token: str = "") -> dict[str, Any]:
    settings = request.app.state.settings
    body: dict[str, Any] = {"signed_in": principal is not None, "assistant": bool(settings.ai_upstream_url)}
    if principal is not None:
        body |= {"principal": principal.model_dump(mode="json"), "csrf": csrf_token(token)}
    return body


@router.get("/ui/session")
async def get_session(request: Request) -> Response:
    token = session_token(request)
    if not token:
        return OrjsonResponse(_session_body(request, None), headers=NO_STORE)
    reply = await v1.call(request, "GET", "/v1/auth/validate", token)
    if reply.status_code == 401:  # expired, revoked or signed out elsewhere
        response = OrjsonResponse(_session_body(request, None), headers=NO_STORE)
        clear_cookie(response, request, SESSION)
        return response
    if reply.status_code != 200:
        return _relay(reply)
    return OrjsonResponse(_session_body(request, Validated.model_validate(reply.json()), token), headers=NO_STORE)


@router.post("/ui/session")
async def sign_in(request: Request, body: TokenSignIn) -> Response:
    # JSON only (a cross-site form cannot send it without a preflight) and from this origin:
    # nobody can sign a visitor in to someone else's account (login CSRF).
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json" or not same_origin(request):
        raise ServiceError("forbidden", "sign-in must come from the dashboard's own page")
    reply = await v1.call(request, "GET", "/v1/auth/validate", body.token)
    if reply.status_code != 200:
        return _relay(reply)
    response = OrjsonResponse(_session_body(request, Validated.model_validate(reply.json()), body.token))
    response.headers.update(NO_STORE)
    set_cookie(response, request, SESSION, body.token, MAX_AGE_SECONDS)
    return response


@router.delete("/ui/session")
async def sign_out(request: Request) -> Response:
    token = session_token(request)
    response = Response(status_code=204, headers=NO_STORE)
    if not token:
        return response
    if not csrf_ok(request, "DELETE", token):
        raise ServiceError("forbidden", "missing or wrong CSRF token, or a request from another site")
    reply = await v1.call(request, "GET", "/v1/auth/validate", token)
    # A code-host session ends with the sign-out; a personal access token stays valid for the
    # scripts that use it (revoke it on the Account page).
    if reply.status_code == 200 and Validated.model_validate(reply.json()).token_kind == "session":
        ended = await v1.call(request, "DELETE", "/v1/auth/signout", token)
        if ended.status_code >= 400 and ended.status_code != 401:
            return _relay(ended)
    clear_cookie(response, request, SESSION)
    return response


def _back_to_signin(code: str, message: str) -> RedirectResponse:
    return RedirectResponse("/signin?" + urlencode({"code": code, "error": message}), status_code=303)


def _error_of(reply: httpx.Response) -> tuple[str, str]:
    try:
        body = reply.json()
        return str(body.get("code", "")), str(body.get("error", ""))
    except ValueError:
        return "upstream_error", f"HTTP {reply.status_code}"


@router.get("/ui/oauth/start")
async def oauth_start(request: Request) -> Response:
    callback = str(request.url_for("oauth_callback"))
    reply = await v1.call(request, "GET", "/v1/auth/host/authorize", params={"redirect_uri": callback})
    if reply.status_code != 200:
        return _back_to_signin(*_error_of(reply))
    start = AuthorizeStart.model_validate(reply.json())
    response = RedirectResponse(start.authorize_url, status_code=303)
    set_cookie(response, request, OAUTH_STATE, start.state, OAUTH_STATE_MAX_AGE_SECONDS)
    return response


@router.get("/ui/oauth/callback", name="oauth_callback")
async def oauth_callback(request: Request, code: str = "", state: str = "", error: str = "") -> Response:
    expected = request.cookies.get(cookie_name(request, OAUTH_STATE), "")
    if error:
        return _back_to_signin("oauth_failed", f"the code host refused: {error}"[:300])
    # The state must be the one this browser started with (the code host echoes it back).
    if not expected or not state or not hmac.compare_digest(expected, state):
        return _back_to_signin("oauth_failed", "sign-in state missing or mismatched: start again")
    reply = await v1.call(request, "POST", "/v1/auth/host", json={"code": code, "state": state})
    if reply.status_code != 200:
        return _back_to_signin(*_error_of(reply))
    signed = SignedIn.model_validate(reply.json())
    max_age = MAX_AGE_SECONDS
    if signed.expires_at is not None:
        max_age = max(1, min(max_age, int(signed.expires_at.timestamp() - time.time())))
    response = RedirectResponse("/repositories", status_code=303)
    set_cookie(response, request, SESSION, signed.access_token, max_age)
    clear_cookie(response, request, OAUTH_STATE)
    return response


def install(app: FastAPI) -> None:
    """Mount the dashboard on the gateway (pages, session, assets, /v1/docs)."""
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(WebEdge)
