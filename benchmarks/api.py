"""Latency of the question-answering surface, for the benchmark suite.

* :func:`measure_api`: wall time of ``POST /api/search`` and ``POST /api/ask`` as a client sees
  it (HTTP, JSON, validation and the server's thread pool included), p50/p95 per endpoint;
* :func:`measure_global`: global search through ``ask`` in process (extractive backend, no
  generation cache), split into questions about the whole collection (answered from the
  highest-ranked reports) and topic questions (every report scored), p50/p95 of each and both;
* :func:`running_api`: the API on a free local port in this process, for :func:`measure_api`.

Requests are sequential: the numbers are one client's latency, not the server's throughput.
"""

from __future__ import annotations

import socket
import statistics
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from nara_kg.retrieval.evaluation import percentile

#: Questions about the collection as a whole; `measure_global` adds them to the caller's.
OVERVIEW_QUESTIONS: tuple[str, ...] = (
    "What are the main themes of these archival records?",
    "Give an overview of the collection.",
    "What are the major topics across the archive?",
)
WARM_UP = 3


def summary(latencies_ms: Sequence[float]) -> dict[str, Any]:
    def rounded(value: float) -> float | None:
        return round(value, 2) if latencies_ms else None

    return {
        "n": len(latencies_ms),
        "p50_ms": rounded(percentile(latencies_ms, 50)),
        "p95_ms": rounded(percentile(latencies_ms, 95)),
        "max_ms": rounded(max(latencies_ms) if latencies_ms else float("nan")),
        "mean_ms": rounded(statistics.fmean(latencies_ms) if latencies_ms else float("nan")),
    }


def measure_api(
    base_url: str,
    queries: Sequence[str],
    *,
    k: int = 5,
    ask_mode: str = "auto",
    timeout_s: float = 120.0,
) -> dict[str, Any]:
    """p50/p95 of `POST /api/search` and `POST /api/ask` over `queries`, each endpoint warmed
    up first (model, driver pool, query plans). A reply other than 200 counts as an error and
    its time is left out."""
    import httpx

    if not queries:
        raise ValueError("measure_api needs at least one query")
    results: dict[str, Any] = {"base_url": base_url, "queries": len(queries), "k": k}
    with httpx.Client(base_url=base_url, timeout=timeout_s, trust_env=False) as client:
        health = client.get("/api/health")
        results["health"] = health.json().get("graph") if health.status_code == 200 else None
        calls = {
            "search": lambda q: client.post("/api/search", json={"query": q, "k": k}),
            "ask": lambda q: client.post(
                "/api/ask", json={"question": q, "k": k, "mode": ask_mode}
            ),
        }
        for name, call in calls.items():
            for query in list(queries)[:WARM_UP]:
                call(query)
            latencies: list[float] = []
            errors: dict[str, int] = {}
            for query in queries:
                started = time.perf_counter()
                response = call(query)
                elapsed = (time.perf_counter() - started) * 1000.0
                if response.status_code == 200:
                    latencies.append(elapsed)
                else:
                    status = str(response.status_code)
                    errors[status] = errors.get(status, 0) + 1
            results[name] = {**summary(latencies), "errors": errors}
    results["search_p50_ms"] = results["search"]["p50_ms"]
    results["search_p95_ms"] = results["search"]["p95_ms"]
    results["ask_p50_ms"] = results["ask"]["p50_ms"]
    results["ask_p95_ms"] = results["ask"]["p95_ms"]
    return results


def measure_global(
    driver: Any,
    database: str,
    embedder: Any,
    questions: Sequence[str] = (),
    *,
    repeats: int = 1,
) -> dict[str, Any]:
    """Global search latency at the graph's size: `questions` plus :data:`OVERVIEW_QUESTIONS`,
    each asked `repeats` times through `ask(mode="global")` with the extractive backend."""
    from nara_kg.generation.llm import ExtractiveLLM
    from nara_kg.retrieval.ask import ask
    from nara_kg.retrieval.global_search import is_overview_question

    llm = ExtractiveLLM()
    asked = list(dict.fromkeys([*questions, *OVERVIEW_QUESTIONS]))
    ask(driver, database, embedder, llm, None, asked[0], mode="global")  # warm-up
    by_kind: dict[str, list[float]] = {"overview": [], "topic": []}
    answered = {"overview": 0, "topic": 0}
    cited: list[int] = []
    levels: set[int] = set()
    shown: set[str] = set()
    for _ in range(max(1, repeats)):
        for question in asked:
            kind = "overview" if is_overview_question(question) else "topic"
            started = time.perf_counter()
            response = ask(driver, database, embedder, llm, None, question, mode="global")
            sources = response.global_sources
            if sources is None:
                # A request to list records ("What kinds of records ...") is shown, not
                # answered from the reports, whatever the mode.
                shown.add(question)
                continue
            by_kind[kind].append((time.perf_counter() - started) * 1000.0)
            answered[kind] += int(not response.refused)
            cited.append(len(sources.communities))
            levels.add(sources.level)
    every = by_kind["overview"] + by_kind["topic"]
    return {
        **summary(every),
        "overview": {**summary(by_kind["overview"]), "answered": answered["overview"]},
        "topic": {**summary(by_kind["topic"]), "answered": answered["topic"]},
        "communities_cited_mean": round(statistics.fmean(cited), 2) if cited else 0.0,
        "levels": sorted(levels),
        "shown_as_records": sorted(shown),
    }


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_api(services: Any = None, *, port: int | None = None) -> Iterator[str]:
    """The API under uvicorn in a thread of this process, without rate limit; yields its base
    URL. Without `services`, it opens the project's resources (as `nara-kg serve` does)."""
    import uvicorn

    from nara_kg.api import create_app
    from nara_kg.cli.common import services_from_resources

    chosen = port or _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(services, services_factory=services_from_resources, rate_per_minute=0),
            host="127.0.0.1",
            port=chosen,
            log_level="warning",
        )
    )
    thread = threading.Thread(target=server.run, name="nara-kg-api", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the API server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{chosen}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
