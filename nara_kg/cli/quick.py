"""What `nara-kg ask` needs, opened without Dagster: a shell question should be answered in
about a second, and importing Dagster to build its resources took longer than the answer (3-5 s
of a 3-5 s `ask`). The settings are the resources' own: their variables are read with
`nara_kg.settings.configured` and the embedder is made by `make_embedder`, as the
EmbeddingModel resource makes it.

Only the default, model-free answer path is opened here. A configured language model or the
stand-in embedder goes through the resources as before (:func:`quick_resources` returns None).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neo4j import Driver

    from nara_kg.embedding.encoder import Embedder
    from nara_kg.generation.llm import LLM

#: What the Neo4j driver loads when it can, for DataFrame results that `ask` never asks for.
_DATAFRAME_MODULES = ("pandas", "pyarrow")


def import_driver_without_dataframes() -> None:
    """Import the Neo4j driver without pandas and pyarrow (a second of a `nara-kg ask` on the
    2-core machine). The driver loads them only to offer `Result.to_df()`, which this process
    never calls; they stay importable for anything that does need them."""
    if "neo4j" in sys.modules:
        return
    blocked = [name for name in _DATAFRAME_MODULES if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # import raises ImportError
    try:
        import neo4j  # noqa: F401
    finally:
        for name in blocked:
            sys.modules.pop(name, None)


@dataclass
class QuickResources:
    driver: Driver
    database: str
    embedder: Embedder
    llm: LLM
    strict: bool


def quick_path(env: Mapping[str, str]) -> bool:
    """Whether this environment asks for the default path (no model, the real embedder)."""
    from nara_kg.embedding.factory import embedding_settings
    from nara_kg.embedding.standin import STANDIN_BACKEND
    from nara_kg.generation.llm import EXTRACTIVE_BACKEND
    from nara_kg.settings import configured

    backend = configured("llm", env).get("backend", EXTRACTIVE_BACKEND).strip()
    return backend == EXTRACTIVE_BACKEND and (
        embedding_settings(env).get("backend") != STANDIN_BACKEND
    )


@contextmanager
def quick_resources(env: Mapping[str, str] | None = None) -> Iterator[QuickResources | None]:
    """The driver (verified), the embedder and the extractive LLM, or None when the
    environment configures something only the resources open."""
    source = os.environ if env is None else env
    if not quick_path(source):
        yield None
        return
    from nara_kg.embedding.factory import embedding_settings, make_embedder
    from nara_kg.generation.llm import ExtractiveLLM
    from nara_kg.graph.connection import open_driver
    from nara_kg.settings import RESOURCE_VARIABLES, Neo4jSettings, configured, parse_value

    settings = Neo4jSettings.from_env(source)
    strict = configured("llm", source).get("strict", "")
    driver = open_driver(settings)
    try:
        driver.verify_connectivity()
        yield QuickResources(
            driver=driver,
            database=settings.database,
            embedder=make_embedder(**embedding_settings(source)),
            llm=ExtractiveLLM(),
            strict=parse_value(RESOURCE_VARIABLES["llm"]["strict"], strict, bool),
        )
    finally:
        driver.close()
