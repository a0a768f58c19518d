"""What the command line's commands share."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def cli_resources() -> Iterator[Any]:
    """The Definitions' own resources (same bindings and defaults), initialized here."""
    from resources import open_resources

    with open_resources() as resources:
        yield resources
