"""What the tests of the Dagster UI in a real browser share: Debian's Chromium through Playwright
(tests/chromium.py), pages with the UI's time allowance, screenshots, and the lineage pages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.chromium import chromium_browser
from tests.service.conftest import SCREENSHOTS, DagsterService

#: Large enough that Dagster draws a whole group at full detail (below some zoom it draws
#: name-only boxes).
GRAPH_VIEWPORT = {"width": 3840, "height": 2160}
#: The live data of the asset nodes takes its time on a busy 2-core machine.
UI_TIMEOUT_MS = 60_000
#: The per-file stages and the graph-wide ones are two groups, each with its lineage page.
PER_FILE_LINEAGE = "/locations/nara_kg/asset-groups/per_file/lineage"
GRAPH_LINEAGE = "/locations/nara_kg/asset-groups/graph/lineage"
#: The asset nodes of the lineage graph (CSS-module class names keep this prefix).
ASSET_NODE = "[class*='AssetNode_assetNodeBox']"


@contextmanager
def ui_browser() -> Iterator[Any]:
    """Chromium, with Playwright's expectations waiting as long as the UI may take."""
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT_MS)
    with chromium_browser() as browser:
        yield browser


def new_page(browser: Any, viewport: dict[str, int]) -> Any:
    """A page in a context of its own (closed with the browser, or by the caller)."""
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(UI_TIMEOUT_MS)
    return context.new_page()


def screenshot(page: Any, name: str, *, full_page: bool = False) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def open_page(page: Any, service: DagsterService, path: str) -> None:
    """Go to a UI path; the community/newsletter dialog is dismissed if it shows (the
    instance's `nux` is off, but just in case)."""
    page.goto(f"{service.url}{path}", wait_until="domcontentloaded")
    skip = page.get_by_role("button", name="Skip")
    if skip.count() and skip.first.is_visible():
        skip.first.click()
