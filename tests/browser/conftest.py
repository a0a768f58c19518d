"""The chat page in a real headless Chromium (Debian's /usr/bin/chromium through Playwright;
Playwright's own browsers are never installed), against the API served by uvicorn over the
demo graph of tests/api/graph_fixture.py. Screenshots go to var/test-artifacts/screenshots/.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nara_kg.api import Services, create_app
from nara_kg.embedding.factory import LockedEmbedder
from nara_kg.generation.llm import ExtractiveLLM
from nara_kg.settings import PROJECT_ROOT
from tests.api.graph_fixture import DemoGraph, api_graph
from tests.chromium import SCREENSHOTS, chromium_browser

__all__ = ["api_graph"]

BUILD = PROJECT_ROOT / "web" / "build.sh"


@pytest.fixture(scope="session")
def built_page() -> Path:
    """The page as `make web` builds it; built here when missing or out of date."""
    if subprocess.run([str(BUILD), "--check"], capture_output=True).returncode != 0:
        built = subprocess.run([str(BUILD)], capture_output=True, text=True)
        if built.returncode != 0:
            pytest.fail(f"web/build.sh failed:\n{built.stdout}\n{built.stderr}", pytrace=False)
    return PROJECT_ROOT / "nara_kg" / "api" / "static"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def base_url(
    built_page: Path, neo4j_driver: Any, neo4j_settings: Any, api_graph: DemoGraph
) -> Iterator[str]:
    import uvicorn

    services = Services(
        get_driver=lambda: neo4j_driver,
        database=neo4j_settings.database,
        embedder=LockedEmbedder(),
        llm=ExtractiveLLM(),
    )
    services.embedder.encode(["warm-up"])  # the first question should not wait for the model
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(services, rate_per_minute=0),
            host="127.0.0.1",
            port=port,
            log_level="warning",
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the API server did not start", pytrace=False)
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium_browser() as launched:
        yield launched


class PageProblems:
    """Console errors, uncaught exceptions and requests that left the server: any of them
    fails the test (a CSP violation is a console error)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.errors: list[str] = []
        self.foreign_requests: list[str] = []

    def console(self, message: Any) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.base_url) or url.startswith("data:"):
            route.continue_()
            return
        self.foreign_requests.append(url)
        route.abort()


@pytest.fixture
def page(browser: Any, base_url: str, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 950})
    problems = PageProblems(base_url)
    # The page must work offline: anything not served by the API is refused and reported.
    context.route("**/*", problems.route)
    tab = context.new_page()
    tab.on("console", problems.console)
    tab.on("pageerror", lambda error: problems.errors.append(f"uncaught: {error}"))
    tab.set_default_timeout(60_000)
    tab.goto(base_url + "/")
    tab.locator("#status").get_by_text("records").wait_for()
    tab.problems = problems
    try:
        yield tab
    finally:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"), full_page=True)
        context.close()
    assert problems.foreign_requests == [], "the page reached outside the server"
    assert problems.errors == [], "the page logged errors"
