"""What a client is told when something it needs is not there: Neo4j down or refusing the
credentials, the LLM unreachable, too many requests. None of these needs the graph."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from neo4j import exceptions as neo4j_errors

from nara_kg.api import Services, create_app
from nara_kg.api.errors import status_for
from nara_kg.embedding.encoder import Embedder
from nara_kg.errors import QueryError
from nara_kg.generation.llm import ExtractiveLLM, LLMUnreachable, OpenAICompatibleLLM
from nara_kg.retrieval.ask import NoReports


def failing(error: Exception) -> Services:
    def get_driver() -> Any:
        raise error

    return Services(
        get_driver=get_driver, database="neo4j", embedder=Embedder(), llm=ExtractiveLLM()
    )


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (neo4j_errors.ServiceUnavailable("Connection refused"), "cannot reach Neo4j"),
        (neo4j_errors.AuthError("The client is unauthorized"), "Neo4j refused the credentials"),
    ],
)
def test_neo4j_unavailable_is_503_with_one_line(error: Exception, expected: str) -> None:
    with TestClient(create_app(failing(error))) as client:
        for response in (
            client.post("/api/search", json={"query": "flood control"}),
            client.post("/api/ask", json={"question": "Who wrote the flood letters?"}),
            client.get("/api/records/1"),
        ):
            assert response.status_code == 503, response.text
            assert response.json()["error"].startswith(expected)
            assert response.headers["retry-after"]
        health = client.get("/api/health")
        assert health.status_code == 503
        assert health.json()["status"] == "unavailable"
        assert health.json()["neo4j"].startswith(expected)


def test_status_of_each_expected_failure() -> None:
    assert status_for(QueryError("the query is empty")) == 400
    assert status_for(NoReports("no community reports")) == 503
    assert status_for(LLMUnreachable("timed out")) == 503
    wrapped = RuntimeError("step failed")
    wrapped.__cause__ = neo4j_errors.ServiceUnavailable("down")
    assert status_for(wrapped) == 503


def test_rate_limit_is_429_with_retry_after() -> None:
    services = failing(neo4j_errors.ServiceUnavailable("down"))
    with TestClient(create_app(services, rate_per_minute=60, burst=3)) as client:
        statuses = [client.get("/api/records/1").status_code for _ in range(4)]
        assert statuses == [503, 503, 503, 429]
        limited = client.get("/api/records/1")
        assert limited.status_code == 429
        assert int(limited.headers["retry-after"]) >= 1
        assert "too many requests" in limited.json()["error"]
        # Health is for monitors and never limited.
        assert client.get("/api/health").status_code == 503


def test_unreachable_llm_strict_is_503_else_extractive(
    neo4j_driver: Any, embedder: Embedder
) -> None:
    """The graph is not needed to classify: the LLM is asked first, and is down."""
    llm = OpenAICompatibleLLM(
        "http://127.0.0.1:9/v1", "m", None, timeout_s=2, connect_timeout_s=0.5, max_retries=0
    )
    services = Services(
        get_driver=lambda: neo4j_driver, database="neo4j", embedder=embedder, llm=llm
    )
    with TestClient(create_app(services)) as client:
        strict = client.post(
            "/api/ask", json={"question": "What are the main themes?", "strict_llm": True}
        )
        assert strict.status_code == 503
        assert strict.json()["error"]
