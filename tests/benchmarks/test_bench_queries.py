"""The local search benchmark warms the server up on queries it does not measure."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks import queries as bench_queries
from nara_kg.retrieval import search


class Searched:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def __call__(self, driver: Any, database: str, encode: Any, query: str, **_: Any) -> Any:
        self.queries.append(query)
        return search.SearchResult(query, [], latency_ms=float(len(query)))


class Encoder:
    def encode(self, texts: list[str]) -> list[list[float]]:
        return [[0.0] for _ in texts]


@pytest.fixture
def searched(monkeypatch: pytest.MonkeyPatch) -> Searched:
    recorder = Searched()
    monkeypatch.setattr(search, "local_search", recorder)
    return recorder


def test_warm_up_queries_run_first_and_are_not_measured(searched: Searched) -> None:
    measured = ["a", "bb", "ccc"]
    result = bench_queries.measure_local_search(
        None, "neo4j", Encoder(), measured, warm_up=["w1", "w2"]
    )
    assert searched.queries == ["w1", "w2", "a", "bb", "ccc"]
    assert result["queries"] == 3 and result["warm_up_queries"] == 2
    assert result["max_ms"] == 3.0  # the warm-up's latencies are not in the figures


def test_without_warm_up_queries_the_first_measured_ones_warm_up(searched: Searched) -> None:
    bench_queries.measure_local_search(None, "neo4j", Encoder(), ["a", "b"])
    assert searched.queries == ["a", "b", "a", "b"]


def test_the_warm_up_queries_follow_the_measured_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = [f"q{i}" for i in range(100 + bench_queries.WARM_UP_SEARCHES + 50)]
    monkeypatch.setattr(
        bench_queries, "local_queries", lambda data, work, count, seed: pool[:count]
    )
    measured, warm_up = bench_queries.local_queries_with_warm_up(None, None, 100, 0)  # type: ignore[arg-type]
    assert measured == pool[:100]
    assert warm_up == pool[100 : 100 + bench_queries.WARM_UP_SEARCHES]


def test_the_cpu_of_the_measured_searches_only_is_reported_per_search(
    searched: Searched,
) -> None:
    from benchmarks.sampling import Snapshot

    warm_up = Snapshot(90.0, 0.0, self_cpu=1.0, server_cpu=1.0, machine_busy=2.0, machine_steal=0)
    readings = iter(
        [
            warm_up,
            warm_up,
            Snapshot(
                100.0, 0.0, self_cpu=10.0, server_cpu=50.0, machine_busy=70.0, machine_steal=5
            ),
            Snapshot(
                101.0, 0.0, self_cpu=10.3, server_cpu=50.2, machine_busy=70.6, machine_steal=5.25
            ),
        ]
    )
    probes: list[int] = []

    def probe() -> Snapshot:
        probes.append(len(searched.queries))
        return next(readings)

    result = bench_queries.measure_local_search(
        None, "neo4j", Encoder(), ["a", "b"], warm_up=["w"], probe=probe
    )
    # before and after the warm-up, and after the last measured search
    assert probes == [0, 1, 1, 3]
    cpu = result["cpu"]
    assert cpu["client_cpu_ms_per_search"] == 150.0
    assert cpu["neo4j_cpu_ms_per_search"] == 100.0
    assert cpu["steal_seconds"] == 0.25
    assert cpu["other_processes_cpu_seconds"] == 0.1


def test_without_a_probe_no_cpu_is_reported(searched: Searched) -> None:
    result = bench_queries.measure_local_search(None, "neo4j", Encoder(), ["a"], warm_up=["w"])
    assert result["cpu"] is None


def test_the_warm_up_cycles_its_queries_until_its_count(searched: Searched) -> None:
    result = bench_queries.measure_local_search(
        None, "neo4j", Encoder(), ["a"], warm_up=["w1", "w2"], warm_up_searches=5
    )
    assert searched.queries == ["w1", "w2", "w1", "w2", "w1", "a"]
    assert result["warm_up"]["searches"] == 5


def test_the_warm_up_stops_when_its_time_is_up(searched: Searched) -> None:
    result = bench_queries.measure_local_search(
        None, "neo4j", Encoder(), ["a"], warm_up=["w"], warm_up_searches=50, warm_up_seconds=0.0
    )
    assert searched.queries == ["w", "a"]
    assert [p["searches"] for p in result["warm_up"]["passes"]] == [1]


def test_the_warm_up_is_recorded_pass_by_pass(
    searched: Searched, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_queries, "WARM_UP_PASS", 2)
    result = bench_queries.measure_local_search(
        None, "neo4j", Encoder(), ["a"], warm_up=["w", "www"], warm_up_searches=5
    )
    passes = result["warm_up"]["passes"]
    assert [p["searches"] for p in passes] == [2, 2, 1]
    assert [p["p95_ms"] for p in passes] == [3.0, 3.0, 1.0]


def test_the_first_searches_after_the_build_are_reported_apart(searched: Searched) -> None:
    result = bench_queries.measure_local_search(
        None, "neo4j", Encoder(), ["a", "b"], warm_up=["wwww", "www", "w"], warm_up_searches=3
    )
    # as many warm-up searches as are measured: the first two, 4 and 3 characters long
    assert result["first_searches"]["max_ms"] == 4.0
    assert result["max_ms"] == 1.0
