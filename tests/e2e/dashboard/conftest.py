from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from tests.e2e.dashboard.browser import CHROMIUM, FLAGS, LAPTOP, Watch
from tests.e2e.harness import RunningSystem


# Per module: no Playwright event loop stays open under the async tests collected after these.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport=LAPTOP)
    ctx.set_default_timeout(30_000)
    yield ctx
    ctx.close()


@pytest.fixture
def watch(system: RunningSystem) -> Watch:
    return Watch(origin=system.url)


@pytest.fixture
def page(context: BrowserContext, watch: Watch) -> Iterator[Page]:
    new = context.new_page()
    watch.attach(new)
    yield new
    # Every page of every test: nothing from another origin, nothing the CSP had to block.
    assert watch.foreign == [], watch.foreign
    assert watch.csp == [], watch.csp
