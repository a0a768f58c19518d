"""API tests: FastAPI's TestClient over the demo graph (tests/api/graph_fixture.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nara_kg.api import Services, create_app
from nara_kg.embedding.factory import LockedEmbedder
from nara_kg.generation.llm import ExtractiveLLM
from tests.api.graph_fixture import DemoGraph, api_graph

__all__ = ["api_graph"]


@pytest.fixture(scope="session")
def api_embedder() -> LockedEmbedder:
    return LockedEmbedder()


@pytest.fixture(scope="module")
def services(
    neo4j_driver: Any, neo4j_settings: Any, api_graph: DemoGraph, api_embedder: LockedEmbedder
) -> Services:
    return Services(
        get_driver=lambda: neo4j_driver,
        database=neo4j_settings.database,
        embedder=api_embedder,
        llm=ExtractiveLLM(),
    )


@pytest.fixture(scope="module")
def client(services: Services) -> Iterator[TestClient]:
    # No rate limit here: the limiter has tests of its own.
    with TestClient(create_app(services, rate_per_minute=0)) as test_client:
        yield test_client
