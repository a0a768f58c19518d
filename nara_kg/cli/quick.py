"""What `nara-kg ask` needs, opened without Dagster: a shell question should be answered in
about a second, and importing Dagster to build its resources took longer than the answer (3-5 s
of a 3-5 s `ask`). The settings are those of the resources (`resources/__init__.py`): the same
environment variables and defaults; `tests/unit/test_quick_cli.py` holds the two together.

Only the default, model-free answer path is opened here. A configured language model or the
stand-in embedder goes through the resources as before (:func:`quick_resources` returns None).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neo4j import Driver

    from nara_kg.embedding.encoder import Embedder
    from nara_kg.generation.llm import LLM

#: The resources' environment variables this path reads (resources.ENV_BINDINGS).
LLM_BACKEND_VARIABLE = "NARA_KG_LLM_BACKEND"
LLM_STRICT_VARIABLE = "NARA_KG_LLM_STRICT"
EMBEDDING_VARIABLES = {
    "model": "NARA_KG_EMBEDDING_MODEL",
    "backend": "NARA_KG_EMBEDDING_BACKEND",
    "device": "NARA_KG_EMBEDDING_DEVICE",
    "threads": "NARA_KG_EMBEDDING_THREADS",
}
#: The EmbeddingModel resource's defaults for the fields that have no constant of their own.
DEFAULT_DEVICE = "cpu"
DEFAULT_THREADS = 0
_TRUE = frozenset({"1", "true", "yes", "on"})


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


def embedding_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The EmbeddingModel resource's fields, as the environment sets them."""
    from nara_kg.embedding.encoder import DEFAULT_BACKEND, DEFAULT_BATCH_SIZE, DEFAULT_MODEL

    return {
        "model": env.get(EMBEDDING_VARIABLES["model"]) or DEFAULT_MODEL,
        "backend": env.get(EMBEDDING_VARIABLES["backend"]) or DEFAULT_BACKEND,
        "device": env.get(EMBEDDING_VARIABLES["device"]) or DEFAULT_DEVICE,
        "batch_size": DEFAULT_BATCH_SIZE,
        "threads": int(env.get(EMBEDDING_VARIABLES["threads"]) or DEFAULT_THREADS),
    }


def quick_path(env: Mapping[str, str]) -> bool:
    """Whether this environment asks for the default path (no model, the real embedder)."""
    from nara_kg.embedding.standin import STANDIN_BACKEND

    backend = (env.get(LLM_BACKEND_VARIABLE) or "extractive").strip()
    return backend == "extractive" and embedding_settings(env)["backend"] != STANDIN_BACKEND


@contextmanager
def quick_resources(env: Mapping[str, str] | None = None) -> Iterator[QuickResources | None]:
    """The driver (verified), the embedder and the extractive LLM, or None when the
    environment configures something only the resources open."""
    source = os.environ if env is None else env
    if not quick_path(source):
        yield None
        return
    from nara_kg.embedding.encoder import Embedder
    from nara_kg.generation.llm import ExtractiveLLM
    from nara_kg.graph.connection import open_driver
    from nara_kg.settings import Neo4jSettings

    settings = Neo4jSettings.from_env(dict(source))
    driver = open_driver(settings)
    try:
        driver.verify_connectivity()
        yield QuickResources(
            driver=driver,
            database=settings.database,
            embedder=Embedder(**embedding_settings(source)),
            llm=ExtractiveLLM(),
            strict=(source.get(LLM_STRICT_VARIABLE) or "").strip().lower() in _TRUE,
        )
    finally:
        driver.close()
