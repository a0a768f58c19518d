"""Fixtures for tests against the graph server described by the environment.

The server is the project-managed local Neo4j (`nara-kg neo4j start`) unless NEO4J_URI points
elsewhere. When it does not answer these tests FAIL, so that CI never goes green without having
run them; set NARA_KG_ALLOW_SKIP_NEO4J=1 to skip them instead (e.g. on a laptop without Java).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from nara_kg.settings import Neo4jSettings

ALLOW_SKIP_ENV = "NARA_KG_ALLOW_SKIP_NEO4J"


def _unavailable(message: str) -> None:
    if os.environ.get(ALLOW_SKIP_ENV) == "1":
        pytest.skip(f"{message} ({ALLOW_SKIP_ENV}=1: skipping the Neo4j integration tests)")
    pytest.fail(
        f"{message}. Start the local server with `nara-kg neo4j start` (or set NEO4J_URI, "
        f"NEO4J_USERNAME, NEO4J_PASSWORD), or set {ALLOW_SKIP_ENV}=1 to skip these tests.",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def neo4j_settings() -> Neo4jSettings:
    return Neo4jSettings.from_env()


@pytest.fixture(scope="session")
def neo4j_driver(neo4j_settings: Neo4jSettings) -> Iterator[Any]:
    from neo4j import GraphDatabase

    driver = GraphDatabase.driver(
        neo4j_settings.uri,
        auth=(neo4j_settings.username, neo4j_settings.password),
        connection_timeout=10,
    )
    try:
        driver.verify_connectivity()
    except Exception as exc:
        driver.close()
        _unavailable(f"Neo4j at {neo4j_settings.uri} is not reachable: {exc}")
    try:
        yield driver
    finally:
        driver.close()
