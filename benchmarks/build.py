"""One timed build: the assets materialized in process, in a child process of its own so
that its peak RSS is its own (`python -m benchmarks.suite build ...` runs `child_build`)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Log, open_driver, peak_rss_mb, quiet, wipe_database
from benchmarks.embedding import (
    chunk_texts,
    chunk_texts_before_build,
    instrument_model_time,
    measure_embedding,
)
from benchmarks.options import SuiteOptions
from benchmarks.sampling import Sampler, local_server_pid, snapshot
from nara_kg.embedding.encoder import DEFAULT_BACKEND, DEFAULT_BATCH_SIZE
from nara_kg.settings import PROJECT_ROOT, Neo4jSettings


def _resources(
    settings: Neo4jSettings,
    data_dir: Path,
    work_dir: Path,
    backend: str,
    batch_size: int,
    device: str = "cpu",
) -> dict[str, Any]:
    from resources import build_resources

    return build_resources(
        neo4j={
            "uri": settings.uri,
            "username": settings.username,
            "password": settings.password,
            "database": settings.database,
        },
        embedding_model={"backend": backend, "batch_size": batch_size, "device": device},
        paths={"data_dir": str(data_dir), "work_dir": str(work_dir)},
    )


def step_windows(instance: Any, run_id: str) -> dict[str, tuple[float, float]]:
    """(start, end) wall-clock time of every step of a run, from its STEP_START / STEP_SUCCESS
    events."""
    started: dict[str, float] = {}
    windows: dict[str, tuple[float, float]] = {}
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is None or entry.step_key is None:
            continue
        if event.event_type_value == "STEP_START":
            started[entry.step_key] = entry.timestamp
        elif event.event_type_value == "STEP_SUCCESS" and entry.step_key in started:
            windows[entry.step_key] = (started[entry.step_key], entry.timestamp)
    return windows


def materialize_all(
    settings: Neo4jSettings,
    data_dir: Path,
    work_dir: Path,
    *,
    backend: str = DEFAULT_BACKEND,
    batch_size: int = DEFAULT_BATCH_SIZE,
    incremental: bool = False,
    sampler: Sampler | None = None,
    device: str = "cpu",
) -> dict[str, Any]:
    """The assets of the project's full-rebuild job or, with `incremental`, of its incremental
    job (`jobs.kg_incremental`: every asset, the retrieval evaluation included, skipping what
    did not change), in process, timed per step and in total."""
    import dagster as dg

    from graph_assets import ALL_ASSETS
    from graph_assets.common import plain_metadata

    selection = None
    if incremental:
        from jobs import kg_incremental

        selection = kg_incremental.selection
    instance = dg.DagsterInstance.ephemeral()
    started = time.perf_counter()
    started_at = time.time()
    result = dg.materialize(
        ALL_ASSETS,
        resources=_resources(settings, data_dir, work_dir, backend, batch_size, device),
        instance=instance,
        raise_on_error=False,
        selection=selection,
    )
    wall = time.perf_counter() - started
    ended_at = time.time()
    if not result.success:
        failures = [event.message for event in result.all_events if event.is_failure]
        raise RuntimeError(f"the benchmark build failed: {failures}")
    windows = step_windows(instance, result.run_id)
    per_step = {step: round(end - start, 3) for step, (start, end) in windows.items()}
    metadata: dict[str, dict[str, Any]] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        values = plain_metadata(materialization.metadata)
        if "seconds" in values:  # the run's result, not a per-file record
            metadata[materialization.asset_key.to_user_string()] = values
    scalars = {
        asset: {
            k: v
            for k, v in values.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }
        for asset, values in metadata.items()
    }
    out: dict[str, Any] = {
        "seconds": round(wall, 3),
        "per_asset_seconds": dict(sorted(per_step.items(), key=lambda kv: -kv[1])),
        "outside_steps_seconds": round(wall - sum(per_step.values()), 3),
        "asset_metadata": scalars,
    }
    if sampler is not None and sampler.samples:
        out["resources"] = sampler.window(started_at, ended_at)
        out["per_asset_resources"] = {
            step: sampler.window(start, end) for step, (start, end) in windows.items()
        }
    return out


def _profile_rows(stats_path: Path, limit: int = 30) -> list[dict[str, Any]]:
    import pstats

    stats = pstats.Stats(str(stats_path))
    rows = []
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    for (filename, line, name), (_, calls, tottime, cumtime, _) in raw.items():
        short = filename.replace(str(PROJECT_ROOT) + "/", "")
        short = short.split("site-packages/", 1)[-1]
        rows.append(
            {
                "function": f"{short}:{line}({name})",
                "calls": calls,
                "tottime": round(tottime, 3),
                "cumtime": round(cumtime, 3),
            }
        )
    rows.sort(key=lambda r: -r["tottime"])
    return rows[:limit]


def child_build(args: argparse.Namespace) -> dict[str, Any]:
    """The body of one child process: (wipe,) build, peak RSS, then optional embedding checks."""
    settings = Neo4jSettings.from_env()
    data_dir, work_dir = Path(args.data), Path(args.work)
    if args.wipe:
        driver = open_driver(settings)
        with driver:
            wipe_database(driver, settings.database)
        if work_dir.exists():
            shutil.rmtree(work_dir)
    model_time = instrument_model_time()
    server_pid = local_server_pid()
    sampler = Sampler(server_pid)
    sampler.start()
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    try:
        build = materialize_all(
            settings,
            data_dir,
            work_dir,
            backend=args.backend,
            batch_size=args.batch_size,
            incremental=args.incremental,
            sampler=sampler,
            device=args.device,
        )
    finally:
        sampler.stop()
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
        build["profile_top"] = _profile_rows(Path(args.profile))
    build["peak_rss_mb"] = round(peak_rss_mb(), 1)
    build["model_time"] = {
        k: round(v, 3) if isinstance(v, float) else v for k, v in model_time.items()
    }
    if args.embedding_check:
        build["embedding"] = measure_embedding(
            chunk_texts(work_dir),
            backend=args.backend,
            device=args.device,
            batch_size=args.batch_size,
            onnx=not args.no_onnx,
            onnx_sample=args.onnx_sample,
            seed=args.seed,
            log=lambda m: print(m, file=sys.stderr, flush=True),
            probe=lambda: snapshot(server_pid),
        )
    return build


def child_plain_encode(args: argparse.Namespace) -> dict[str, Any]:
    """The body of the child that encodes a build's texts before the build (`--embedding-check`
    encodes them again after it): chunked in a scratch folder, then removed."""
    data_dir, scratch = Path(args.data), Path(args.work)
    if scratch.exists():
        shutil.rmtree(scratch)
    try:
        texts = chunk_texts_before_build(
            data_dir, scratch, backend=args.backend, device=args.device
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    server_pid = local_server_pid()
    return measure_embedding(
        texts,
        backend=args.backend,
        device=args.device,
        batch_size=args.batch_size,
        onnx=False,
        log=lambda m: print(m, file=sys.stderr, flush=True),
        probe=lambda: snapshot(server_pid),
    )


def plain_encode_in_subprocess(
    settings: Neo4jSettings,
    data_dir: Path,
    scratch: Path,
    *,
    opts: SuiteOptions | None = None,
    log: Log = quiet,
) -> dict[str, Any]:
    """`child_plain_encode` in a fresh Python process, as the builds run."""
    opts = opts or SuiteOptions()
    result_path = scratch.parent / f"{scratch.name}.result.json"
    result_path.unlink(missing_ok=True)
    command = _child_command("plain-encode", data_dir, scratch, result_path, opts)
    result = _run_child(command, settings, scratch, result_path, opts)
    log(f"plain encode of {result['texts']} texts: {result['seconds']:.1f}s")
    return result


def _child_command(
    subcommand: str, data_dir: Path, work_dir: Path, result_path: Path, opts: SuiteOptions
) -> list[str]:
    """`python -m benchmarks.suite <subcommand>` with the options every child takes."""
    return [
        sys.executable,
        "-m",
        "benchmarks.suite",
        subcommand,
        "--data",
        str(data_dir),
        "--work",
        str(work_dir),
        "--out",
        str(result_path),
        "--backend",
        opts.backend,
        "--device",
        opts.device,
        "--batch-size",
        str(opts.batch_size),
    ]


def _run_child(
    command: list[str],
    settings: Neo4jSettings,
    work_dir: Path,
    result_path: Path,
    opts: SuiteOptions,
) -> dict[str, Any]:
    env = {
        **os.environ,
        "NEO4J_URI": settings.uri,
        "NEO4J_USERNAME": settings.username,
        "NEO4J_PASSWORD": settings.password,
        "NEO4J_DATABASE": settings.database,
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(PROJECT_ROOT), os.environ.get("PYTHONPATH", "")) if p
        ),
        "DAGSTER_HOME": str(work_dir.parent / "dagster_home"),
    }
    Path(env["DAGSTER_HOME"]).mkdir(parents=True, exist_ok=True)
    log_path = work_dir.parent / f"{work_dir.name}.log"
    started = time.perf_counter()
    with log_path.open("w", encoding="utf-8") as log_file:
        completed = subprocess.run(
            command,
            cwd=PROJECT_ROOT,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            timeout=opts.child_timeout,
            check=False,
        )
    if completed.returncode != 0 or not result_path.exists():
        tail = log_path.read_text(encoding="utf-8", errors="replace")[-4000:]
        raise RuntimeError(f"benchmark child exited with {completed.returncode}:\n{tail}")
    result: dict[str, Any] = json.loads(result_path.read_text(encoding="utf-8"))
    result["process_seconds"] = round(time.perf_counter() - started, 3)
    return result


def build_in_subprocess(
    settings: Neo4jSettings,
    data_dir: Path,
    work_dir: Path,
    *,
    wipe: bool,
    incremental: bool = False,
    embedding_check: bool = False,
    opts: SuiteOptions | None = None,
    profile_path: Path | None = None,
    log: Log = quiet,
) -> dict[str, Any]:
    """One build in a fresh Python process; returns what `child_build` measured."""
    opts = opts or SuiteOptions()
    result_path = work_dir.parent / f"{work_dir.name}.result.json"
    result_path.unlink(missing_ok=True)
    command = _child_command("build", data_dir, work_dir, result_path, opts)
    command += ["--onnx-sample", str(opts.onnx_sample), "--seed", str(opts.seed)]
    if wipe:
        command.append("--wipe")
    if incremental:
        command.append("--incremental")
    if embedding_check:
        command.append("--embedding-check")
    if not opts.onnx:
        command.append("--no-onnx")
    if profile_path is not None:
        command += ["--profile", str(profile_path)]
    result = _run_child(command, settings, work_dir, result_path, opts)
    log(f"build of {data_dir.name}: {result['seconds']:.1f}s, peak {result['peak_rss_mb']} MB")
    return result
