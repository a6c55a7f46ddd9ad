"""A repository's pages in the browser: its overview, findings chart and structure picture
(domains as a graph, a domain's segments on choosing it), a file's findings with their evidence
and a dismissal that takes them away; the Team page up to the seat bound; the Assistant."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.analyzer.service_corpus import PLANTED, PLANTED_PATH, git, make_git_repo
from tests.e2e.conftest import admin_token
from tests.e2e.dashboard.browser import PHONE, assert_accessible, fits_width, shoot, sign_in
from tests.e2e.harness import RunningSystem
from tests.e2e.test_review import wait_learned

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def token(system: RunningSystem) -> str:
    return admin_token(system, "dash-review", org="dash-review-org")


@pytest.fixture(scope="module")
def repo_id(system: RunningSystem, token: str) -> str:
    """The service's own review corpus with its planted file committed, indexed and learned."""
    path = system.work / "repos" / "dash-shop"
    make_git_repo(path)
    (path / PLANTED_PATH).write_text(PLANTED)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "audit helpers")
    head = git(path, "rev-parse", "HEAD")
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=system.url, headers=auth, timeout=30) as http:
        repo = http.post("/v1/repositories", json={"path": str(path), "name": "dash-shop"})
        assert repo.status_code == 201, repo.text
        started = http.post(f"/v1/repositories/{repo.json()['id']}/index_repo")
        assert started.status_code == 202, started.text
        wait_learned(http, repo.json()["id"], head, auth, seconds=240)
        # One analysis, so the findings chart has a day to draw whichever test runs first.
        analysed = http.post(f"/v1/repositories/{repo.json()['id']}/analyze", json={"path": PLANTED_PATH})
        assert analysed.status_code == 200, analysed.text
    return str(repo.json()["id"])


def test_a_files_findings_with_evidence_and_a_dismissal(
    page: Page, system: RunningSystem, token: str, repo_id: str
) -> None:
    sign_in(page, system.url, token)
    page.goto(f"{system.url}/repositories/{repo_id}/file?path={PLANTED_PATH}")
    prints = page.locator("article.finding[data-rule='idioms.print']")
    expect(prints).to_have_count(1, timeout=60_000)
    # Inline: under the line it flags, in the file's own content.
    expect(page.locator("li#L39 article.finding[data-rule='idioms.print']")).to_have_count(1)
    expect(page.locator("li#L1")).to_have_text(PLANTED.splitlines()[0] or " ")
    naming = page.locator("article.finding[data-rule='naming.case.function']")
    expect(naming).to_contain_text("Suggestion")
    assert_accessible(page)
    shoot(page, "file-findings")
    prints.get_by_role("button", name="Dismiss").click()
    expect(page.get_by_role("status").first).to_contain_text("Recorded dismissed for idioms.print")
    expect(prints).to_have_count(0)  # analysed again: the dismissed finding is gone
    expect(naming).to_have_count(1)


def test_the_overview_chart_and_structure_picture(page: Page, system: RunningSystem, token: str, repo_id: str) -> None:
    sign_in(page, system.url, token)
    page.goto(f"{system.url}/repositories/{repo_id}")
    expect(page.get_by_role("heading", name="Strongest conventions")).to_be_visible(timeout=60_000)
    expect(page.locator("section[aria-labelledby='over-h'] table").first).to_contain_text("python")
    graph = page.locator(".graph")
    expect(graph).to_have_attribute("data-nodes", __import__("re").compile(r"^[1-9]"))
    expect(graph.locator("canvas").first).to_be_attached()
    nodes = int(graph.get_attribute("data-nodes") or 0)
    assert nodes >= 2
    domain = page.locator("button[data-domain]").first
    name = domain.get_attribute("data-domain")
    domain.click()
    expect(page.get_by_role("heading", name=f"Segments of {name or '(root)'}")).to_be_visible()
    expect(page.locator("section[aria-labelledby='chart-h'] canvas")).to_be_attached()
    assert_accessible(page)
    shoot(page, "repository")
    page.set_viewport_size(PHONE)
    assert fits_width(page)
    shoot(page, "phone-repository", full_page=False)


def test_team_invites_until_the_seat_bound_shows_its_error(page: Page, system: RunningSystem) -> None:
    token = admin_token(system, "dash-lead", org="dash-team")
    sign_in(page, system.url, token)
    page.get_by_role("link", name="Team").click()
    page.get_by_label("Seats").fill("2")
    page.get_by_role("button", name="Change seats").click()
    expect(page.get_by_text("of 2 seats used")).to_be_visible()
    page.get_by_label("Invite (code-host login)").fill("dash-second")
    page.get_by_role("button", name="Invite").click()
    expect(page.locator("tr[data-member='dash-second']")).to_contain_text("invited")
    page.get_by_label("Invite (code-host login)").fill("dash-third")
    page.get_by_role("button", name="Invite").click()
    expect(page.get_by_role("alert")).to_contain_text("seat_limit_reached")
    assert_accessible(page)
    shoot(page, "team")


def test_the_assistant_answers_through_the_ai_proxy(page: Page, system: RunningSystem, token: str) -> None:
    sign_in(page, system.url, token)
    page.get_by_role("link", name="Assistant").click()
    page.get_by_label("Message").fill("What does idioms.print flag?")
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("log")).to_contain_text("Assistant:")
    assert_accessible(page)
