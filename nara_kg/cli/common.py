"""What the command line's commands share."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

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


if TYPE_CHECKING:
    from nara_kg.api.services import Services


@contextmanager
def cli_resources() -> Iterator[Any]:
    """The Definitions' own resources (same bindings and defaults), initialized here."""
    from resources import open_resources

    with open_resources() as resources:
        yield resources


@contextmanager
def services_from_resources() -> Iterator[Services]:
    """What the API's endpoints need, from the project's resources (same bindings and
    defaults), for `nara-kg serve`: the model behind a lock (requests run on a thread pool)."""
    import threading

    from neo4j import Driver

    from nara_kg.api.services import Services
    from nara_kg.generation.llm import GenerationCache

    with cli_resources() as r:
        embedder = r.embedding_model.new_embedder(shared=True)
        cache_path = r.paths.llm_cache_path
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        lock = threading.Lock()

        def get_driver() -> Driver:
            # The resource verifies connectivity once and keeps the driver; one request at a
            # time makes it, so concurrent first requests do not open several.
            with lock:
                driver: Driver = r.neo4j.get_driver()
                return driver

        with GenerationCache(cache_path) as cache:
            yield Services(
                get_driver=get_driver,
                database=r.neo4j.database,
                embedder=embedder,
                llm=r.llm.get_llm(),
                cache=cache,
                strict_llm=bool(r.llm.strict),
            )


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
