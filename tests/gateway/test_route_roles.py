"""Every route has an authorization entry: a new route without one fails here (OWASP API1),
and every route that is not public refuses a request without a token.

"public" routes take no bearer token (sign-in start, webhooks verified by signature);
"token" routes need any valid token; the others say which role on which resource billing,
indexer or analyzer checks (docs/accounts.md, docs/indexing.md, docs/review.md).
"""

from __future__ import annotations

from services.gateway.app import create_app

ROUTE_ROLES: dict[tuple[str, str], str] = {
    ("GET", "/v1/repositories"): "token (lists only accessible repositories)",
    ("POST", "/v1/repositories"): "token; member of org_id when given",
    ("POST", "/v1/repositories/host_index"): "token; member of org_id when given",
    ("GET", "/v1/repositories/{repo_id}"): "repo:viewer",
    ("DELETE", "/v1/repositories/{repo_id}"): "repo:member",
    ("POST", "/v1/repositories/{repo_id}/index_repo"): "repo:member",
    ("GET", "/v1/repositories/{repo_id}/index/status"): "repo:viewer",
    ("GET", "/v1/repositories/{repo_id}/domains"): "repo:viewer",
    ("GET", "/v1/repositories/{repo_id}/segments"): "repo:viewer",
    ("GET", "/v1/repositories/{repo_id}/network"): "repo:viewer",
    ("GET", "/v1/repositories/{repo_id}/history"): "repo:viewer",
    ("GET", "/v1/repositories/{repo_id}/file"): "repo:viewer",
    ("POST", "/v1/repositories/{repo_id}/analyze"): "repo:member",
    ("POST", "/v1/repositories/{repo_id}/analyze_pr"): "repo:member",
    ("POST", "/v1/repositories/{repo_id}/review_changeset"): "repo:member",
    ("POST", "/v1/repositories/{repo_id}/review_context"): "repo:viewer",
    ("POST", "/v1/repositories/{repo_id}/report_findings"): "repo:member",
    ("GET", "/v1/repositories/{repo_id}/dashboard"): "repo:viewer",
    ("GET", "/v1/repositories/{repo_id}/global_context"): "repo:viewer",
    ("GET", "/v1/account/status"): "token; org:member when org_id is given",
    ("GET", "/v1/account/usage"): "token; org:member when org_id is given",
    ("GET", "/v1/account/plans"): "token",
    ("POST", "/v1/account/checkout"): "token; org:team-admin when org_id is given",
    ("POST", "/v1/account/billing-portal"): "token; org:team-admin when org_id is given",
    ("POST", "/v1/account/switch-plan"): "token; org:team-admin when org_id is given",
    ("POST", "/v1/account/cancel"): "token; org:team-admin when org_id is given",
    ("POST", "/v1/account/reactivate"): "token; org:team-admin when org_id is given",
    ("GET", "/v1/account/tokens"): "token (own tokens)",
    ("POST", "/v1/account/tokens"): "token (own tokens)",
    ("DELETE", "/v1/account/tokens/{token_id}"): "token (own tokens)",
    ("GET", "/v1/account/audit-preferences"): "token; org:member when org_id is given",
    ("PATCH", "/v1/account/audit-preferences"): "token; org:team-admin when org_id is given",
    ("GET", "/v1/account/audit-results"): "token (accessible repositories)",
    ("GET", "/v1/audit-results"): "token (accessible repositories)",
    ("GET", "/v1/teams/{org_id}/members"): "org:team-admin",
    ("POST", "/v1/teams/{org_id}/invite"): "org:team-admin",
    ("DELETE", "/v1/teams/{org_id}/members/{member_id}"): "org:team-admin",
    ("PATCH", "/v1/teams/{org_id}/members/{member_id}/role"): "org:team-admin",
    ("POST", "/v1/teams/{org_id}/seats"): "org:team-admin",
    ("GET", "/v1/invitations"): "token (own invitations)",
    ("POST", "/v1/invitations/{org_id}/accept"): "token (own invitation)",
    ("POST", "/v1/invitations/{org_id}/decline"): "token (own invitation)",
    ("GET", "/v1/auth/host/authorize"): "public",
    ("POST", "/v1/auth/host"): "public",
    ("GET", "/v1/auth/validate"): "token",
    ("DELETE", "/v1/auth/signout"): "token",
    ("POST", "/v1/ai/chat"): "token (internal)",
    ("POST", "/webhooks/code_host"): "public (X-Hub-Signature-256)",
    ("POST", "/webhooks/payment"): "public (Payment-Signature)",
}


def _routes() -> set[tuple[str, str]]:
    spec = create_app().openapi()
    return {(method.upper(), path) for path, ops in spec["paths"].items() for method in ops}


def test_every_route_has_an_authorization_entry() -> None:
    routes = _routes()
    missing = routes - set(ROUTE_ROLES)
    stale = set(ROUTE_ROLES) - routes
    assert not missing, f"routes without an authorization entry: {sorted(missing)}"
    assert not stale, f"entries for routes that no longer exist: {sorted(stale)}"


async def test_every_non_public_route_refuses_a_request_without_token() -> None:
    import httpx

    from services.gateway.clients import Clients
    from services.gateway.settings import GatewaySettings

    settings = GatewaySettings()
    app = create_app(settings)
    app.state.clients = Clients.connect(settings)  # never dialled: the token check comes first
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
        for (method, path), role in ROUTE_ROLES.items():
            if role.startswith("public"):
                continue
            url = path.format(repo_id="r1", org_id="o1", member_id="m1", token_id="t1")
            reply = await client.request(method, url, json={})
            assert reply.status_code == 401, (method, path, reply.text)
            assert reply.json()["code"] == "not_authenticated"
    await app.state.clients.close()
