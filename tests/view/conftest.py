"""Fixtures of the map page's tests: Debian's Chromium (one per module: Playwright's sync API allows
one at a time, and tests/serve starts its own), and pages opened in it with every request but the
page's own refused."""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (`make test` does, "
                    "or `apt-get install -y chromium`)", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


class Opened:
    """A page opened offline, with what it asked for and what went wrong in it."""

    def __init__(self, browser, path: Path, *, viewport=(1200, 800), ready: str = "window.kgReady === true") -> None:
        self.url = path.as_uri()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]},
                                           service_workers="block", accept_downloads=True)
        self.page = self.context.new_page()
        self.page.route("**/*", lambda r: r.continue_() if r.request.url == self.url else r.abort())
        self.page.on("request", lambda req: self.requests.append(req.url))
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("console", lambda msg: msg.type == "error" and self.errors.append(msg.text))
        self.page.goto(self.url)
        self.page.wait_for_function(ready, timeout=30_000)

    def state(self) -> dict:
        return self.page.evaluate("kgMap.state()")

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def open_page(browser, tmp_path):
    """Open an HTML text (a page of kg) offline; closes it after the test."""
    opened: list[Opened] = []

    def open_(html: str, name: str = "graph.html", **kw) -> Opened:
        path = tmp_path / name
        path.write_text(html, encoding="utf-8")
        opened.append(Opened(browser, path, **kw))
        return opened[-1]

    yield open_
    for o in opened:
        o.close()
