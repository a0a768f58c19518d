"""The API under faults just past the basic ones: a Neo4j that is down or never answers is a 503
within seconds on every read (not after the driver's 30 s of retries); a 503 names no Bolt
address, LLM endpoint or upstream reply; naIds past 64-bit integers, text that is not UTF-8 and
dates in other scripts' digits are 422. None of these needs a graph."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient
from neo4j import exceptions as neo4j_errors

from nara_kg.api import Services, create_app
from nara_kg.embedding.encoder import Embedder
from nara_kg.errors import Neo4jUnreachable
from nara_kg.generation.llm import ExtractiveLLM, OpenAICompatibleLLM
from nara_kg.graph.connection import open_driver
from nara_kg.settings import Neo4jSettings
from tests.openai_server import Reply, openai_test_server

#: What "within a few seconds" means here: the time to get a connection (4 s) and a little.
FAST_503_S = 6.0
READS = (
    ("GET", "/api/health", None),
    ("POST", "/api/search", {"query": "flood control"}),
    ("POST", "/api/search", {"query": "flood control", "filters": {"within": 5}}),
    ("GET", "/api/records/1", None),
    ("POST", "/api/ask", {"question": "Who wrote the flood letters?", "mode": "local"}),
    ("POST", "/api/ask", {"question": "What are the main themes?", "mode": "global"}),
)


def settings_for(port: int) -> Neo4jSettings:
    return Neo4jSettings(
        uri=f"bolt://127.0.0.1:{port}",
        username="neo4j",
        password="not-used",
        database="neo4j",
        managed=False,
    )


def app_over(driver: Any, embedder: Embedder, llm: Any = None) -> TestClient:
    services = Services(
        get_driver=lambda: driver,
        database="neo4j",
        embedder=embedder,
        llm=llm or ExtractiveLLM(),
    )
    return TestClient(create_app(services, rate_per_minute=0))


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A server that accepts connections and never says a word (a hung Neo4j)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield int(listener.getsockname()[1])


def timed(client: TestClient, method: str, path: str, body: Any) -> tuple[int, float, Any]:
    started = time.monotonic()
    response = client.request(method, path, json=body)
    return response.status_code, time.monotonic() - started, response.json()


def test_neo4j_down_every_read_is_503_within_seconds(closed_port: int, embedder: Embedder) -> None:
    """The driver was made while Neo4j was up (the server keeps it); then Neo4j went away."""
    embedder.encode(["warm-up"])
    with open_driver(settings_for(closed_port)) as driver, app_over(driver, embedder) as client:
        for method, path, body in READS:
            status, seconds, reply = timed(client, method, path, body)
            assert status == 503, (path, reply)
            assert seconds < FAST_503_S, (path, seconds)
        # Monitors polling health together do not hold the worker threads.
        started = time.monotonic()
        with ThreadPoolExecutor(20) as pool:
            statuses = list(pool.map(lambda _: client.get("/api/health").status_code, range(40)))
        assert statuses == [503] * 40
        assert time.monotonic() - started < 2 * FAST_503_S


def test_a_neo4j_that_never_answers_is_503_within_seconds(
    silent_port: int, embedder: Embedder
) -> None:
    embedder.encode(["warm-up"])
    with open_driver(settings_for(silent_port)) as driver, app_over(driver, embedder) as client:
        for method, path, body in READS[:4]:
            status, seconds, reply = timed(client, method, path, body)
            assert status == 503, (path, reply)
            assert seconds < FAST_503_S, (path, seconds)


def failing(error: Exception) -> TestClient:
    def get_driver() -> Any:
        raise error

    services = Services(
        get_driver=get_driver, database="neo4j", embedder=Embedder(), llm=ExtractiveLLM()
    )
    return TestClient(create_app(services, rate_per_minute=0))


def unreachable() -> Exception:
    cause = neo4j_errors.ServiceUnavailable(
        "Couldn't connect to neo4j.internal.example:7687 (resolved to ('10.1.2.3:7687',))"
    )
    failure = Neo4jUnreachable(f"cannot reach Neo4j at bolt://neo4j.internal.example:7687: {cause}")
    failure.__cause__ = cause
    return failure


INTERNAL = ("neo4j.internal.example", "10.1.2.3", "7687", "bolt://")


def test_a_503_names_no_bolt_address(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="nara_kg.api")
    with failing(unreachable()) as client:
        replies = [client.request(m, p, json=b) for m, p, b in READS]
    for reply in replies:
        assert reply.status_code == 503
        text = reply.text
        assert not [word for word in INTERNAL if word in text], text
        body = reply.json()
        message = body.get("error") or body.get("neo4j")
        assert message.startswith("cannot reach Neo4j"), body
    # The server's log has what the client is not told.
    assert "neo4j.internal.example:7687" in caplog.text


def test_a_503_names_no_llm_endpoint_nor_its_reply(
    neo4j_driver: Any, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="nara_kg.api")
    upstream = "UPSTREAM-SECRET-DETAIL internal stack trace at /srv/llm/app.py"
    for status in (400, 500):
        with openai_test_server(lambda _, s=status: Reply(status=s, body=upstream)) as server:
            llm = OpenAICompatibleLLM(
                server.url, "m", "sk-key", timeout_s=2, connect_timeout_s=0.5, max_retries=0
            )
            with app_over(neo4j_driver, embedder, llm) as client:
                reply = client.post(
                    "/api/ask", json={"question": "What are the main themes?", "strict_llm": True}
                )
        assert reply.status_code == 503, reply.text
        assert "UPSTREAM-SECRET" not in reply.text and server.url not in reply.text
        assert "127.0.0.1" not in reply.text
        assert reply.json()["error"].startswith("the configured LLM")
        assert "UPSTREAM-SECRET" in caplog.text


@pytest.fixture(scope="module")
def down() -> Iterator[TestClient]:
    """Neo4j is down: a request that passes validation is a 503, one that does not a 422."""
    with failing(neo4j_errors.ServiceUnavailable("down")) as client:
        yield client


def test_out_of_range_naids_are_422(down: TestClient) -> None:
    for within in (2**63, 10**20, 0):
        reply = down.post("/api/search", json={"query": "flood", "filters": {"within": within}})
        assert reply.status_code == 422, reply.text
        assert "within" in reply.json()["error"]
    assert down.get(f"/api/records/{2**63}").status_code == 422
    assert down.post("/api/ask", json={"question": "flood", "level": 65}).status_code == 422
    # The largest naId is valid.
    reply = down.post("/api/search", json={"query": "flood", "filters": {"within": 2**63 - 1}})
    assert reply.status_code == 503


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/search", '{"query": "flood", "filters": {"materials": ["\\ud800"]}}'),
        ("/api/search", '{"query": "flood \\udcff control"}'),
        ("/api/ask", '{"question": "\\ud83d who?"}'),
        ("/api/search", '{"query": "flood", "filters": {"date_from": "19\\ud8004"}}'),
    ],
)
def test_text_that_is_not_utf8_is_422(down: TestClient, path: str, body: str) -> None:
    reply = down.post(path, content=body, headers={"Content-Type": "application/json"})
    assert reply.status_code == 422, reply.text
    field = "materials" if "materials" in body else "date_from" if "date" in body else ""
    assert field in reply.json()["error"]


#: Fullwidth 1940, Arabic-Indic 1950, and ASCII years with such months or days.
OTHER_DIGITS = [
    "\uff11\uff19\uff14\uff10",
    "\u0661\u0669\u0665\u0660",
    "1940-\uff10\uff11",
    "1940-01-\u0660\u0662",
]


@pytest.mark.parametrize("date", OTHER_DIGITS)
def test_dates_in_other_digits_are_422(down: TestClient, date: str) -> None:
    for field in ("date_from", "date_to"):
        reply = down.post("/api/search", json={"query": "flood", "filters": {field: date}})
        assert reply.status_code == 422, reply.text
        assert field in reply.json()["error"]
    reply = down.post("/api/search", json={"query": "flood", "filters": {"date_to": "1940-01"}})
    assert reply.status_code == 503
