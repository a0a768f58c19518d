"""The progress callback the graph stages report through (an asset's logger, or nothing)."""

from __future__ import annotations

from collections.abc import Callable

Log = Callable[[str], None]


def quiet(_: str) -> None:
    """The default: report nothing."""
