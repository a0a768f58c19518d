"""The benchmark suite: every measurement is a function; `run_suite` runs them side by side.

What is measured (see BENCHMARKS.md for the latest numbers and SCALING.md for what they mean):

1. the whole build (every asset of `graph_assets.ALL_ASSETS`, materialized in process the way
   `nara-kg build` does) on a generated dataset of N records: wall time per asset (from the run's
   STEP_START/STEP_SUCCESS events) and in total, records/s, peak RSS of the process;
2. embedding: the `text_embeddings` asset against plain `SentenceTransformer.encode` of the same
   chunk texts (same batch size, same process, right after the build), and the ONNX Runtime
   backend against PyTorch on the same texts (throughput ratio, minimum cosine);
3. Neo4j writes: the project's batched writers against the seed's way (one query and one
   transaction per node, an unindexed cartesian join for Includes) on the same sample;
4. an incremental rebuild after 1% of the records changed, as a fraction of the full build;
5. query latency: hybrid local search p50/p95, global search (extractive backend) p50/p95;
6. peak memory of a build at N/4 and at N, each in a fresh process.

Builds run in child processes (`python -m benchmarks.suite build ...`) so that each one's peak
RSS (`getrusage(RUSAGE_SELF).ru_maxrss`) is its own. The suite owns the database it is pointed
at: it wipes nodes, indexes and constraints before each full build and at the end.

The measurements live beside this module: `options` (what a run is asked for, the targets),
`data` (the generated export), `build` (one timed build, `child_build` in the child),
`embedding`, `writes`, `queries`, `api`, `parallel`, `sampling` (CPU and memory from /proc),
and `report` (the Markdown of BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from benchmarks.build import (
    build_in_subprocess,
    child_build,
    child_plain_encode,
    plain_encode_in_subprocess,
)
from benchmarks.common import Log, open_driver, quiet, rounded, wipe_database
from benchmarks.data import change_records, generate_dataset
from benchmarks.options import REQUIRED_KEYS, TARGETS, SuiteOptions
from benchmarks.queries import (
    global_questions,
    local_queries_with_warm_up,
    measure_global_search,
    measure_local_search,
)
from benchmarks.real_questions import measure_real_questions
from benchmarks.sampling import local_server_pid, snapshot, summed_cpu
from benchmarks.writes import measure_writes
from nara_kg.embedding.encoder import DEFAULT_BACKEND, DEFAULT_BATCH_SIZE
from nara_kg.embedding.standin import STANDIN_BACKEND
from nara_kg.settings import Neo4jSettings


def _environment(settings: Neo4jSettings, driver: Any) -> dict[str, Any]:
    import torch

    versions: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__}
    for package in ("dagster", "sentence_transformers", "onnxruntime", "neo4j"):
        with contextlib.suppress(Exception):
            versions[package] = __import__(package).__version__
    with contextlib.suppress(Exception):
        records, _, _ = driver.execute_query(
            "CALL dbms.components() YIELD name, versions RETURN name, versions[0] AS version"
        )
        versions["neo4j_server"] = {r["name"]: r["version"] for r in records}
    return {
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "platform": platform.platform(),
        "neo4j_uri": settings.uri,
        "versions": versions,
    }


def targets_report(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target with the measured value, whether it is met, and by how much it misses."""
    rows = []
    for key, target in TARGETS.items():
        value = results.get(key)
        row: dict[str, Any] = {
            "metric": key,
            "target": f"{'>=' if target['higher'] else '<='} {target['limit']}",
            "measured": value,
            "met": None,
            "miss": None,
        }
        if isinstance(value, int | float):
            met = value >= target["limit"] if target["higher"] else value <= target["limit"]
            row["met"] = met
            if not met:
                row["miss"] = (
                    f"{target['limit'] / value:.2f}x short"
                    if target["higher"] and value
                    else f"{value / target['limit']:.2f}x over"
                )
        rows.append(row)
    return rows


@contextlib.contextmanager
def _phase(timings: dict[str, Any], name: str, log: Log) -> Iterator[None]:
    """Time one phase, with the 1-minute load average before and after it (this machine may
    be shared: a load that changes between phases moves the ratios between them)."""
    log(f"-- {name}")
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    try:
        yield
    finally:
        seconds = round(time.perf_counter() - started, 1)
        load_after = os.getloadavg()[0]
        timings[name] = {
            "seconds": seconds,
            "load_before": round(load_before, 2),
            "load_after": round(load_after, 2),
        }
        log(f"-- {name}: {seconds:.1f}s (load {load_before:.2f} -> {load_after:.2f})")


def _throwaway_build(
    settings: Neo4jSettings,
    scratch: Path,
    name: str,
    records: int,
    *,
    opts: SuiteOptions,
    log: Log,
) -> dict[str, Any]:
    """A build of `records` generated records from an empty graph, in a child process, whose
    data and work folders are removed afterwards (the memory comparison's smaller build, and the
    untimed build that warms Neo4j up): its result, for what the caller measures."""
    data, work = scratch / f"data-{name}", scratch / f"work-{name}"
    generate_dataset(data, records, opts.seed)
    try:
        return build_in_subprocess(settings, data, work, wipe=True, opts=opts, log=log)
    finally:
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def run_suite(opts: SuiteOptions, settings: Neo4jSettings, log: Log = quiet) -> dict[str, Any]:
    """Every measurement, side by side, in one run; returns one JSON-able object."""
    from nara_kg.embedding.encoder import Embedder

    scratch = opts.scratch.resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    phases: dict[str, Any] = {}
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    load_before = os.getloadavg()
    driver = open_driver(settings)
    results: dict[str, Any] = {"records": opts.records}
    try:
        environment = _environment(settings, driver)
        data_dir, work_dir = scratch / "data", scratch / "work"
        memory_records = opts.memory_records or max(40, opts.records // 4)

        memory_small: dict[str, Any] | None = None
        if opts.memory:
            with _phase(phases, f"memory build at {memory_records} records", log):
                memory_small = _throwaway_build(
                    settings, scratch, "small", memory_records, opts=opts, log=log
                )

        if not opts.memory and opts.warm_up_records > 0:
            with _phase(phases, f"Neo4j warm-up build at {opts.warm_up_records} records", log):
                # Neo4j is what it warms: the stand-in model writes the same graph, with
                # vectors of the same dimension, without a minute of encoding.
                _throwaway_build(
                    settings,
                    scratch,
                    "warm-up",
                    opts.warm_up_records,
                    opts=replace(opts, backend=STANDIN_BACKEND),
                    log=log,
                )

        with _phase(phases, f"generate {opts.records} records", log):
            dataset = generate_dataset(data_dir, opts.records, opts.seed)
        results["records"] = dataset["records"]
        results["dataset"] = dataset

        with _phase(phases, "plain encode before the build", log):
            plain_before = plain_encode_in_subprocess(
                settings, data_dir, scratch / "plain-texts", opts=opts, log=log
            )
        with _phase(phases, "full build + embedding comparison", log):
            full = build_in_subprocess(
                settings,
                data_dir,
                work_dir,
                wipe=True,
                embedding_check=True,
                opts=opts,
                profile_path=scratch / "build.prof" if opts.profile else None,
                log=log,
            )
        embedding = bracketed_plain_encode(plain_before, full.pop("embedding"))
        build_seconds = full["seconds"]
        chunks_meta = full["asset_metadata"].get("chunks", {})
        text_meta = full["asset_metadata"].get("text_embeddings", {})
        vector_meta = full["asset_metadata"].get("chunk_embeddings", {})
        # The model runs in the per-file chunk_embeddings stage and, for chosen stubs, in
        # text_embeddings: the embedding steps are both.
        asset_embed_s = (vector_meta.get("seconds") or 0.0) + (
            full["per_asset_seconds"].get("text_embeddings") or 0.0
        )
        results.update(
            {
                "build_seconds": build_seconds,
                "records_per_second": rounded(dataset["records"] / build_seconds, 2),
                # The graph's chunks (one copy per naId), not every chunk row of every file.
                "chunks": full["asset_metadata"].get("graph_nodes", {}).get("chunks_desired"),
                "chunk_rows": chunks_meta.get("chunks"),
                "embedded_chunks": embedding["texts"],
                "per_asset_seconds": full["per_asset_seconds"],
                "outside_steps_seconds": full["outside_steps_seconds"],
                "embedding_seconds": embedding["seconds"],
                "embedding_seconds_before_build": embedding["seconds_before_build"],
                "embedding_seconds_after_build": embedding["seconds_after_build"],
                "build_over_embedding_after_ratio": rounded(
                    build_seconds / embedding["seconds_after_build"]
                ),
                "embedding_tokens": embedding["tokens"],
                "embedding_chunks_per_second": embedding["chunks_per_second"],
                "build_over_embedding_ratio": rounded(build_seconds / embedding["seconds"]),
                "text_embeddings_asset_seconds": asset_embed_s,
                "text_embeddings_chunks_per_second": rounded(
                    (vector_meta.get("encoded", 0) + text_meta.get("encoded_here", 0))
                    / asset_embed_s
                    if asset_embed_s
                    else None,
                    2,
                ),
                "text_embeddings_over_plain_ratio": rounded(
                    asset_embed_s / embedding["seconds"] if asset_embed_s else None
                ),
                "asset_metadata": full["asset_metadata"],
            }
        )
        mentions_meta = full["asset_metadata"].get("entity_mentions", {})
        mentions_s = full["per_asset_seconds"].get("entity_mentions")
        results["entity_mentions_seconds"] = mentions_s
        results["entity_mentions_embedding_share"] = rounded(
            mentions_s / embedding["seconds"] if mentions_s is not None else None, 4
        )
        results["entity_mentions_precision"] = mentions_meta.get("label_precision")
        results["entity_mentions_recall"] = mentions_meta.get("label_recall")
        model = full["model_time"]
        model_seconds = model["load_seconds"] + model["encode_seconds"]
        model_seconds += model["count_tokens_seconds"]
        results["build_model_time"] = model
        results["build_model_seconds"] = rounded(model_seconds)
        results["build_overhead_seconds"] = rounded(build_seconds - model_seconds)
        results["build_overhead_share"] = rounded(
            (build_seconds - model_seconds) / build_seconds, 4
        )
        #: Measured in the same process at the same time, so machine load that drifts between
        #: the build and the plain encode after it does not move this one.
        results["build_over_model_ratio"] = rounded(build_seconds / model_seconds)
        asset_encoding = (vector_meta.get("encoding_seconds") or 0.0) + (
            text_meta.get("encoding_seconds") or 0.0
        )
        if asset_embed_s and asset_encoding:
            results["text_embeddings_overhead_share"] = rounded(
                1 - asset_encoding / asset_embed_s, 4
            )
        build_cpu = full.get("resources") or {}
        plain_cpu = embedding.get("cpu") or {}
        results["contention"] = {
            "build": build_cpu or None,
            "text_embeddings_step": (full.get("per_asset_resources") or {}).get("text_embeddings"),
            "plain_encode": plain_cpu or None,
        }
        results["per_asset_resources"] = full.get("per_asset_resources")
        if build_cpu.get("process_cpu_seconds") and plain_cpu.get("process_cpu_seconds"):
            # CPU seconds do not grow when other processes compete for the cores (wall time
            # does): the build's work (this process + Neo4j) over the plain encode's work.
            work = build_cpu["process_cpu_seconds"] + (build_cpu.get("neo4j_cpu_seconds") or 0)
            results["build_over_embedding_cpu_ratio"] = rounded(
                work / plain_cpu["process_cpu_seconds"]
            )
        onnx = embedding.get("onnx") or {}
        results["onnx"] = onnx or None
        results["onnx_vs_torch_ratio"] = onnx.get("ratio")
        results["onnx_min_cosine"] = onnx.get("min_cosine")
        if "profile_top" in full:
            results["profile_top"] = full["profile_top"]

        with _phase(phases, "incremental build after a 1% change", log):
            change = change_records(data_dir, opts.changed_share, opts.seed)
            incremental = build_in_subprocess(
                settings, data_dir, work_dir, wipe=False, incremental=True, opts=opts, log=log
            )
        results["incremental"] = {
            **change,
            "seconds": incremental["seconds"],
            "per_asset_seconds": incremental["per_asset_seconds"],
            "embedded": incremental["asset_metadata"].get("text_embeddings", {}).get("embedded"),
            "nodes_written": incremental["asset_metadata"]
            .get("graph_nodes", {})
            .get("nodes_written"),
            "files_parsed": incremental["asset_metadata"]
            .get("parsed_records", {})
            .get("files_parsed"),
        }
        results["incremental_fraction"] = rounded(incremental["seconds"] / build_seconds, 4)
        # The same build takes 8.2-9.4 s in a quiet child process and up to 16 s on a busy
        # machine: what the machine and Neo4j did meanwhile says which it was.
        results.setdefault("contention", {})["incremental"] = incremental.get("resources")

        with _phase(phases, "queries", log):
            embedder = Embedder(backend=opts.backend, device=opts.device)
            embedder.encode(["warm-up"])
            queries, warm_up = local_queries_with_warm_up(
                data_dir, work_dir, opts.local_queries, opts.seed
            )
            server_pid = local_server_pid()
            local = measure_local_search(
                driver,
                settings.database,
                embedder,
                queries,
                warm_up=warm_up,
                probe=lambda: snapshot(server_pid),
            )
            global_ = measure_global_search(
                driver,
                settings.database,
                embedder,
                global_questions(data_dir, opts.global_queries),
            )
        results["local_search"] = local
        results["local_search_p50_ms"] = local["p50_ms"]
        results["local_search_p95_ms"] = local["p95_ms"]
        results["global_search"] = global_
        results["global_search_p50_ms"] = global_["p50_ms"]
        results["global_search_p95_ms"] = global_["p95_ms"]

        with _phase(phases, "API latency (search and ask over HTTP)", log):
            from benchmarks.api import measure_api, running_api

            with running_api() as base_url:
                api = measure_api(base_url, queries)
        results["api"] = api
        for key in ("search_p50_ms", "search_p95_ms", "ask_p50_ms", "ask_p95_ms"):
            results[f"api_{key}"] = api[key]

        if opts.parallel:
            from benchmarks.parallel import measure_parallel_builds

            parallel_records = opts.parallel_records or min(opts.records, 2_000)
            with _phase(
                phases, f"builds with 1 and 2 parallel partitions at {parallel_records}", log
            ):
                parallel_data = scratch / "data-parallel"
                generate_dataset(parallel_data, parallel_records, opts.seed)
                parallel = measure_parallel_builds(
                    parallel_data,
                    scratch,
                    lambda: wipe_database(driver, settings.database),
                    log,
                )
                shutil.rmtree(parallel_data, ignore_errors=True)
            results["parallel"] = {"records": parallel_records, **parallel}
            results["parallel_1_seconds"] = parallel["builds"]["1"]["seconds"]
            results["parallel_2_seconds"] = parallel["builds"]["2"]["seconds"]
            results["build_not_model_share"] = parallel["not_model_share"]

        with _phase(phases, "batched vs seed writes", log):
            writes = measure_writes(driver, settings.database, work_dir, opts.write_sample, log)
        results["writes"] = writes
        results["batched_vs_seed_write_ratio"] = writes["ratio"]

        if opts.real_questions:
            with _phase(phases, "real-record questions", log):
                results["real_questions"] = measure_real_questions(
                    settings, scratch, opts=opts, log=log
                )

        results["peak_rss_mb"] = full["peak_rss_mb"]
        if memory_small is not None:
            results["memory"] = {
                "small_records": memory_records,
                "small_peak_rss_mb": memory_small["peak_rss_mb"],
                "small_build_seconds": memory_small["seconds"],
                "large_records": dataset["records"],
                "large_peak_rss_mb": full["peak_rss_mb"],
                "incremental_peak_rss_mb": incremental["peak_rss_mb"],
            }
            results["peak_memory_growth_ratio"] = rounded(
                full["peak_rss_mb"] / memory_small["peak_rss_mb"]
            )
        else:
            results["memory"] = None
            results["peak_memory_growth_ratio"] = None
    finally:
        with contextlib.suppress(Exception):
            wipe_database(driver, settings.database)
        driver.close()
    for key in REQUIRED_KEYS:
        results.setdefault(key, None)
    results["targets"] = targets_report(results)
    results["environment"] = {
        **environment,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }
    results["phases_seconds"] = phases
    results["options"] = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(opts).items()}
    results["started_at"] = started_at
    return results


def bracketed_plain_encode(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The plain encode of the build's texts as the mean of one run just before the build and
    one just after it: the machine's speed drifts by 10-25% within minutes here, and the build
    sits between them. Both must have encoded the same texts."""
    if before.get("texts_digest") != after.get("texts_digest"):
        raise RuntimeError(
            "the plain encodes before and after the build encoded different texts "
            f"({before.get('texts')} against {after.get('texts')})"
        )
    seconds = (before["seconds"] + after["seconds"]) / 2
    return {
        **after,
        "seconds": round(seconds, 3),
        "seconds_before_build": before["seconds"],
        "seconds_after_build": after["seconds"],
        "chunks_per_second": round(after["texts"] / seconds, 2) if seconds else None,
        "cpu": summed_cpu([before.get("cpu"), after.get("cpu")], mean=True),
    }


# The child's entry point: `build.build_in_subprocess` runs `python -m benchmarks.suite build`.
def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.suite")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="one timed build (used by the suite, per process)")
    plain = sub.add_parser("plain-encode", help="the build's texts encoded before the build")
    for child in (build, plain):
        child.add_argument("--data", required=True)
        child.add_argument("--work", required=True)
        child.add_argument("--out", required=True)
        child.add_argument("--backend", default=DEFAULT_BACKEND)
        child.add_argument("--device", default="cpu")
        child.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    build.add_argument("--onnx-sample", type=int, default=2_000)
    build.add_argument("--seed", type=int, default=7)
    build.add_argument("--wipe", action="store_true")
    build.add_argument("--incremental", action="store_true", help="the kg_incremental job")
    build.add_argument("--embedding-check", action="store_true")
    build.add_argument("--no-onnx", action="store_true")
    build.add_argument("--profile", default=None)
    args = parser.parse_args(argv)
    result = child_plain_encode(args) if args.command == "plain-encode" else child_build(args)
    Path(args.out).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
