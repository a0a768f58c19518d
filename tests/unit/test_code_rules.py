"""Rules of the codebase that a reviewer would otherwise check by hand (issue 41): comments state
the reason and the current figure rather than narrate history, and assets stay thin."""

from __future__ import annotations

import re
from pathlib import Path

from nara_kg.settings import PROJECT_ROOT

#: Phrases that narrate history ("used to", "run 27") instead of stating the reason.
HISTORY = re.compile(r"used to|run [0-9]{2}")
#: An asset module maps a core result to metadata; past this it holds logic of its own.
MAX_ASSET_MODULE_LINES = 200


def _sources(package: str) -> list[Path]:
    return sorted((PROJECT_ROOT / package).rglob("*.py"))


def test_no_history_narrated_in_the_core() -> None:
    hits = [
        f"{path.relative_to(PROJECT_ROOT)}:{number}: {line.strip()}"
        for path in _sources("nara_kg")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if HISTORY.search(line)
    ]
    assert hits == []


def test_asset_modules_are_thin() -> None:
    long = {
        str(path.relative_to(PROJECT_ROOT)): lines
        for path in _sources("graph_assets")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_ASSET_MODULE_LINES
    }
    assert long == {}
