"""`nara-kg bench`: the benchmark suite (the `benchmarks` package) from the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from nara_kg.embedding.encoder import DEFAULT_BACKEND
from nara_kg.settings import PROJECT_ROOT

if TYPE_CHECKING:
    from benchmarks.options import SuiteOptions
    from nara_kg.settings import Neo4jSettings


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
    help="With --scale: at each N, `nara-kg build --full`, a build with nothing changed and "
    "one after 0.1% of the records of one file changed (stand-in model); per-step and "
    "orchestration time, peak RSS, records touched, growth between N's (see "
    "benchmarks/incremental.py). The report goes to the section 'Incremental builds at scale' "
    "of --out and --scaling-out.",
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
def bench_command(
    records: int,
    as_json: bool,
    out: Path,
    no_report: bool,
    json_out: Path | None,
    scratch: Path | None,
    skip_memory: bool,
    memory_records: int | None,
    warm_up_records: int | None,
    skip_onnx: bool,
    skip_real_questions: bool,
    onnx_sample: int,
    write_sample: int,
    queries: int,
    backend: str,
    device: str,
    profile: bool,
    skip_parallel: bool,
    parallel_records: int | None,
    scale: tuple[int, ...],
    incremental: bool,
    scaling_out: Path,
    quick: bool,
) -> None:
    """Build a generated dataset and measure the build, embedding, writes, incremental
    rebuild, queries and memory side by side (see BENCHMARKS.md).

    Needs Neo4j (the local server is started when NEO4J_URI is unset); the benchmark owns that
    database while it runs: it is wiped before each full build and at the end. Runs from a
    source checkout: the `benchmarks` package is not installed with nara-kg.
    """
    from nara_kg.settings import Neo4jSettings, neo4j_home

    _make_benchmarks_importable()
    from benchmarks.options import DEFAULT_BENCH_SCRATCH, DEFAULT_WARM_UP_RECORDS, SuiteOptions
    from benchmarks.report import markdown_report, update_benchmarks_md
    from benchmarks.suite import run_suite

    scratch = scratch or DEFAULT_BENCH_SCRATCH
    if warm_up_records is None:
        warm_up_records = DEFAULT_WARM_UP_RECORDS
    settings = Neo4jSettings.from_env()
    if settings.managed:
        from nara_kg.devserver import process as neo4j_server

        neo4j_server.start(settings, neo4j_home(), log=lambda m: click.echo(m, err=True))
    if quick:
        source = click.get_current_context().get_parameter_source("records")
        if source is not None and source.name == "DEFAULT":
            records = 400
        skip_memory = True
        warm_up_records = 0
        onnx_sample = min(onnx_sample, 300)
        write_sample = min(write_sample or 500, 500)
        queries = min(queries, 30)
    options = SuiteOptions(
        records=records,
        scratch=scratch,
        memory=not skip_memory,
        memory_records=memory_records,
        warm_up_records=warm_up_records,
        onnx=not skip_onnx,
        real_questions=not skip_real_questions,
        onnx_sample=onnx_sample,
        write_sample=write_sample,
        local_queries=queries,
        backend=backend,
        device=device,
        profile=profile,
        parallel=not skip_parallel,
        parallel_records=parallel_records,
    )
    log = lambda m: click.echo(m, err=True)  # noqa: E731
    if incremental:
        if not scale:
            raise click.UsageError("--incremental needs at least one --scale N")
        _incremental(list(scale), options, settings, as_json, json_out, no_report, out, scaling_out)
        return
    if scale:
        from benchmarks.scale import markdown_scale_report, run_scale_suite, update_scale_section

        results = run_scale_suite(list(scale), options, settings, log=log)
    else:
        results = run_suite(options, settings, log=log)
    target = json_out or scratch / ("scale-results.json" if scale else "results.json")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(results, indent=2, default=str), encoding="utf-8")
    if not no_report:
        if scale:
            update_scale_section(out, results["scale"])
        else:
            update_benchmarks_md(out, results)
        click.echo(f"report: {out}", err=True)
    if as_json:
        click.echo(json.dumps(results, indent=2, default=str))
        return
    click.echo(markdown_scale_report(results["scale"]) if scale else markdown_report(results))


def _incremental(
    sizes: list[int],
    options: SuiteOptions,
    settings: Neo4jSettings,
    as_json: bool,
    json_out: Path | None,
    no_report: bool,
    out: Path,
    scaling_out: Path,
) -> None:
    from benchmarks.incremental import run_incremental
    from benchmarks.incremental_report import (
        markdown_incremental_report,
        update_incremental_section,
    )

    result = run_incremental(
        sizes,
        options.scratch,
        settings,
        seed=options.seed,
        timeout=options.child_timeout,
        log=lambda m: click.echo(m, err=True),
    )
    target = json_out or options.scratch / "incremental-results.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    if not no_report:
        for path in (out, scaling_out):
            update_incremental_section(path, result)
            click.echo(f"report: {path}", err=True)
    click.echo(
        json.dumps(result, indent=2, default=str)
        if as_json
        else markdown_incremental_report(result)
    )
