"""The benchmark suite itself, at a tiny size: every measurement runs and reports sane values.

Timing targets are what the benchmark is for; they are never asserted here (a test machine's
load decides them). The suite wipes the database it is given, like the other graph tests.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import pytest

from benchmarks import suite
from benchmarks.options import REQUIRED_KEYS, SuiteOptions
from benchmarks.report import RESULTS_START, update_benchmarks_md
from nara_kg.settings import Neo4jSettings

pytestmark = pytest.mark.integration

ARTIFACTS = Path(__file__).resolve().parents[2] / "var" / "test-artifacts"

HAS_ONNX = (
    importlib.util.find_spec("onnxruntime") is not None
    and importlib.util.find_spec("onnx") is not None
)


@pytest.fixture(scope="module")
def results(neo4j_driver: Any, neo4j_settings: Neo4jSettings, tmp_path_factory: Any) -> Any:
    # The builds through the jobs run their steps in one process here (the figures are for
    # the real benchmark; this checks that every measurement runs).
    patch = pytest.MonkeyPatch()
    patch.setenv("NARA_KG_EXECUTOR", "in_process")
    options = SuiteOptions(
        records=80,
        scratch=tmp_path_factory.mktemp("bench"),
        memory=True,
        memory_records=40,
        onnx=HAS_ONNX,
        onnx_sample=60,
        write_sample=150,
        local_queries=12,
        global_queries=2,
        parallel_records=50,
        # A build of the real export and both of its sets: tests/e2e/test_real_records.py
        # asks the sets (`evaluate_real_sets`) of the real graph it builds anyway.
        real_questions=False,
    )
    try:
        results = suite.run_suite(options, neo4j_settings)
    finally:
        patch.undo()
    # Where the suite's minutes go, next to the other test artifacts.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "bench-phases.json").write_text(
        json.dumps(results.get("phases_seconds"), indent=2), encoding="utf-8"
    )
    return results


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value > 0


def test_every_required_key_is_present_and_sane(results: dict[str, Any]) -> None:
    json.dumps(results)  # one JSON object
    missing = [key for key in REQUIRED_KEYS if key not in results]
    assert not missing, missing
    assert results["records"] >= 40
    for key in (
        "build_seconds",
        "embedding_seconds",
        "build_over_embedding_ratio",
        "batched_vs_seed_write_ratio",
        "incremental_fraction",
        "local_search_p95_ms",
        "global_search_p95_ms",
        "parallel_1_seconds",
        "parallel_2_seconds",
        "api_search_p95_ms",
        "api_ask_p95_ms",
        "peak_rss_mb",
        "peak_memory_growth_ratio",
    ):
        assert _positive(results[key]), (key, results[key])
    # The build encodes every chunk text at least once, so it cannot beat encoding them alone
    # by much; an incremental rebuild is cheaper than the full one.
    assert results["build_seconds"] > 0.5 * results["embedding_seconds"]
    # The plain encode is the mean of one just before and one just after the build, of the
    # same texts (the suite checks their digests).
    before, after = (
        results["embedding_seconds_before_build"],
        results["embedding_seconds_after_build"],
    )
    assert _positive(before) and _positive(after)
    assert results["embedding_seconds"] == pytest.approx((before + after) / 2, abs=0.002)
    assert results["incremental_fraction"] < 1.5
    assert results["local_search_p50_ms"] <= results["local_search_p95_ms"]
    assert results["peak_rss_mb"] > 50


def test_build_is_timed_per_asset(results: dict[str, Any]) -> None:
    steps = results["per_asset_seconds"]
    for asset in ("file_stages", "graph_nodes", "text_embeddings", "community_reports"):
        assert asset in steps, asset
    assert sum(steps.values()) <= results["build_seconds"] + 1.0
    assert results["embedded_chunks"] > 0
    assert results["build_model_time"]["encoded_texts"] >= results["embedded_chunks"]
    if Path("/proc/stat").exists():  # CPU and memory per step come from /proc (Linux)
        assert results["per_asset_resources"]["text_embeddings"]["peak_rss_mb"] > 50
        assert results["contention"]["plain_encode"]["process_cpu_seconds"] > 0
        assert _positive(results["build_over_embedding_cpu_ratio"])


def test_writes_compare_the_same_sample(results: dict[str, Any]) -> None:
    writes = results["writes"]
    assert writes["sample_nodes"] == min(150, results["chunks"])
    # Both ways create the same Includes relationships from the same rows.
    assert writes["seed_includes_created"] == writes["sample_includes"]
    assert _positive(writes["batched"]["nodes_per_second"])
    assert _positive(writes["seed"]["nodes_per_second"])


def test_incremental_and_memory_sections(results: dict[str, Any]) -> None:
    incremental = results["incremental"]
    assert incremental["records_changed"] >= 1
    assert incremental["embedded"] >= 1  # the changed texts were re-embedded, nothing else
    assert incremental["embedded"] < results["embedded_chunks"]
    memory = results["memory"]
    assert memory["small_records"] == 40
    assert _positive(memory["small_peak_rss_mb"])


@pytest.mark.skipif(not HAS_ONNX, reason="onnxruntime/onnx not installed")
def test_onnx_comparison(results: dict[str, Any]) -> None:
    assert results["onnx"]["texts"] == 60
    assert _positive(results["onnx_vs_torch_ratio"])
    assert results["onnx_min_cosine"] >= 0.999


def test_report_renders(results: dict[str, Any], tmp_path: Path) -> None:
    report = tmp_path / "BENCHMARKS.md"
    report.write_text("# Benchmarks\n\nhand-written notes\n", encoding="utf-8")
    update_benchmarks_md(report, results)
    update_benchmarks_md(report, results)  # the generated block is replaced, not added
    text = report.read_text(encoding="utf-8")
    assert text.count(RESULTS_START) == 1
    assert "hand-written notes" in text
    assert "build / embedding alone" in text


def test_parallel_partition_builds_are_reported(results: dict[str, Any]) -> None:
    parallel = results["parallel"]
    one, two = parallel["builds"]["1"], parallel["builds"]["2"]
    assert one["runs"] == 1 and two["runs"] == 3  # two file-stage runs, then the graph-wide one
    assert one["files"] == two["files"] > 1
    assert 0.0 <= results["build_not_model_share"] <= 1.0
    assert parallel["speedup"] > 0


def test_local_search_is_measured_after_its_warm_up(results: dict[str, Any]) -> None:
    local = results["local_search"]
    warm_up = local["warm_up"]
    assert warm_up["searches"] >= 1
    assert sum(p["searches"] for p in warm_up["passes"]) == warm_up["searches"]
    assert _positive(local["first_searches"]["p95_ms"])
    # on Linux this process's CPU during each pass is read from /proc
    assert warm_up["passes"][0]["client_cpu_ms_per_search"] > 0
    assert results["contention"]["incremental"]["wall_seconds"] > 0
