"""The dashboard's frame: served at /, offline (Swagger UI included), a CSP without inline
scripts, and the browser session: sign in with a token or through the code host, CSRF on every
state-changing call, sign out."""

from __future__ import annotations

import secrets

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import admin_token
from tests.e2e.dashboard.browser import Watch, assert_accessible, shoot, sign_in
from tests.e2e.harness import RunningSystem
from tests.standins import accounts as standins_module
from tests.standins.accounts import Identity

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def token(system: RunningSystem) -> str:
    return admin_token(system, "dash-session", org="dash-session-org")


def test_pages_are_served_with_a_csp_without_inline_scripts(http: httpx.Client) -> None:
    for path in ("/", "/repositories", "/account?checkout=success", "/v1/docs"):
        reply = http.get(path)
        assert reply.status_code == 200, (path, reply.text[:200])
        assert reply.headers["content-type"].startswith("text/html")
        csp = dict(part.strip().split(" ", 1) for part in reply.headers["content-security-policy"].split(";"))
        assert csp["script-src"] == "'self'"
        assert csp["frame-ancestors"] == "'none'"
        assert "<script>" not in reply.text
        assert "cdn." not in reply.text
    assert "content-security-policy" not in http.get("/v1/openapi.json").headers  # the API is not a page


def test_swagger_ui_loads_offline(page: Page, system: RunningSystem, watch: Watch) -> None:
    page.goto(f"{system.url}/v1/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Code Review Service")
    expect(page.locator(".opblock-summary-path").first).to_be_visible()
    shoot(page, "api-docs", full_page=False)
    # The page fixture asserts nothing came from another origin and the CSP blocked nothing.


def test_sign_in_with_a_token_then_sign_out(page: Page, system: RunningSystem, token: str) -> None:
    page.goto(system.url)
    expect(page).to_have_url(f"{system.url}/signin")
    assert_accessible(page)
    shoot(page, "sign-in")
    sign_in(page, system.url, token)
    expect(page.get_by_text("Signed in as dash-session")).to_be_visible()
    [cookie] = [c for c in page.context.cookies() if c["name"] == "cr_session"]
    # HttpOnly and SameSite; Secure only off loopback (tests/gateway pins the __Host- form).
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Lax"
    assert cookie["value"] == token
    assert page.evaluate("() => document.cookie") == ""  # scripts cannot read it

    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(f"{system.url}/signin")
    assert [c for c in page.context.cookies() if c["name"] == "cr_session"] == []
    # A personal access token outlives the browser session (it is revoked on the Account page).
    assert httpx.get(f"{system.url}/v1/auth/validate", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def test_a_wrong_token_shows_the_error_and_its_code(page: Page, system: RunningSystem) -> None:
    page.goto(f"{system.url}/signin")
    page.get_by_label("Personal access token").fill("crp_" + secrets.token_hex(16))
    page.get_by_role("button", name="Sign in", exact=True).click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("invalid_token")
    expect(alert).to_contain_text("HTTP 401")
    assert_accessible(page)


def test_state_changing_calls_need_the_csrf_token(page: Page, system: RunningSystem, token: str) -> None:
    sign_in(page, system.url, token)
    call = """async ([headers]) => {
        const json = {'content-type': 'application/json'};
        const r = await fetch('/ui/api/account/tokens', {method: 'POST', headers: {...json, ...headers},
                                                          body: JSON.stringify({name: 'csrf-probe'})});
        return [r.status, await r.json()];
    }"""
    status, body = page.evaluate(call, [{}])
    assert status == 403
    assert body["code"] == "forbidden"
    status, body = page.evaluate(call, [{"x-csrf-token": "0" * 64}])
    assert status == 403
    assert body["code"] == "forbidden"
    csrf = page.evaluate("async () => (await (await fetch('/ui/session')).json()).csrf")
    status, body = page.evaluate(call, [{"x-csrf-token": csrf}])
    assert status == 201, body
    assert body["token"]["name"] == "csrf-probe"
    # Reads need no CSRF token, and reach /v1 with the session's bearer token.
    status = page.evaluate("async () => (await fetch('/ui/api/account/tokens')).status")
    assert status == 200


def test_sign_in_through_the_code_host(page: Page, system: RunningSystem, watch: Watch) -> None:
    standins = standins_module.start()
    watch.allowed.add(standins.url.rstrip("/"))
    login = f"octo-{secrets.token_hex(3)}"
    standins.host.login_as(Identity(login=login, host_id=secrets.randbelow(10**9) + 10**6))
    page.goto(f"{system.url}/signin")
    page.get_by_role("link", name="Sign in with GitHub").click()
    expect(page).to_have_url(f"{system.url}/repositories")
    expect(page.get_by_text(f"Signed in as {login}")).to_be_visible()
    [cookie] = [c for c in page.context.cookies() if c["name"] == "cr_session"]
    assert cookie["httpOnly"]
    assert cookie["value"].startswith("crs_")
    assert [c for c in page.context.cookies() if c["name"] == "cr_oauth_state"] == []

    # Signing out ends a code-host session for good.
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(f"{system.url}/signin")
    bearer = {"Authorization": f"Bearer {cookie['value']}"}
    assert httpx.get(f"{system.url}/v1/auth/validate", headers=bearer).status_code == 401


def test_a_forged_oauth_callback_is_refused(page: Page, system: RunningSystem) -> None:
    page.goto(f"{system.url}/ui/oauth/callback?code=abc&state=forged")
    expect(page).to_have_url(
        f"{system.url}/signin?code=oauth_failed&error=sign-in+state+missing+or+mismatched%3A+start+again"
    )
    expect(page.get_by_role("alert")).to_contain_text("oauth_failed")
