"""Waiting for an index: as long as its population moves, with progress logged; an index that
FAILED or stays put for the stall time is an error (no fixed total timeout)."""

from __future__ import annotations

from typing import Any

import pytest

import nara_kg.graph.indexes as indexes


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def states(monkeypatch: pytest.MonkeyPatch, rows: list[tuple[str, float]]) -> None:
    seen = iter(rows)

    def info(driver: Any, database: str, name: str) -> dict[str, Any]:
        state, percent = next(seen)
        return {"name": name, "state": state, "populationPercent": percent}

    monkeypatch.setattr(indexes, "index_info", info)


def test_a_slow_index_that_keeps_moving_is_waited_for_past_the_stall_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 2,000 polls of 1 s: far past the stall time of 60 s, but it always moves.
    rows = [("POPULATING", i / 20) for i in range(2_000)] + [("ONLINE", 100.0)]
    states(monkeypatch, rows)
    clock, logged = Clock(), []
    info = indexes.await_index(
        None,  # type: ignore[arg-type]
        "neo4j",
        "texts_from_records",
        stall_s=60,
        poll_s=1,
        first_poll_s=1,
        log=logged.append,
        clock=clock,
        sleep=clock.sleep,
    )
    assert info["state"] == "ONLINE" and clock.now >= 2_000
    assert logged == [f"index texts_from_records: {p}% populated" for p in range(10, 100, 10)]


def test_an_index_that_stays_put_or_failed_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    states(monkeypatch, [("POPULATING", 5.0)] + [("POPULATING", 40.0)] * 100)
    clock = Clock()
    with pytest.raises(RuntimeError, match=r"stayed at 40\.0% populated for 30 s"):
        indexes.await_index(
            None,  # type: ignore[arg-type]
            "neo4j",
            "x",
            stall_s=30,
            poll_s=1,
            first_poll_s=1,
            clock=clock,
            sleep=clock.sleep,
        )
    assert 30 <= clock.now <= 33
    states(monkeypatch, [("POPULATING", 5.0), ("FAILED", 5.0)])
    with pytest.raises(RuntimeError, match="FAILED"):
        indexes.await_index(None, "neo4j", "x", sleep=lambda _: None)  # type: ignore[arg-type]


def test_polls_start_short_and_double_up_to_the_poll_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An index ONLINE within a fraction of a second is not waited for a whole poll interval.
    states(monkeypatch, [("POPULATING", 10.0 * i) for i in range(8)] + [("ONLINE", 100.0)])
    slept: list[float] = []
    indexes.await_index(
        None,  # type: ignore[arg-type]
        "neo4j",
        "x",
        poll_s=2,
        first_poll_s=0.05,
        sleep=slept.append,
    )
    assert slept == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 2, 2]
