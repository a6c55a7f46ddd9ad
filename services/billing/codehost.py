"""The code host's OAuth web flow and user endpoints (GitHub's API shape), reached through
configurable base URLs so GitHub Enterprise and the tests' stand-in work the same way."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx

from services.kit.errors import ServiceError

log = logging.getLogger(__name__)

# Scopes that include another (GitHub's hierarchy), so a broader grant satisfies a narrower need.
IMPLIED_BY = {
    "read:org": {"write:org", "admin:org"},
    "write:org": {"admin:org"},
    "read:user": {"user"},
    "user:email": {"user"},
}


@dataclass(frozen=True)
class HostOrg:
    host_id: int
    login: str
    role: str  # the host's role: "admin" | "member"


@dataclass(frozen=True)
class HostUser:
    host_id: int
    login: str
    email: str
    orgs: list[HostOrg] = field(default_factory=list)


def missing_scopes(granted: str, required: str) -> list[str]:
    have = {s.strip() for s in granted.replace(" ", ",").split(",") if s.strip()}
    need = [s for s in required.replace(",", " ").split() if s]
    return [s for s in need if s not in have and not (IMPLIED_BY.get(s, set()) & have)]


class CodeHost:
    def __init__(
        self,
        oauth_base_url: str,
        api_base_url: str,
        client_id: str,
        client_secret: str,
        *,
        scopes: str = "",
        required_scopes: str = "",
        timeout: float = 10.0,
    ) -> None:
        self.oauth_base_url = oauth_base_url.rstrip("/")
        self.api_base_url = api_base_url.rstrip("/")
        self.client_id = client_id
        self.client_secret = client_secret
        self.scopes = scopes
        self.required_scopes = required_scopes
        self.timeout = timeout

    @property
    def configured(self) -> bool:
        return bool(self.client_id and self.client_secret)

    def authorize_url(self, state: str, redirect_uri: str) -> str:
        query = {"client_id": self.client_id, "scope": self.scopes, "state": state, "allow_signup": "false"}
        if redirect_uri:
            query["redirect_uri"] = redirect_uri
        return f"{self.oauth_base_url}/login/oauth/authorize?{urlencode(query)}"

    async def exchange(self, code: str, redirect_uri: str) -> str:
        """The host's access token for an authorization code (oauth_failed when refused)."""
        form = {"client_id": self.client_id, "client_secret": self.client_secret, "code": code}
        if redirect_uri:
            form["redirect_uri"] = redirect_uri
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            try:
                reply = await client.post(
                    f"{self.oauth_base_url}/login/oauth/access_token", data=form, headers={"Accept": "application/json"}
                )
            except httpx.HTTPError as exc:
                raise ServiceError("upstream_error", f"code host unreachable: {exc}") from None
        body = _json(reply)
        body = body if isinstance(body, dict) else {}
        # GitHub answers 200 with an "error" member when it refuses the code.
        if reply.status_code >= 400 or body.get("error") or not body.get("access_token"):
            reason = str(body.get("error") or f"http_{reply.status_code}")
            raise ServiceError("oauth_failed", "the code host refused the authorization code", {"reason": reason})
        missing = missing_scopes(str(body.get("scope", "")), self.required_scopes)
        if missing:
            raise ServiceError(
                "oauth_failed", "the grant lacks a required scope", {"reason": "missing_scope", "missing": missing}
            )
        return str(body["access_token"])

    async def user(self, access_token: str) -> HostUser:
        headers = {
            "Authorization": f"Bearer {access_token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        }
        async with httpx.AsyncClient(base_url=self.api_base_url, headers=headers, timeout=self.timeout) as client:
            me = await self._get(client, "/user")
            memberships = await self._get(client, "/user/memberships/orgs", {"state": "active", "per_page": 100})
        if not isinstance(me, dict) or not me.get("id") or not me.get("login"):
            raise ServiceError("oauth_failed", "the code host returned no user", {"reason": "no_user"})
        orgs = [
            HostOrg(
                host_id=int(m["organization"]["id"]),
                login=str(m["organization"]["login"]),
                role=str(m.get("role", "member")),
            )
            for m in (memberships if isinstance(memberships, list) else [])
            if isinstance(m, dict) and isinstance(m.get("organization"), dict) and m.get("state", "active") == "active"
        ]
        return HostUser(host_id=int(me["id"]), login=str(me["login"]), email=str(me.get("email") or ""), orgs=orgs)

    async def _get(self, client: httpx.AsyncClient, path: str, params: dict[str, Any] | None = None) -> Any:
        try:
            reply = await client.get(path, params=params)
        except httpx.HTTPError as exc:
            raise ServiceError("upstream_error", f"code host unreachable: {exc}") from None
        if reply.status_code in (401, 403):
            raise ServiceError(
                "oauth_failed", "the code host refused the access token", {"reason": f"http_{reply.status_code}"}
            )
        if reply.status_code >= 400:
            raise ServiceError("upstream_error", f"code host answered {reply.status_code} for {path}")
        return _json(reply)


def _json(reply: httpx.Response) -> Any:
    try:
        return reply.json()
    except ValueError:
        return {}
