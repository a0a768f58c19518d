"""The benchmark's CPU accounting from /proc: a server's CPU split by thread name."""

from __future__ import annotations

import os
import sys

import pytest

from benchmarks import sampling
from benchmarks.sampling import Snapshot, cpu_between, summed_cpu, threads_between


def test_threads_are_listed_busiest_first_and_the_rest_is_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sampling, "THREAD_NAMES_LISTED", 2)
    before = {"neo4j.BoltWorke": 1.0, "C2 CompilerThre": 5.0, "GC Thread": 2.0}
    after = {"neo4j.BoltWorke": 4.0, "C2 CompilerThre": 6.5, "GC Thread": 2.25, "gds": 0.5}
    # 7.0 s for the process: 3.0 + 1.5 listed, 0.25 + 0.5 not listed, 1.75 in threads that ended.
    split = threads_between(before, after, total=7.0)
    assert list(split) == ["neo4j.BoltWorke", "C2 CompilerThre", "other"]
    assert split == {"neo4j.BoltWorke": 3.0, "C2 CompilerThre": 1.5, "other": 2.5}


def test_idle_threads_are_not_listed() -> None:
    assert threads_between({"a": 1.0, "b": 2.0}, {"a": 1.5, "b": 2.0}, total=0.5) == {"a": 0.5}


def _snapshot(wall: float, server: float, threads: dict[str, float]) -> Snapshot:
    return Snapshot(
        wall, 0.0, 0.0, server, machine_busy=server, machine_steal=0.0, server_threads=threads
    )


def test_a_cpu_split_carries_the_servers_threads_and_sums_add_them_up() -> None:
    first = cpu_between(_snapshot(0, 10.0, {"bolt": 4.0}), _snapshot(1, 11.0, {"bolt": 5.0}))
    second = cpu_between(
        _snapshot(1, 11.0, {"bolt": 5.0, "gc": 1.0}), _snapshot(2, 13.0, {"bolt": 5.5, "gc": 2.5})
    )
    assert first is not None and second is not None
    assert first["neo4j_cpu_by_thread"] == {"bolt": 1.0}
    assert second["neo4j_cpu_by_thread"] == {"gc": 1.5, "bolt": 0.5}
    total = summed_cpu([first, second])
    assert total is not None
    assert total["neo4j_cpu_seconds"] == 3.0
    assert total["neo4j_cpu_by_thread"] == {"bolt": 1.5, "gc": 1.5}


def test_without_thread_readings_there_is_no_split() -> None:
    plain = Snapshot(0, 0.0, 0.0, 1.0, 1.0, 0.0)
    later = Snapshot(1, 0.0, 0.0, 2.0, 2.0, 0.0)
    split = cpu_between(plain, later)
    assert split is not None and split["neo4j_cpu_by_thread"] is None
    total = summed_cpu([split])
    assert total is not None and total["neo4j_cpu_by_thread"] is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_live_process_threads_add_up_to_its_cpu() -> None:
    pid = os.getpid()
    threads_before, whole_before = sampling._threads_cpu(pid), sampling._process_cpu(pid)
    sum(i * i for i in range(3_000_000))  # CPU in this (live) thread
    threads_after, whole_after = sampling._threads_cpu(pid), sampling._process_cpu(pid)
    assert all(not name[-1].isdigit() for name in threads_after)
    spent = sum(threads_after.values()) - sum(threads_before.values())
    assert whole_after - whole_before > 0.05
    assert spent == pytest.approx(whole_after - whole_before, abs=0.03)
