"""What the command line's commands share."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from nara_kg.model.limits import is_utf8

_F = TypeVar("_F", bound=Callable[..., Any])


def int_option(
    *names: str, default: int | None, low: int, high: int | None, help: str
) -> Callable[[_F], _F]:
    """An integer option that click refuses outside [low, high] (high None: no upper bound),
    its default shown in --help when there is one."""
    return click.option(
        *names,
        default=default,
        show_default=default is not None,
        type=click.IntRange(low, high),
        help=help,
    )


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
