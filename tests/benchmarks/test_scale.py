"""The scale mode's arithmetic and report (no build: those need Neo4j)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.scale import (
    SCALE_END,
    SCALE_START,
    growth,
    growth_exponent,
    markdown_scale_report,
    update_scale_section,
)


def _run(records: int, seconds: float, rss: float) -> dict:
    return {
        "records": records,
        "chunks": records * 3,
        "build_seconds": seconds * 3,
        "records_per_second": records / (seconds * 3),
        "peak_rss_mb": rss,
        "neo4j_memory": {"vmrss_mb": 2000.0},
        "neo4j_store_mb": records / 100,
        "local_search": {"p50_ms": 10.0, "p95_ms": 20.0},
        "global_search": {"p50_ms": 50.0, "p95_ms": 80.0},
        "steps": {
            "linear": {"seconds": seconds, "peak_rss_mb": rss},
            "quadratic": {"seconds": seconds * records / 1000, "peak_rss_mb": rss},
            "tiny": {"seconds": 0.001 * records / 1000, "peak_rss_mb": rss},
        },
    }


def test_growth_exponent() -> None:
    assert growth_exponent(1000, 2.0, 10_000, 20.0) == pytest.approx(1.0)
    assert growth_exponent(1000, 1.0, 10_000, 100.0) == pytest.approx(2.0)
    assert growth_exponent(1000, 0.0, 10_000, 1.0) is None
    assert growth_exponent(1000, 1.0, 1000, 1.0) is None


def test_growth_flags_superlinear_steps_and_skips_tiny_ones() -> None:
    runs = [_run(10_000, 10.0, 500.0), _run(100_000, 100.0, 500.0)]
    (pair,) = growth(runs)
    assert pair["steps"]["linear"]["time"] == pytest.approx(1.0)
    assert pair["steps"]["quadratic"]["time"] == pytest.approx(2.0)
    assert pair["steps"]["tiny"]["time"] is None
    assert pair["steps"]["linear"]["peak_rss"] == pytest.approx(0.0)
    assert pair["superlinear_steps"] == ["quadratic"]


def test_report_and_section_update(tmp_path: Path) -> None:
    runs = [_run(10_000, 10.0, 500.0), _run(100_000, 100.0, 600.0)]
    scale = {"model": "standin-hash:384", "runs": runs, "growth": growth(runs)}
    report = markdown_scale_report(scale)
    assert "N = 100,000" in report and "| quadratic |" in report
    path = tmp_path / "BENCHMARKS.md"
    path.write_text("# Benchmarks\n\nintro\n", encoding="utf-8")
    update_scale_section(path, scale)
    update_scale_section(path, scale)  # replaced in place, not appended twice
    text = path.read_text(encoding="utf-8")
    assert text.count(SCALE_START) == 1 and text.count(SCALE_END) == 1
    assert text.startswith("# Benchmarks\n\nintro\n")
    assert "## Graph side at scale (stand-in model)" in text
