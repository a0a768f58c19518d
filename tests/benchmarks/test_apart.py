"""The benchmark stays out of the product: the CLI loads it only when `nara-kg bench` runs, and
only from a source checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from benchmarks.options import DEFAULT_BENCH_SCRATCH, DEFAULT_WARM_UP_RECORDS
from nara_kg.cli import bench
from nara_kg.cli.main import main


def test_the_command_line_imports_no_benchmark_module() -> None:
    code = (
        "import sys, nara_kg.cli.main, nara_kg.cli.bench; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'benchmarks'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_bench_help_states_the_benchmarks_defaults() -> None:
    result = CliRunner().invoke(main, ["bench", "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"(default: {DEFAULT_BENCH_SCRATCH.relative_to(bench.PROJECT_ROOT)})" in text
    assert f"default: {DEFAULT_WARM_UP_RECORDS:,})" in text


def test_bench_outside_a_checkout_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(bench, "PROJECT_ROOT", tmp_path)
    with pytest.raises(click.UsageError, match="source checkout"):
        bench._make_benchmarks_importable()
