"""The dashboard's pages driven as a person would: add and index a local repository watching
its progress, delete it; create a token (its secret shown once) and revoke it; the same pages
at a phone's width. axe-core runs on every page."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import admin_token
from tests.e2e.dashboard.browser import PHONE, assert_accessible, fits_width, shoot, sign_in
from tests.e2e.harness import RunningSystem
from tests.indexer.support import sample_repo

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def token(system: RunningSystem) -> str:
    return admin_token(system, "dash-pages", org="dash-pages-org")


@pytest.fixture
def signed_in(page: Page, system: RunningSystem, token: str) -> Page:
    sign_in(page, system.url, token)
    return page


def local_repo(system: RunningSystem, name: str) -> Path:
    path = system.work / "repos" / name
    sample_repo(path)
    return path


# The state cell's texts as the page drew them, recorded in the page itself (no polling race).
RECORD_STATES = """(repo) => {
    window.__states = [];
    const observer = new MutationObserver(() => {
        const row = document.querySelector(`tr[data-repo="${repo}"]`);
        if (row) window.__states.push(row.cells[2].textContent);
    });
    observer.observe(document.querySelector('main'), {subtree: true, childList: true, characterData: true});
}"""


def test_add_index_watch_progress_and_delete_a_repository(signed_in: Page, system: RunningSystem, token: str) -> None:
    page = signed_in
    path = local_repo(system, "dash-sample")
    assert_accessible(page)
    page.get_by_label("Path, URL or owner/repo").fill(str(path))
    page.get_by_label("Name (optional)").fill("dash-sample")
    page.get_by_role("button", name="Add repository").click()
    row = page.locator("tr", has_text="dash-sample")
    expect(row).to_contain_text("never indexed")
    repo_id = row.get_attribute("data-repo")
    assert repo_id

    page.evaluate(RECORD_STATES, repo_id)
    row.get_by_role("button", name="Index dash-sample").click()
    expect(row.locator(".badge")).to_have_text("ready", timeout=120_000)
    states = page.evaluate("() => window.__states")
    # The progress was drawn live (queued or indexing, files done of total) before ready.
    assert any(("queued" in s or "indexing" in s or "files" in s) and "ready" not in s for s in states), states
    head = httpx.get(
        f"{system.url}/v1/repositories/{repo_id}/index/status", headers={"Authorization": f"Bearer {token}"}
    ).json()["head_sha"]
    expect(row).to_contain_text(head[:10])
    assert_accessible(page)
    shoot(page, "repositories")

    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Delete dash-sample").click()
    expect(row).to_have_count(0)
    reply = httpx.get(f"{system.url}/v1/repositories/{repo_id}", headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 404


def test_an_api_error_is_shown_with_its_code(signed_in: Page) -> None:
    signed_in.get_by_label("Path, URL or owner/repo").fill("/definitely/not/allowed")
    signed_in.get_by_role("button", name="Add repository").click()
    alert = signed_in.get_by_role("alert")
    expect(alert).to_contain_text("Error:")
    expect(alert.locator("code")).not_to_have_text("")
    assert_accessible(signed_in)


def test_create_a_token_see_its_secret_once_and_revoke_it(signed_in: Page, system: RunningSystem) -> None:
    page = signed_in
    page.get_by_role("link", name="Account").click()
    expect(page.get_by_role("heading", name="Personal access tokens")).to_be_visible()
    assert_accessible(page)
    # Prices arrive in the currency's smallest unit and are shown as money (2000 USD cents).
    expect(page.get_by_role("main")).to_contain_text("$20.00 / month")
    page.get_by_label("Name", exact=True).fill("laptop-cli")
    page.get_by_role("button", name="Create token").click()
    secret = page.locator("#new-secret").inner_text()
    assert secret.startswith("crp_")
    expect(page.get_by_role("button", name="Copy")).to_be_visible()
    bearer = {"Authorization": f"Bearer {secret}"}
    assert httpx.get(f"{system.url}/v1/auth/validate", headers=bearer).status_code == 200
    shoot(page, "account")
    row = page.locator("tr[data-token='laptop-cli']")
    expect(row).to_be_visible()
    assert secret not in row.inner_text()  # the list shows the prefix only

    page.reload()  # shown once: gone after a reload
    expect(page.locator("#new-secret")).to_have_count(0)
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("tr[data-token='laptop-cli']").get_by_role("button", name="Revoke laptop-cli").click()
    expect(page.locator("tr[data-token='laptop-cli']")).to_have_count(0)
    assert httpx.get(f"{system.url}/v1/auth/validate", headers=bearer).status_code == 401


def test_pages_at_a_phone_width(signed_in: Page, system: RunningSystem) -> None:
    page = signed_in
    page.set_viewport_size(PHONE)
    for path, heading in (("/repositories", "Repositories"), ("/account", "Account")):
        page.goto(f"{system.url}{path}")
        expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
        page.wait_for_load_state("networkidle")
        assert fits_width(page), path
        assert_accessible(page)
        shoot(page, f"phone-{path.strip('/')}")
