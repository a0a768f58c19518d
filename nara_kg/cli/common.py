"""What the command line's commands share."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from nara_kg.model.limits import is_utf8


@contextmanager
def cli_resources() -> Iterator[Any]:
    """The Definitions' own resources (same bindings and defaults), initialized here."""
    from resources import open_resources

    with open_resources() as resources:
        yield resources


class Text(click.ParamType):
    """A string argument that is valid UTF-8. Arguments are decoded with surrogateescape, so
    bytes that are not UTF-8 arrive as lone surrogates, which no later step could encode."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if not is_utf8(text):
            self.fail("is not valid UTF-8 text (check the terminal's encoding)", param, ctx)
        return text


TEXT = Text()
