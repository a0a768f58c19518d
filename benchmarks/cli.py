"""What `nara-kg bench` runs: the suite, the scale mode and the incremental mode, with their
reports (the command's options live in nara_kg/cli/bench.py, which loads this by name)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from benchmarks.incremental import run_incremental
from benchmarks.incremental_report import markdown_incremental_report, update_incremental_section
from benchmarks.options import DEFAULT_BENCH_SCRATCH, DEFAULT_WARM_UP_RECORDS, SuiteOptions
from benchmarks.report import markdown_report, update_benchmarks_md
from benchmarks.scale import markdown_scale_report, run_scale_suite, update_scale_section
from benchmarks.suite import run_suite
from nara_kg.settings import Neo4jSettings


def run_bench(
    *,
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
    keep_last: bool,
    scaling_out: Path,
    quick: bool,
    records_is_default: bool,
) -> None:
    """`nara-kg bench` once its options are parsed (their help is in nara_kg/cli/bench.py)."""
    from nara_kg.settings import neo4j_home

    scratch = scratch or DEFAULT_BENCH_SCRATCH
    if warm_up_records is None:
        warm_up_records = DEFAULT_WARM_UP_RECORDS
    settings = Neo4jSettings.from_env()
    if settings.managed:
        from nara_kg.devserver import process as neo4j_server

        neo4j_server.start(settings, neo4j_home(), log=lambda m: click.echo(m, err=True))
    if quick:
        if records_is_default:
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
        _incremental(
            list(scale),
            options,
            settings,
            as_json,
            json_out,
            no_report,
            out,
            scaling_out,
            keep_last=keep_last,
        )
        return
    if scale:
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
    *,
    keep_last: bool,
) -> None:
    result = run_incremental(
        sizes,
        options.scratch,
        settings,
        seed=options.seed,
        timeout=options.child_timeout,
        keep_last=keep_last,
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
