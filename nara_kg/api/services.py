"""What the API's endpoints need: Neo4j, the embedding model, the LLM and its cache.

The server starts whether or not Neo4j answers: the driver is made on the first request that
needs it (and again after a failure), so a server started before the database reports 503 with
the reason until it is up, instead of refusing to start.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from neo4j import Driver

from nara_kg.embedding.encoder import Embedder
from nara_kg.generation.llm import LLM, GenerationCache


@dataclass
class LockedEmbedder(Embedder):
    """The embedding model behind one lock: requests run on a thread pool, and a Hugging Face
    fast tokenizer refuses concurrent use ("Already borrowed")."""

    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def encode(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            return super().encode(texts)

    def count_tokens(self, text: str) -> int:
        with self._lock:
            return super().count_tokens(text)


@dataclass
class Services:
    """The endpoints' dependencies. `get_driver` returns a connected driver or raises (the
    failure is explained to the client as a 503)."""

    get_driver: Callable[[], Driver]
    database: str
    embedder: Embedder
    llm: LLM
    cache: GenerationCache | None = None
    #: Fail instead of answering extractively when the LLM does not answer.
    strict_llm: bool = False

    def driver(self) -> Driver:
        return self.get_driver()


@contextmanager
def services_from_resources() -> Iterator[Services]:
    """The CLI's resources (same environment variables and defaults), for `nara-kg serve`."""
    from resources import open_resources

    with open_resources() as r:
        settings = r.embedding_model
        embedder = LockedEmbedder(
            model=settings.model,
            device=settings.device,
            backend=settings.backend,
            batch_size=settings.batch_size,
            threads=settings.threads,
        )
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


def warm_up(services: Services, log: Callable[[str], None] | None = None) -> None:
    """Load the embedding model before the first request (seconds on a cold machine), then run
    a search of each shape once (:func:`nara_kg.retrieval.warm.warm_searches`), so the first
    question of each kind is as fast as the next. A database that does not answer yet is
    left for the first request to report."""
    services.embedder.encode(["warm-up"])
    from nara_kg.retrieval.warm import warm_searches

    try:
        warm_searches(services.driver(), services.database, services.embedder.encode)
    except Exception as error:  # the server starts anyway; requests report the cause (503)
        if log is not None:
            log(f"warm-up skipped: {error}")
