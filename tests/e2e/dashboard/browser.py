"""Driving the dashboard in Debian's Chromium through Playwright (nothing downloads a browser):
sign-in helpers, the axe-core check every page gets, screenshots, and the offline guard."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import ConsoleMessage, Page, Request
from playwright.sync_api import TimeoutError as PlaywrightTimeout

CHROMIUM = os.environ.get("CR_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
AXE = (Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js").read_text()
LAPTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
SCREENSHOTS = Path(os.environ.get("CR_SCREENSHOT_DIR", "/tmp/cr-dashboard-screenshots"))


@dataclass
class Watch:
    """What a page did that it must not: load from another origin, break its own CSP."""

    origin: str
    allowed: set[str] = field(default_factory=set)  # other origins a test sends the browser to
    foreign: list[str] = field(default_factory=list)
    csp: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        page.on("request", self._request)
        page.on("console", self._console)

    def _request(self, request: Request) -> None:
        url = urlsplit(request.url)
        if url.scheme in ("http", "https") and f"{url.scheme}://{url.netloc}" not in {self.origin, *self.allowed}:
            self.foreign.append(request.url)

    def _console(self, message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            self.csp.append(message.text)


def axe_violations(page: Page) -> list[dict]:
    """axe-core over the page as it is now: the serious and critical violations. Evaluated
    through the DevTools protocol, which the page's CSP does not govern."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE)
    result = page.evaluate("async () => await window.axe.run(document, {resultTypes: ['violations']})")
    return [
        {"id": v["id"], "impact": v["impact"], "help": v["help"], "nodes": [n["target"] for n in v["nodes"][:5]]}
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def assert_accessible(page: Page) -> None:
    violations = axe_violations(page)
    assert violations == [], violations


def shoot(page: Page, name: str, full_page: bool = True) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def sign_in(page: Page, base: str, token: str) -> None:
    page.goto(f"{base}/signin")
    page.get_by_label("Personal access token").fill(token)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.get_by_role("heading", name="Repositories").wait_for()


def fits_width(page: Page) -> bool:
    """No sideways scrolling of the page itself (wide tables scroll inside their own box), once
    charts and graphs have followed a viewport change (they resize on the next frames)."""
    try:
        page.wait_for_function("() => document.documentElement.scrollWidth <= window.innerWidth + 1", timeout=5000)
    except PlaywrightTimeout:
        return False
    return True
