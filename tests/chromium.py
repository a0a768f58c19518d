"""Debian's Chromium for every browser test, driven by Playwright (never a browser that
Playwright downloads: this machine cannot reach where it would come from)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from nara_kg.settings import PROJECT_ROOT

CHROMIUM = Path(os.environ.get("NARA_KG_CHROMIUM", "/usr/bin/chromium"))
#: Headless as root, and none of Chromium's own calls home (they are refused here anyway).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = PROJECT_ROOT / "var" / "test-artifacts" / "screenshots"


def launch_chromium(playwright: Any) -> Any:
    """The browser, or a clear failure when Debian's chromium is not installed (CI installs
    it; a green run must never have skipped the browser tests)."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) or set "
            "NARA_KG_CHROMIUM",
            pytrace=False,
        )
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


@contextmanager
def chromium_browser() -> Iterator[Any]:
    """Playwright driving :func:`launch_chromium`'s browser, closed on the way out."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        try:
            yield launched
        finally:
            launched.close()
