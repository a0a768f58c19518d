"""`nara-kg bench`: the benchmark suite (the `benchmarks` package) from the command line."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import click

from nara_kg.embedding.encoder import DEFAULT_BACKEND
from nara_kg.settings import PROJECT_ROOT


def _make_benchmarks_importable() -> None:
    """The benchmark is not part of the installed package: it runs from a checkout, whose root
    holds `benchmarks/` beside `nara_kg/`."""
    if not (PROJECT_ROOT / "benchmarks" / "__init__.py").is_file():
        raise click.UsageError(
            f"nara-kg bench runs from a source checkout ({PROJECT_ROOT} has no benchmarks/)"
        )
    if str(PROJECT_ROOT) not in sys.path:
        sys.path.insert(0, str(PROJECT_ROOT))


@click.command("bench")
@click.option("--records", default=20_000, show_default=True, help="Records to generate.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with every result.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=PROJECT_ROOT / "BENCHMARKS.md",
    show_default=True,
    help="Markdown report whose generated block is replaced with this run's results.",
)
@click.option("--no-report", is_flag=True, help="Do not touch the Markdown report.")
@click.option(
    "--json-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the JSON result here (default: <scratch>/results.json).",
)
@click.option(
    "--scratch",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the generated data and work directories go (default: var/bench).",
)
@click.option("--skip-memory", is_flag=True, help="Skip the second build at records/4.")
@click.option("--memory-records", type=int, default=None, help="Records of the memory build.")
@click.option(
    "--warm-up-records",
    type=int,
    default=None,
    help="Records of an untimed build that warms Neo4j first, when there is no memory build "
    "(0 = none; default: 1,000).",
)
@click.option("--skip-onnx", is_flag=True, help="Skip the ONNX Runtime comparison.")
@click.option(
    "--skip-real-questions",
    is_flag=True,
    help="Skip building the real records and measuring the labelled real-record questions.",
)
@click.option(
    "--onnx-sample",
    default=2_000,
    show_default=True,
    help="Texts compared between ONNX and PyTorch (0 = all chunk texts).",
)
@click.option(
    "--write-sample",
    default=10_000,
    show_default=True,
    help="Chunk nodes written each way in the write comparison (0 = all chunks of the build).",
)
@click.option("--queries", default=100, show_default=True, help="Local search queries.")
@click.option(
    "--backend",
    default=DEFAULT_BACKEND,
    show_default=True,
    help="Embedding backend: onnx, torch or onnx-int8.",
)
@click.option(
    "--device", default="cpu", show_default=True, help="Where the model runs: cpu, cuda, ..."
)
@click.option("--profile", is_flag=True, help="cProfile the full build; top functions reported.")
@click.option(
    "--skip-parallel", is_flag=True, help="Skip the builds with 1 and 2 parallel partitions."
)
@click.option(
    "--parallel-records",
    type=int,
    default=None,
    help="Records of the parallel-partition builds (default: min(records, 2000)).",
)
@click.option(
    "--scale",
    "scale",
    type=int,
    multiple=True,
    help="Scale mode (repeatable): build N generated records with the stand-in model (hashed "
    "vectors, no model) and report per-step time, memory and growth with N under `scale`; "
    "the rest of the suite is skipped.",
)
@click.option(
    "--incremental",
    is_flag=True,
    help="With --scale: at each N, `nara-kg build --full`, a build with nothing changed, "
    "one after 0.1% of the records of one file changed and one after 0.1% of one description "
    "file's records got another file's subject, so that Leiden runs again (stand-in model); "
    "per-step and orchestration time, peak RSS, records touched, what graph_communities read "
    "back, growth between N's (see "
    "benchmarks/incremental.py). The report goes to the section 'Incremental builds at scale' "
    "of --out and --scaling-out.",
)
@click.option(
    "--keep-last",
    is_flag=True,
    help="With --incremental: keep the largest N's export, work directory, Dagster home and "
    "database after its builds (under <scratch>/incremental/N), for a follow-up build.",
)
@click.option(
    "--scaling-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=PROJECT_ROOT / "SCALING.md",
    show_default=True,
    help="With --incremental: the second Markdown file whose incremental section is replaced.",
)
@click.option(
    "--quick",
    is_flag=True,
    help="Smoke run: 400 records (unless --records is given), no memory build, small samples.",
)
def bench_command(**params: Any) -> None:
    """Build a generated dataset and measure the build, embedding, writes, incremental
    rebuild, queries and memory side by side (see BENCHMARKS.md).

    Needs Neo4j (the local server is started when NEO4J_URI is unset); the benchmark owns that
    database while it runs: it is wiped before each full build and at the end. Runs from a
    source checkout: the `benchmarks` package is not installed with nara-kg.
    """
    _make_benchmarks_importable()
    source = click.get_current_context().get_parameter_source("records")
    # Loaded by name: the benchmark is not part of the package, which must never import it
    # (the import contract in pyproject.toml).
    runner = importlib.import_module("benchmarks.cli")
    runner.run_bench(records_is_default=source is not None and source.name == "DEFAULT", **params)
