"""What the API's endpoints need: Neo4j, the embedding model, the LLM and its cache.

The server starts whether or not Neo4j answers: the driver is made on the first request that
needs it (and again after a failure), so a server started before the database reports 503 with
the reason until it is up, instead of refusing to start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from neo4j import Driver

from nara_kg.embedding.encoder import Embedder
from nara_kg.generation.llm import LLM, GenerationCache


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
