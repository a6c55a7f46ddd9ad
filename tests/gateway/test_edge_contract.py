"""The contract at the edge, each a finding of the faults review (issue #10) that failed before:
headers that 401/405/429/503 promise, streamed bodies over the bound, payment events that are
signed but not events, and one validator for cursors, limits and paths on every route."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import httpx
import pytest

from services.gateway.app import create_app
from services.gateway.settings import GatewaySettings
from services.kit.errors import CODE_TABLE
from tests.billing.conftest import Billing, settings_for, start_billing
from tests.conftest import DatabaseFactory
from tests.standins.accounts import StandIns
from tests.standins.fixtures import sign

SECRET = "whsec_edge"


async def open_gateway(stack: AsyncExitStack, client: tuple[str, int] = ("127.0.0.1", 1000), **fields: object):
    settings = GatewaySettings(payment_webhook_secret=SECRET, **fields)  # type: ignore[arg-type]
    app = create_app(settings)
    await stack.enter_async_context(app.router.lifespan_context(app))
    transport = httpx.ASGITransport(app=app, client=client)
    return await stack.enter_async_context(httpx.AsyncClient(transport=transport, base_url="http://gateway"))


@pytest.fixture
async def alone() -> AsyncIterator[httpx.AsyncClient]:
    """No service behind it: its gRPC peers are on a port nobody listens on."""
    async with AsyncExitStack() as stack:
        dead = "127.0.0.1:9"
        yield await open_gateway(stack, billing_addr=dead, indexer_addr=dead, analyzer_addr=dead, hostapp_addr=dead)


@pytest.fixture
async def edge(billing: Billing) -> AsyncIterator[httpx.AsyncClient]:
    """Only billing behind it (tokens are real): whatever else answers is the edge itself."""
    async with AsyncExitStack() as stack:
        dead = "127.0.0.1:9"
        yield await open_gateway(
            stack, billing_addr=billing.address, indexer_addr=dead, analyzer_addr=dead, hostapp_addr=dead
        )


@pytest.fixture
async def auth(billing: Billing) -> dict[str, str]:
    token, _ = await billing.user()
    return {"Authorization": f"Bearer {token}"}


def assert_error(reply: httpx.Response, status: int, code: str) -> dict:
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert set(body) == {"error", "code", "details"}
    assert body["code"] == code, body
    return body


# --- 401, 405, 503, 413 ------------------------------------------------------------------


async def test_401_says_how_to_authenticate(alone: httpx.AsyncClient, edge: httpx.AsyncClient) -> None:
    missing = await alone.get("/v1/repositories")
    assert_error(missing, 401, "not_authenticated")
    assert missing.headers["WWW-Authenticate"] == "Bearer"
    invalid = await edge.get("/v1/repositories", headers={"Authorization": "Bearer crp_not-a-real-token"})
    assert_error(invalid, 401, "invalid_token")
    assert invalid.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'


async def test_405_names_every_allowed_method(alone: httpx.AsyncClient) -> None:
    reply = await alone.put("/v1/repositories")
    assert_error(reply, 405, "method_not_allowed")
    assert reply.headers["Allow"] == "GET, POST"
    assert reply.json()["details"] == {"allowed": ["GET", "POST"]}
    assert (await alone.get("/webhooks/payment")).headers["Allow"] == "POST"


async def test_an_unreachable_peer_is_503_with_retry_after(alone: httpx.AsyncClient) -> None:
    reply = await alone.get("/v1/repositories", headers={"Authorization": "Bearer crp_x"})
    assert_error(reply, 503, "service_unavailable")
    assert reply.headers["Retry-After"] == "5"


async def test_a_services_own_database_outage_is_503_not_500(databases: DatabaseFactory, standins: StandIns) -> None:
    # Before: billing's OperationalError left as INTERNAL, so every /v1 call was 500 internal_error.
    unreachable_db = "postgresql+psycopg://postgres@127.0.0.1:9/none"
    down, server = await start_billing(unreachable_db, settings_for(unreachable_db, standins))
    try:
        async with AsyncExitStack() as stack:
            gateway = await open_gateway(stack, billing_addr=down.address)
            reply = await gateway.get("/v1/auth/validate", headers={"Authorization": "Bearer crp_x" + "a" * 40})
            assert_error(reply, 503, "service_unavailable")
            assert int(reply.headers["Retry-After"]) >= 1
    finally:
        await down._channel.close()  # type: ignore[attr-defined]
        await server.server.stop(0)
        await down.db.dispose()


async def test_a_21_mib_chunked_body_is_413_on_a_json_route(alone: httpx.AsyncClient) -> None:
    # Before: FastAPI turned the failed body read into its own 400 "error parsing the body".
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(21):
            yield b" " * (1024 * 1024)

    reply = await alone.post("/v1/repositories", content=chunks(), headers={"Content-Type": "application/json"})
    body = assert_error(reply, 413, "payload_too_large")
    assert body["details"] == {"max_bytes": 20 * 1024 * 1024}


# --- payment events ------------------------------------------------------------------------


@pytest.mark.parametrize("payload", [b"[]", b'"x"', b"null", b"{}", b'{"id": "evt_1"}', b'{"id": 1, "type": "x"}'])
async def test_signed_json_that_is_not_an_event_is_400(alone: httpx.AsyncClient, payload: bytes) -> None:
    # Before: 500 (and the provider retries a 5xx for three days).
    reply = await alone.post("/webhooks/payment", content=payload, headers={"Payment-Signature": sign(payload, SECRET)})
    assert_error(reply, 400, "bad_request")


async def test_bad_signature_and_malformed_json_stay_invalid_signature(alone: httpx.AsyncClient) -> None:
    body = b'{"id": "evt_1", "type": "invoice.payment_failed"}'
    forged = await alone.post("/webhooks/payment", content=body, headers={"Payment-Signature": sign(body, "other")})
    assert_error(forged, 400, "invalid_signature")
    garbled = b"{not json"
    reply = await alone.post("/webhooks/payment", content=garbled, headers={"Payment-Signature": sign(garbled, SECRET)})
    assert_error(reply, 400, "invalid_signature")
    latin = b'{"id": "\xff"}'
    reply = await alone.post("/webhooks/payment", content=latin, headers={"Payment-Signature": sign(latin, SECRET)})
    assert_error(reply, 400, "invalid_signature")


# --- one validator for cursors, limits and paths ------------------------------------------

PAGED = [
    "/v1/repositories",
    "/v1/repositories/r1/segments",
    "/v1/repositories/r1/network",
    "/v1/repositories/r1/history",
]
# "MTIz" and "0000" were base64 (of "123" and of bytes that are not UTF-8) the document admitted.
BAD_CURSORS = ["%%%", "abc", "not base64!", "eA", "x" * 201, "MTIz", "0000", "o", "r1."]
REPOSITORY_KEY = "r1700000000000." + "0" * 32


@pytest.mark.parametrize("cursor", BAD_CURSORS)
async def test_a_malformed_cursor_is_422_on_every_paged_route(
    edge: httpx.AsyncClient, auth: dict[str, str], cursor: str
) -> None:
    # Before: the repository list answered 422, history/segments/network 500.
    for path in PAGED:
        body = assert_error(await edge.get(path, params={"cursor": cursor}, headers=auth), 422, "validation_failed")
        assert body["details"]["field"] == "cursor", path


async def test_another_listings_cursor_is_422(edge: httpx.AsyncClient, auth: dict[str, str]) -> None:
    # Each paged route's pattern names its own listing's cursors (services.kit.paging).
    for path, foreign in [("/v1/repositories", "o40")] + [(path, REPOSITORY_KEY) for path in PAGED[1:]]:
        body = assert_error(await edge.get(path, params={"cursor": foreign}, headers=auth), 422, "validation_failed")
        assert body["details"]["field"] == "cursor", path


@pytest.mark.parametrize("limit", ["0", "-1", "abc", "100000"])
async def test_a_bad_limit_is_422_on_every_paged_route(
    edge: httpx.AsyncClient, auth: dict[str, str], limit: str
) -> None:
    for path in [*PAGED, "/v1/audit-results"]:
        body = assert_error(await edge.get(path, params={"limit": limit}, headers=auth), 422, "validation_failed")
        assert body["details"]["field"] == "limit", path


BAD_PATHS = [
    "/etc/passwd",
    "/proc/self/environ",
    ".git/config",
    "src/../../etc/passwd",
    "a/../b.py",
    "C:/x",
    "a\\b",
    "",
]


@pytest.mark.parametrize("path", BAD_PATHS)
async def test_a_bad_path_is_422_on_every_route_that_takes_one(
    edge: httpx.AsyncClient, auth: dict[str, str], path: str
) -> None:
    # Before: review_context stripped the slash and answered 200 for /etc/passwd where analyze refused.
    repo = "/v1/repositories/r1"
    requests = [
        ("POST", f"{repo}/review_context", {"path": path}, "path"),
        ("POST", f"{repo}/analyze", {"path": path}, "path"),
        ("POST", f"{repo}/analyze_pr", {"files": [{"path": path, "patch": ""}]}, "files.0.path"),
        ("POST", f"{repo}/review_changeset", {"file_paths": [path]}, "file_paths.0"),
        ("POST", f"{repo}/report_findings", {"findings": [{"path": path, "message": "m"}]}, "findings.0.path"),
    ]
    for method, url, body, field in requests:
        reply = await edge.request(method, url, json=body, headers=auth)
        assert assert_error(reply, 422, "validation_failed")["details"]["field"] == field, url
    if path:  # an empty ?path= means "no filter"
        reply = await edge.get(f"{repo}/history", params={"path": path}, headers=auth)
        assert assert_error(reply, 422, "validation_failed")["details"]["field"] == "path"


async def test_numbers_past_the_contracts_int32_are_422_not_500(edge: httpx.AsyncClient, auth: dict[str, str]) -> None:
    # Before: schemathesis sent end_line 209230177046494 and the gateway failed to encode it (500).
    repo = "/v1/repositories/r1"
    big = 2**31
    requests = [
        (
            f"{repo}/report_findings",
            {"findings": [{"path": "a.py", "message": "m", "end_line": big}]},
            "findings.0.end_line",
        ),
        (
            f"{repo}/report_findings",
            {"findings": [{"path": "a.py", "message": "m", "start_line": big}]},
            "findings.0.start_line",
        ),
        (f"{repo}/analyze_pr", {"files": [{"path": "a.py", "patch": ""}], "pr_number": big}, "pr_number"),
    ]
    for url, body, field in requests:
        reply = await edge.post(url, json=body, headers=auth)
        assert assert_error(reply, 422, "validation_failed")["details"]["field"] == field, body


async def test_authentication_comes_before_input_checks(alone: httpx.AsyncClient) -> None:
    reply = await alone.post("/v1/repositories/r1/review_context", json={"path": "/etc/passwd"})
    assert_error(reply, 401, "not_authenticated")


# --- failed authentications per client address -------------------------------------------


async def test_failed_authentications_are_limited_per_client_address(billing: Billing) -> None:
    # Before: 150 invalid tokens from one address were 150 answers of 401.
    async with AsyncExitStack() as stack:
        attacker = await open_gateway(stack, ("203.0.113.9", 1), billing_addr=billing.address)
        neighbour = await open_gateway(stack, ("203.0.113.10", 1), billing_addr=billing.address)
        statuses = []
        for i in range(150):
            reply = await attacker.get("/v1/auth/validate", headers={"Authorization": f"Bearer crp_guess{i:04d}"})
            statuses.append(reply.status_code)
        limit = billing.deps.settings.auth_failure_limit_per_minute
        assert set(statuses) == {401, 429}
        assert statuses.count(401) <= limit  # a minute boundary in the middle allows one more window
        refused = await attacker.get("/v1/auth/validate", headers={"Authorization": "Bearer crp_again"})
        body = assert_error(refused, 429, "rate_limited")
        assert body["details"]["scope"] == "ip"
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        # Another address is not held, and a valid token is never refused for others' failures.
        assert (await neighbour.get("/v1/auth/validate", headers={"Authorization": "Bearer crp_x"})).status_code == 401
        token, _ = await billing.user()
        valid = await attacker.get("/v1/auth/validate", headers={"Authorization": f"Bearer {token}"})
        assert valid.status_code == 200, valid.text


async def test_allow_names_the_methods_of_the_matched_path_template(alone: httpx.AsyncClient) -> None:
    # host_index also matches /v1/repositories/{repo_id}; its Allow is its own path item's.
    assert (await alone.options("/v1/repositories/host_index")).headers["Allow"] == "POST"
    assert (await alone.patch("/v1/repositories/r1")).headers["Allow"] == "DELETE, GET"


async def test_a_body_that_is_not_json_still_gets_401_first(alone: httpx.AsyncClient, edge: httpx.AsyncClient) -> None:
    # FastAPI parses the body before dependencies: before, a stranger's garbled body was 400.
    json_type = {"Content-Type": "application/json"}
    reply = await alone.post("/v1/repositories", content=b"{not json", headers=json_type)
    assert_error(reply, 401, "not_authenticated")
    reply = await edge.post(
        "/v1/repositories", content=b"{not json", headers={**json_type, "Authorization": "Bearer crp_x"}
    )
    assert_error(reply, 401, "invalid_token")


async def test_a_body_that_is_not_json_is_400_for_an_authenticated_caller(
    edge: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    reply = await edge.post(
        "/v1/repositories", content=b"{not json", headers={**auth, "Content-Type": "application/json"}
    )
    # The code's status in the one error table is the status answered (validation_failed is 422).
    assert assert_error(reply, CODE_TABLE["bad_request"].http, "bad_request")["details"] == {"field": "body"}
    assert reply.status_code == 400
