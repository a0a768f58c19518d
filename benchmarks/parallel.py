"""The build through the real jobs with 1 and with N parallel file partitions.

Each build is `nara_kg.app.launch.build` (what `nara-kg build --parallel N` runs) into a fresh
Dagster instance whose pools admit N users of the embedding model at once, each model taking
1/N of the cores, on a wiped graph and an empty work folder. It reports the wall time and the
share of it that is not the embedding model (its encode time as the file stages measured it).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.common import Log


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def instance_yaml(parallel: int) -> str:
    return (
        "telemetry:\n  enabled: false\n"
        "run_monitoring:\n  enabled: true\n"
        f"concurrency:\n  pools:\n    default_limit: {parallel}\n"
    )


def measure_parallel_build(
    data_dir: Path, scratch: Path, parallel: int, wipe: Callable[[], None], log: Log
) -> dict[str, Any]:
    import dagster as dg

    from nara_kg.app.launch import build

    home = scratch / f"dagster-home-{parallel}"
    work = scratch / f"work-parallel-{parallel}"
    for folder in (home, work):
        shutil.rmtree(folder, ignore_errors=True)
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text(instance_yaml(parallel), encoding="utf-8")
    wipe()
    threads = max(1, (os.cpu_count() or 1) // parallel)
    env = {
        "DAGSTER_HOME": str(home),
        "NARA_KG_WORK_DIR": str(work),
        "NARA_KG_EMBEDDING_THREADS": str(threads),
    }
    with _environment(env), dg.DagsterInstance.get() as instance:
        started = time.perf_counter()
        outcome = build(data_dir, instance, parallel=parallel, log=log)
        wall = time.perf_counter() - started
    if not outcome.success:
        raise RuntimeError(f"the parallel={parallel} build failed: {outcome.failed_steps}")
    vectors = outcome.assets.get("chunk_embeddings", {})
    late = outcome.assets.get("text_embeddings", {})
    model_seconds = float(vectors.get("encoding_seconds", 0.0))
    shutil.rmtree(work, ignore_errors=True)
    return {
        "parallel": parallel,
        "threads_per_model": threads,
        "seconds": round(wall, 3),
        "runs": len(outcome.run_ids),
        "files": outcome.partitions.total,
        "encoded_chunks": vectors.get("encoded"),
        "stubs_encoded_late": late.get("encoded_here"),
        "model_encode_seconds": round(model_seconds, 3),
        #: Model seconds are summed over parallel processes, so with N > 1 this is a floor.
        "not_model_share": round(max(0.0, 1 - model_seconds / wall), 4) if wall else None,
    }


def measure_parallel_builds(
    data_dir: Path,
    scratch: Path,
    wipe: Callable[[], None],
    log: Log,
    parallel: tuple[int, ...] = (1, 2),
) -> dict[str, Any]:
    builds = {str(n): measure_parallel_build(data_dir, scratch, n, wipe, log) for n in parallel}
    one, many = builds[str(parallel[0])], builds[str(parallel[-1])]
    return {
        "builds": builds,
        "speedup": round(one["seconds"] / many["seconds"], 3) if many["seconds"] else None,
        "not_model_share": one["not_model_share"],
    }
