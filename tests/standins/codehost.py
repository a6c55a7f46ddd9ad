"""The code host's OAuth web flow and user endpoints (GitHub's shapes, from its published
examples), reached by the service through the same base URLs production configures.

A test says who "logs in" (``login_as``), follows the authorize URL the service built, and
gets redirected with a code, as a browser would; the token endpoint and ``/user`` then
answer for that identity.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from tests.standins.fixtures import fixture

CLIENT_ID = "Iv1.standin0000000"
CLIENT_SECRET = "standin-client-secret"


@dataclass
class Identity:
    login: str
    host_id: int
    email: str = ""
    scope: str = "read:org,user:email"
    orgs: list[tuple[str, int, str]] = field(default_factory=list)  # (login, id, "admin" | "member")


class CodeHostStandIn:
    def __init__(self) -> None:
        self.codes: dict[str, Identity] = {}
        self.tokens: dict[str, Identity] = {}
        self.next_identity: Identity | None = None
        self.exchanges: list[dict[str, str]] = []

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/login/oauth/authorize", self.authorize, methods=["GET"]),
                Route("/login/oauth/access_token", self.access_token, methods=["POST"]),
                Route("/api/user", self.user, methods=["GET"]),
                Route("/api/user/memberships/orgs", self.memberships, methods=["GET"]),
            ]
        )

    def login_as(self, identity: Identity) -> None:
        self.next_identity = identity

    def issue_code(self, identity: Identity) -> str:
        code = secrets.token_hex(10)
        self.codes[code] = identity
        return code

    async def authorize(self, request: Request) -> Response:
        q = request.query_params
        if q.get("client_id") != CLIENT_ID or self.next_identity is None:
            return JSONResponse({"message": "unknown client or nobody signed in"}, 400)
        code = self.issue_code(self.next_identity)
        query = urlencode({"code": code, "state": q.get("state", "")})
        return RedirectResponse(f"{q.get('redirect_uri', 'http://127.0.0.1/callback')}?{query}", 302)

    async def access_token(self, request: Request) -> Response:
        form = dict(parse_qsl((await request.body()).decode(), keep_blank_values=True))
        self.exchanges.append({k: str(v) for k, v in form.items()})
        # GitHub answers these refusals with 200 and an "error" member.
        if form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
            return JSONResponse({"error": "incorrect_client_credentials", "error_description": "bad client"})
        identity = self.codes.pop(str(form.get("code", "")), None)  # a code works once
        if identity is None:
            return JSONResponse(
                {"error": "bad_verification_code", "error_description": "The code is incorrect or expired."}
            )
        body = fixture("github/oauth.access-token.oauth-app.json")
        body["access_token"] = f"gho_{secrets.token_hex(18)}"
        body["scope"] = identity.scope
        self.tokens[body["access_token"]] = identity
        return JSONResponse(body)

    def _identity(self, request: Request) -> Identity | None:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        return self.tokens.get(token) if scheme.lower() in ("bearer", "token") else None

    async def user(self, request: Request) -> Response:
        identity = self._identity(request)
        if identity is None:
            return JSONResponse({"message": "Bad credentials"}, 401)
        body = fixture("github/users.get-authenticated.private-user.json")
        body.update(login=identity.login, id=identity.host_id, email=identity.email or None)
        return JSONResponse(body)

    async def memberships(self, request: Request) -> Response:
        identity = self._identity(request)
        if identity is None:
            return JSONResponse({"message": "Bad credentials"}, 401)
        return JSONResponse(
            [
                {
                    "state": "active",
                    "role": role,
                    "organization": {"login": login, "id": org_id},
                    "user": {"login": identity.login, "id": identity.host_id},
                }
                for login, org_id, role in identity.orgs
            ]
        )
