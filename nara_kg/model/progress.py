"""The progress callback every stage, command and benchmark reports through (an asset's logger,
`click.echo`, or nothing): one leaf module, so that any layer can take a `Log` without importing
the layer that defines it."""

from __future__ import annotations

from collections.abc import Callable

Log = Callable[[str], None]


def quiet(_: str) -> None:
    """The default: report nothing."""
