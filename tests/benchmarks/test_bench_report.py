"""The benchmark's report without a build: targets, the Markdown block, BENCHMARKS.md upkeep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.options import REQUIRED_KEYS, TARGETS
from benchmarks.report import RESULTS_END, RESULTS_START, markdown_report, update_benchmarks_md
from benchmarks.suite import targets_report


def _results() -> dict[str, Any]:
    results: dict[str, Any] = dict.fromkeys(REQUIRED_KEYS)
    results.update(
        records=400,
        build_seconds=12.0,
        embedding_seconds=10.0,
        build_over_embedding_ratio=1.1,
        local_search_p95_ms=200.0,
        per_asset_seconds={"file_stages": 8.0, "graph_nodes": 2.0},
    )
    results["targets"] = targets_report(results)
    return results


def test_targets_say_met_missed_and_unmeasured() -> None:
    rows = {row["metric"]: row for row in _results()["targets"]}
    assert set(rows) == set(TARGETS)
    assert rows["build_over_embedding_ratio"]["met"] is True
    assert rows["local_search_p95_ms"]["met"] is False
    assert rows["local_search_p95_ms"]["miss"] == "8.00x over"
    assert rows["onnx_vs_torch_ratio"]["met"] is None


def test_markdown_report_has_the_tables_and_the_json_keys() -> None:
    text = markdown_report(_results())
    assert "| 1 | whole build, wall time (s) | 12.0 |" in text
    assert "| file_stages | 8.0 | 66.7% |" in text
    summary = json.loads(text.split("```json\n", 1)[1].split("\n```", 1)[0])
    assert list(summary) == list(REQUIRED_KEYS)


def test_update_replaces_only_the_generated_block(tmp_path: Path) -> None:
    report = tmp_path / "BENCHMARKS.md"
    report.write_text("# Benchmarks\n\nhand-written notes\n", encoding="utf-8")
    update_benchmarks_md(report, _results())
    update_benchmarks_md(report, _results())
    text = report.read_text(encoding="utf-8")
    assert text.count(RESULTS_START) == 1 and text.count(RESULTS_END) == 1
    assert text.startswith("# Benchmarks\n\nhand-written notes\n")


def test_the_real_record_questions_are_reported_per_kind() -> None:
    results = _results()
    results["real_questions"] = {
        "n": 59,
        "hit_at_1": 0.9322,
        "hit_at_5": 1.0,
        "mrr_at_10": 0.961,
        "by_kind": {"date": {"n": 16, "hit_at_1": 1.0, "hit_at_5": 1.0, "mrr_at_10": 1.0}},
    }
    text = markdown_report(results)
    assert "| 5 | real-record questions (59): hit@1 / hit@5 / MRR@10 | 0.932 / 1.000 / 0.961 |" in (
        text
    )
    assert "date (16): hit@1 / hit@5 / MRR@10 | 1.000 / 1.000 / 1.000 |" in text
    assert "real-record answers" not in text
    results["real_questions"]["answers"] = {
        "n": 75,
        "accuracy": 0.4267,
        "refusal_rate_unanswerable": 0.75,
        "by_kind": {"who": {"n": 9, "answered": 3, "accuracy": 0.3333}},
    }
    text = markdown_report(results)
    assert "| 5 | real-record answers (75): accuracy / unanswerable refused | 0.427 / 0.750 |" in (
        text
    )
    assert "|   who (9): answer accuracy | 0.333 |" in text
    results["real_questions"] = {"skipped": "no real export at /x"}
    assert "real-record questions | skipped: no real export at /x" in markdown_report(results)


def test_the_local_searches_cpu_and_the_apis_k_are_reported() -> None:
    results = _results()
    results["api"] = {"k": 5}
    results["local_search"] = {
        "queries": 100,
        "cpu": {
            "client_cpu_ms_per_search": 15.4,
            "neo4j_cpu_ms_per_search": 15.2,
            "steal_seconds": 0.5,
            "other_processes_share": 0.031,
        },
    }
    text = markdown_report(results)
    assert "API latency p50 / p95 (ms, k = 5)" in text
    assert "steal and other processes during the searches | 15.4 / 15.2; 0.50 s / 3.1% |" in text


def test_without_the_cpu_of_the_searches_there_is_no_cpu_row() -> None:
    assert "CPU per search" not in markdown_report(_results())


def test_neo4j_cpu_in_the_build_is_reported_by_thread() -> None:
    results = _results()
    results["contention"] = {
        "build": {
            "neo4j_cpu_seconds": 20.04,
            "neo4j_cpu_by_thread": {"neo4j.BoltWorke": 15.0, "C2 CompilerThre": 4.0, "other": 1.04},
        }
    }
    text = markdown_report(results)
    assert (
        "busiest threads (s) | 20.0: neo4j.BoltWorke 15.0, C2 CompilerThre 4.0, other 1.0 |" in text
    )
    assert "busiest threads" not in markdown_report(_results())


def test_the_local_search_warm_up_and_the_first_searches_are_reported() -> None:
    results = _results()
    results["local_search"] = {
        "queries": 100,
        "warm_up": {
            "searches": 2000,
            "passes": [
                {"searches": 250, "neo4j_cpu_ms_per_search": 57.1},
                {"searches": 250, "neo4j_cpu_ms_per_search": 12.04},
            ],
        },
        "first_searches": {"p50_ms": 38.76, "p95_ms": 59.73},
    }
    text = markdown_report(results)
    assert "(ms, 100 queries after 2,000 warm-up searches)" in text
    assert "the first 100 searches after the build, p50 / p95 (ms) | 38.8 / 59.7 |" in text
    assert "pass by pass (250 searches each) (ms) | 57.1 → 12.0 |" in text
    assert "first 100 searches" not in markdown_report(_results())


def test_the_incremental_builds_cpu_and_steal_are_reported() -> None:
    results = _results()
    results["contention"] = {
        "incremental": {
            "wall_seconds": 16.0,
            "process_cpu_seconds": 9.1,
            "neo4j_cpu_seconds": 2.3,
            "other_processes_cpu_seconds": 0.2,
            "other_processes_share": 0.006,
            "steal_seconds": 4.5,
        }
    }
    assert "| incremental build | 16.0 | 9.1 | 2.3 | 0.2 (1%) | 4.5 |" in markdown_report(results)
