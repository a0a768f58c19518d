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
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from nara_kg.retrieval.evaluation import percentile
from nara_kg.settings import PROJECT_ROOT, Neo4jSettings

Log = Callable[[str], None]

#: The issue's targets. `higher` says which direction is good.
TARGETS: dict[str, dict[str, Any]] = {
    "build_over_embedding_ratio": {"limit": 1.3, "higher": False, "what": "build / embedding"},
    "batched_vs_seed_write_ratio": {"limit": 20.0, "higher": True, "what": "batched / seed"},
    "onnx_vs_torch_ratio": {"limit": 1.4, "higher": True, "what": "ONNX / PyTorch"},
    "onnx_min_cosine": {"limit": 0.999, "higher": True, "what": "min cosine"},
    "incremental_fraction": {"limit": 0.10, "higher": False, "what": "incremental / full"},
    "local_search_p95_ms": {"limit": 150.0, "higher": False, "what": "ms"},
    "peak_memory_growth_ratio": {"limit": 1.2, "higher": False, "what": "peak(4N) / peak(N)"},
}

REQUIRED_KEYS: tuple[str, ...] = (
    "records",
    "build_seconds",
    "embedding_seconds",
    "build_over_embedding_ratio",
    "batched_vs_seed_write_ratio",
    "onnx_vs_torch_ratio",
    "onnx_min_cosine",
    "incremental_fraction",
    "local_search_p95_ms",
    "global_search_p95_ms",
    "peak_rss_mb",
    "peak_memory_growth_ratio",
    "parallel_1_seconds",
    "parallel_2_seconds",
    "build_not_model_share",
    "api_search_p95_ms",
    "api_ask_p95_ms",
)

SEED_LABEL = "SeedBenchChunk"
SEED_INCLUDES = "SeedBenchIncludes"
#: Theme questions for global search besides those of the generated question file.
GLOBAL_QUESTIONS: tuple[str, ...] = (
    "What are the main themes of the records in this archive?",
    "Which government activities are documented most often?",
    "Give an overview of the collections and what they contain.",
    "What kinds of records describe land and agriculture?",
    "Summarize the records about military service across the collection.",
    "What are the recurring topics in the correspondence files?",
    "What sorts of photographs are held across the record groups?",
    "Which regions and towns appear most across the records?",
    "What kinds of case files are in this archive?",
    "Give an overview of the people and organizations that created these records.",
)


def _quiet(_: str) -> None:
    pass


@dataclass
class SuiteOptions:
    records: int = 20_000
    #: Scratch space for the generated data and the work directories (wiped per run).
    scratch: Path = field(default_factory=lambda: PROJECT_ROOT / "var" / "bench")
    #: Build at `memory_records` (default records // 4) too, to compare peak memory.
    memory: bool = True
    memory_records: int | None = None
    onnx: bool = True
    #: Texts the ONNX/PyTorch comparison runs on (a seeded random sample); 0 = all texts.
    onnx_sample: int = 2_000
    #: Chunk nodes written both ways in the write comparison (0 = every chunk of the build; the
    #: seed's unindexed per-node MERGE is quadratic, so all of 20,000 records takes ~15 min).
    write_sample: int = 10_000
    local_queries: int = 100
    global_queries: int = 10
    changed_share: float = 0.01
    batch_size: int = 64
    backend: str = "torch"
    #: `cpu`, `cuda`, ...: where the model runs (the EmbeddingModel resource's `device`).
    device: str = "cpu"
    seed: int = 7
    #: Also run the full build under cProfile and keep the 30 hottest functions.
    profile: bool = False
    #: Seconds one child build may take before it is stopped.
    child_timeout: float = 6 * 3600
    #: Build through the real jobs with 1 and 2 parallel file partitions (nara-kg build
    #: --parallel) on `parallel_records` records (default: min(records, 2000)).
    parallel: bool = True
    parallel_records: int | None = None


# =========================================================================== helpers
def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _r(value: float | None, digits: int = 3) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), digits)


def wipe_database(driver: Any, database: str) -> None:
    """Everything out of the benchmark's database: nodes, constraints, indexes (but the
    built-in token lookup indexes), and any GDS projection of the pipeline."""
    with driver.session(database=database) as session:
        session.run(
            "MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS"
        ).consume()
        for record in list(session.run("SHOW CONSTRAINTS YIELD name RETURN name")):
            session.run(f"DROP CONSTRAINT `{record['name']}` IF EXISTS").consume()
        indexes = session.run("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name")
        for record in list(indexes):
            session.run(f"DROP INDEX `{record['name']}` IF EXISTS").consume()


def open_driver(settings: Neo4jSettings) -> Any:
    from nara_kg.graph.connection import open_driver as _open

    driver = _open(settings)
    driver.verify_connectivity()
    return driver


# =========================================================================== CPU and memory
_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class Snapshot:
    """One reading of /proc: this process's RSS and CPU, the local Neo4j server's CPU, and the
    whole machine's busy and steal CPU (seconds since boot)."""

    wall: float
    rss_mb: float
    self_cpu: float
    server_cpu: float | None
    machine_busy: float
    machine_steal: float


def _process_cpu(pid: int | str) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def snapshot(server_pid: int | None = None) -> Snapshot | None:
    """None where /proc is not there (not Linux)."""
    try:
        cpu = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        user, nice, system, _idle, _iowait, irq, softirq, steal = cpu[:8]
        server = None
        if server_pid is not None:
            with contextlib.suppress(OSError, IndexError, ValueError):
                server = _process_cpu(server_pid)
        return Snapshot(
            wall=time.time(),
            rss_mb=_rss_mb(),
            self_cpu=_process_cpu("self"),
            server_cpu=server,
            machine_busy=(user + nice + system + irq + softirq) / _CLK_TCK,
            machine_steal=steal / _CLK_TCK,
        )
    except (OSError, IndexError, ValueError):
        return None


def cpu_between(before: Snapshot | None, after: Snapshot | None) -> dict[str, Any] | None:
    """Where the machine's CPU went between two snapshots: this process, the Neo4j server,
    everything else (other processes on a shared machine), and hypervisor steal."""
    if before is None or after is None:
        return None
    wall = after.wall - before.wall
    own = after.self_cpu - before.self_cpu
    server = (
        after.server_cpu - before.server_cpu
        if after.server_cpu is not None and before.server_cpu is not None
        else None
    )
    others = after.machine_busy - before.machine_busy - own - (server or 0.0)
    capacity = wall * (os.cpu_count() or 1)
    return {
        "wall_seconds": _r(wall),
        "process_cpu_seconds": _r(own),
        "neo4j_cpu_seconds": _r(server) if server is not None else None,
        "other_processes_cpu_seconds": _r(max(others, 0.0)),
        "other_processes_share": _r(max(others, 0.0) / capacity, 3) if capacity else None,
        "steal_seconds": _r(after.machine_steal - before.machine_steal),
    }


class Sampler(threading.Thread):
    """Snapshots every `interval` seconds in the background, so that peak RSS and CPU can be
    attributed to each step of a run afterwards (by the steps' event timestamps)."""

    def __init__(self, server_pid: int | None, interval: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.server_pid = server_pid
        self.interval = interval
        self.samples: list[Snapshot] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        while True:
            sample = snapshot(self.server_pid)
            if sample is not None:
                self.samples.append(sample)
            if self._stop_event.wait(self.interval):
                return

    def stop(self) -> None:
        self._stop_event.set()
        self.join()
        sample = snapshot(self.server_pid)
        if sample is not None:
            self.samples.append(sample)

    def window(self, start: float, end: float) -> dict[str, Any] | None:
        """Peak RSS and CPU split between wall-clock times `start` and `end`."""
        if not self.samples:
            return None
        before = max(
            (s for s in self.samples if s.wall <= start),
            default=self.samples[0],
            key=lambda s: s.wall,
        )
        after = min(
            (s for s in self.samples if s.wall >= end),
            default=self.samples[-1],
            key=lambda s: s.wall,
        )
        inside = [s.rss_mb for s in self.samples if before.wall <= s.wall <= after.wall]
        return {"peak_rss_mb": _r(max(inside), 1), **(cpu_between(before, after) or {})}


def local_server_pid() -> int | None:
    """The pid of the project's local Neo4j (NARA_KG_NEO4J_HOME), when it runs here."""
    with contextlib.suppress(Exception):
        from nara_kg.devserver.runtime import running_pid
        from nara_kg.settings import neo4j_home

        return running_pid(neo4j_home())
    return None


# =========================================================================== data
def generate_dataset(out_dir: Path, records: int, seed: int = 7) -> dict[str, Any]:
    """A fresh synthetic export of about `records` records of all ten types."""
    from nara_kg.demo import generate_demo_data

    if out_dir.exists():
        shutil.rmtree(out_dir)
    started = time.perf_counter()
    summary = generate_demo_data(out_dir, records=records, seed=seed)
    return {
        "records": sum(summary.records_by_type.values()),
        "records_by_type": summary.records_by_type,
        "files": len(summary.files),
        "bytes": sum(path.stat().st_size for path in summary.files),
        "questions": str(summary.questions_path),
        "seconds": round(time.perf_counter() - started, 3),
    }


_BODY_FIELD = {
    "person": "biographicalNote",
    "organization": "administrativeHistoryNote",
    "geographicPlaceName": "scopeNote",
    "specificRecordsType": "scopeNote",
    "topicalSubject": "scopeNote",
}


def change_records(data_dir: Path, share: float, seed: int = 7) -> dict[str, Any]:
    """Edit the body text of `share` of the records, picked at random across all files (the
    unfavourable case for file-level skipping: most files get touched)."""
    files = sorted(p for p in data_dir.rglob("*.jsonl") if p.name != "questions.jsonl")
    lines_of = {path: path.read_text(encoding="utf-8").splitlines() for path in files}
    positions = [(path, i) for path in files for i in range(len(lines_of[path]))]
    rng = random.Random(seed)
    count = max(1, round(len(positions) * share))
    chosen = rng.sample(positions, count)
    for number, (path, index) in enumerate(chosen):
        payload = json.loads(lines_of[path][index])
        record = payload["record"]
        body = _BODY_FIELD.get(record.get("authorityType", ""), "scopeAndContentNote")
        addition = f"Revised in benchmark update {number}: the description was re-examined."
        record[body] = f"{record.get(body) or ''}\n\n{addition}".strip()
        lines_of[path][index] = json.dumps(payload, ensure_ascii=False)
    touched = sorted({path for path, _ in chosen})
    for path in touched:
        path.write_text("\n".join(lines_of[path]) + "\n", encoding="utf-8")
    return {
        "records_changed": count,
        "records_total": len(positions),
        "share": share,
        "files_touched": len(touched),
        "files_total": len(files),
    }


# =========================================================================== one build
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
    backend: str = "torch",
    batch_size: int = 64,
    incremental: bool = False,
    sampler: Sampler | None = None,
    device: str = "cpu",
) -> dict[str, Any]:
    """The assets of the project's full-rebuild job (every asset) or, with `incremental`, of its
    incremental job (`jobs.kg_incremental`: all but the retrieval evaluation), in process,
    timed per step and in total."""
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


def _chunk_texts(work_dir: Path) -> list[str]:
    from nara_kg.ingest.layout import WorkLayout
    from nara_kg.ingest.stages import iter_chunks

    layout = WorkLayout(work_dir)
    return [row["text"] for row in iter_chunks(layout, ["text", "embed"]) if row["embed"]]


def measure_embedding(
    texts: list[str],
    *,
    model: str | None = None,
    backend: str = "torch",
    device: str = "cpu",
    batch_size: int = 64,
    onnx: bool = True,
    onnx_sample: int = 2_000,
    seed: int = 7,
    log: Log = _quiet,
    probe: Callable[[], Snapshot | None] = lambda: None,
) -> dict[str, Any]:
    """Plain `SentenceTransformer.encode` of `texts` (the embedding time alone), and the ONNX
    backend against PyTorch on a seeded sample of the same texts (0 = all of them)."""
    import numpy as np

    from nara_kg.embedding.encoder import DEFAULT_MODEL, Embedder

    model = model or DEFAULT_MODEL
    plain = Embedder(model=model, backend=backend, device=device, batch_size=batch_size)._load()

    def encode(st: Any, batch: list[str]) -> Any:
        return st.encode(
            batch,
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )

    encode(plain, texts[:8])  # warm-up: first-call allocations stay out of the timing
    rng = random.Random(seed)
    indices = list(range(len(texts)))
    if onnx and 0 < onnx_sample < len(texts):
        sample = sorted(rng.sample(indices, onnx_sample))
    else:
        sample = indices
    in_sample = set(sample)
    rest = [i for i in indices if i not in in_sample]
    log(f"plain encode of {len(texts)} texts ({backend}, batch {batch_size})")
    before = probe()
    started = time.perf_counter()
    sample_vectors = encode(plain, [texts[i] for i in sample])
    sample_seconds = time.perf_counter() - started
    started = time.perf_counter()
    if rest:
        encode(plain, [texts[i] for i in rest])
    rest_seconds = time.perf_counter() - started
    plain_cpu = cpu_between(before, probe())
    total = sample_seconds + rest_seconds
    tokens = sum(len(ids) for ids in plain.tokenizer([*texts], truncation=False)["input_ids"])
    out: dict[str, Any] = {
        "texts": len(texts),
        "tokens": tokens,
        "backend": backend,
        "batch_size": batch_size,
        "seconds": round(total, 3),
        "chunks_per_second": round(len(texts) / total, 2) if total else None,
        "cpu": plain_cpu,
        "onnx": None,
    }
    if not onnx:
        return out
    try:
        import onnxruntime  # noqa: F401
    except ImportError as error:
        out["onnx"] = {"skipped": f"onnxruntime is not importable: {error}"}
        return out
    load_started = time.perf_counter()
    onnx_model = Embedder(model=model, backend="onnx", device=device, batch_size=batch_size)
    onnx_model._load()
    load_seconds = time.perf_counter() - load_started
    onnx_st = onnx_model._load()
    encode(onnx_st, texts[:8])
    log(f"ONNX encode of {len(sample)} texts")
    started = time.perf_counter()
    onnx_vectors = encode(onnx_st, [texts[i] for i in sample])
    onnx_seconds = time.perf_counter() - started
    cosines = np.sum(onnx_vectors * sample_vectors, axis=1)
    out["onnx"] = {
        "texts": len(sample),
        "torch_seconds": round(sample_seconds, 3),
        "onnx_seconds": round(onnx_seconds, 3),
        "torch_chunks_per_second": round(len(sample) / sample_seconds, 2),
        "onnx_chunks_per_second": round(len(sample) / onnx_seconds, 2),
        "ratio": round(sample_seconds / onnx_seconds, 3),
        "min_cosine": round(float(cosines.min()), 6),
        "mean_cosine": round(float(cosines.mean()), 6),
        "load_or_export_seconds": round(load_seconds, 3),
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


def instrument_model_time() -> dict[str, Any]:
    """Accumulate the time the build spends in the embedding model (loading it, encoding,
    counting tokens) by wrapping `Embedder`'s methods in this process; the rest of the build's
    wall time is the pipeline's own overhead."""
    from nara_kg.embedding.encoder import Embedder

    spent: dict[str, Any] = {
        "loads": 0,
        "load_seconds": 0.0,
        "encode_calls": 0,
        "encoded_texts": 0,
        "encode_seconds": 0.0,
        "count_tokens_calls": 0,
        "count_tokens_seconds": 0.0,
    }
    original_load = Embedder._load
    original_encode = Embedder.encode
    original_count = Embedder.count_tokens

    def _load(self: Any) -> Any:
        if self._model is not None:
            return original_load(self)
        started = time.perf_counter()
        try:
            return original_load(self)
        finally:
            spent["loads"] += 1
            spent["load_seconds"] += time.perf_counter() - started

    def encode(self: Any, texts: list[str]) -> Any:
        self._load()
        started = time.perf_counter()
        try:
            return original_encode(self, texts)
        finally:
            spent["encode_calls"] += 1
            spent["encoded_texts"] += len(texts)
            spent["encode_seconds"] += time.perf_counter() - started

    def count_tokens(self: Any, text: str) -> int:
        self._load()
        started = time.perf_counter()
        try:
            return original_count(self, text)
        finally:
            spent["count_tokens_calls"] += 1
            spent["count_tokens_seconds"] += time.perf_counter() - started

    Embedder._load = _load  # type: ignore[method-assign]
    Embedder.encode = encode  # type: ignore[method-assign]
    Embedder.count_tokens = count_tokens  # type: ignore[method-assign]
    return spent


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
            _chunk_texts(work_dir),
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
    log: Log = _quiet,
) -> dict[str, Any]:
    """One build in a fresh Python process; returns what `child_build` measured."""
    opts = opts or SuiteOptions()
    result_path = work_dir.parent / f"{work_dir.name}.result.json"
    result_path.unlink(missing_ok=True)
    command = [
        sys.executable,
        "-m",
        "benchmarks.suite",
        "build",
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
        "--onnx-sample",
        str(opts.onnx_sample),
        "--seed",
        str(opts.seed),
    ]
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
        raise RuntimeError(f"benchmark build exited with {completed.returncode}:\n{tail}")
    result: dict[str, Any] = json.loads(result_path.read_text(encoding="utf-8"))
    result["process_seconds"] = round(time.perf_counter() - started, 3)
    log(f"build of {data_dir.name}: {result['seconds']:.1f}s, peak {result['peak_rss_mb']} MB")
    return result


# =========================================================================== writes
def _write_sample(work_dir: Path, size: int) -> list[dict[str, Any]]:
    """`size` chunk rows of the chosen records, descriptions first and in file order, so that
    parents and children travel together and the sample has Includes relationships."""
    import pyarrow.parquet as pq

    from nara_kg.ingest.layout import WorkLayout
    from nara_kg.ingest.records import iter_rows
    from nara_kg.ingest.stages import chosen_rows_by_file

    layout = WorkLayout(work_dir)
    index = pq.read_table(layout.parsed_index, columns=["file_id", "rel_path"]).to_pylist()
    descriptions = {r["file_id"] for r in index if r["rel_path"].startswith("descriptions")}
    ordered = sorted(chosen_rows_by_file(layout), key=lambda entry: entry[0] not in descriptions)
    rows: list[dict[str, Any]] = []
    columns = ["chunkId", "naId", "chunkSeqId", "nodeType", "embed", "props", "rowHash"]
    columns += ["parentNaId", "recordRow"]
    for file_id, chosen in ordered:
        for row in iter_rows(layout.chunk_part(file_id), columns):
            if row.pop("recordRow") not in chosen:
                continue
            rows.append(row)
            if 0 < size <= len(rows):
                return rows
    return rows


def measure_writes(
    driver: Any, database: str, work_dir: Path, sample_size: int, log: Log = _quiet
) -> dict[str, Any]:
    """The project's batched writers vs the seed's per-node writes on the same chunk rows.

    Batched: `nodes.upsert_nodes` (UNWIND + MERGE through the chunkId constraint, 500 rows per
    transaction) and `relationships.sync_edges` for Includes (endpoints looked up through the
    constraint). Seed: one auto-commit `MERGE ... ON CREATE SET` per node on a label with no
    constraint or index (as the seed's notebook did, the constraint came after), and Includes as
    one cartesian `MATCH (a), (b) WHERE a.naId = b.parentNaId` join without an index.
    Both run on an empty database, one after the other.
    """
    from nara_kg.graph import nodes as node_cypher
    from nara_kg.graph.relationships import sync_edges
    from nara_kg.model import edges as edge_rules
    from nara_kg.model.schema import Prop, Rel

    rows = _write_sample(work_dir, sample_size)
    first_rows = [r for r in rows if r["chunkSeqId"] == 0]
    present = {r["naId"] for r in first_rows}
    links = [
        edge_rules.RecordLinks(na_id=r["naId"], chunk_count=1, parent_na_id=r["parentNaId"])
        for r in first_rows
    ]
    edges = edge_rules.includes_edges(links, present)

    # ---- batched (the project's own functions)
    wipe_database(driver, database)
    node_cypher.ensure_node_schema(driver, database)
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        props = json.loads(row["props"])
        props[node_cypher.ROW_HASH] = row["rowHash"]
        groups.setdefault(row["nodeType"], []).append({"props": props, "embed": row["embed"]})
    started = time.perf_counter()
    for node_type, group in groups.items():
        node_cypher.upsert_nodes(driver, database, node_type, group)
    batched_nodes_s = time.perf_counter() - started
    started = time.perf_counter()
    synced = sync_edges(driver, database, Rel.INCLUDES, edges)
    batched_rels_s = time.perf_counter() - started
    log(f"batched: {len(rows)} nodes {batched_nodes_s:.2f}s, {synced.added} rels")

    # ---- the seed's way
    wipe_database(driver, database)
    seed_statement = f"MERGE (c:{SEED_LABEL} {{chunkId: $id}}) ON CREATE SET c += $props"
    started = time.perf_counter()
    with driver.session(database=database) as session:
        for row in rows:
            props = json.loads(row["props"])
            if row["chunkSeqId"] == 0 and row["parentNaId"] is not None:
                props["parentNaId"] = row["parentNaId"]
            session.run(seed_statement, id=row["chunkId"], props=props).consume()
    seed_nodes_s = time.perf_counter() - started
    join = (
        f"MATCH (a:{SEED_LABEL}), (b:{SEED_LABEL}) "
        f"WHERE a.{Prop.CHUNK_SEQ_ID} = 0 AND b.{Prop.CHUNK_SEQ_ID} = 0 "
        f"AND a.{Prop.NA_ID} = b.parentNaId AND a <> b "
        f"CREATE (a)-[:{SEED_INCLUDES}]->(b)"
    )
    started = time.perf_counter()
    with driver.session(database=database) as session:
        summary = session.run(join).consume()
    seed_rels_s = time.perf_counter() - started
    seed_rels = summary.counters.relationships_created
    log(f"seed: {len(rows)} nodes {seed_nodes_s:.2f}s, {seed_rels} rels {seed_rels_s:.2f}s")
    wipe_database(driver, database)

    n_nodes, n_rels = len(rows), len(edges)

    def rate(count: int, seconds: float) -> float:
        return count / seconds if seconds > 0 else float("inf")

    batched_total = batched_nodes_s + batched_rels_s
    seed_total = seed_nodes_s + seed_rels_s
    return {
        "sample_nodes": n_nodes,
        "sample_includes": n_rels,
        "seed_includes_created": seed_rels,
        "batched": {
            "nodes_seconds": _r(batched_nodes_s),
            "rels_seconds": _r(batched_rels_s),
            "nodes_per_second": _r(rate(n_nodes, batched_nodes_s), 1),
            "rels_per_second": _r(rate(n_rels, batched_rels_s), 1),
        },
        "seed": {
            "nodes_seconds": _r(seed_nodes_s),
            "rels_seconds": _r(seed_rels_s),
            "nodes_per_second": _r(rate(n_nodes, seed_nodes_s), 1),
            "rels_per_second": _r(rate(seed_rels, seed_rels_s), 1),
        },
        "nodes_ratio": _r(seed_nodes_s / batched_nodes_s if batched_nodes_s else None, 2),
        "rels_ratio": _r(seed_rels_s / batched_rels_s if batched_rels_s else None, 2),
        #: Same nodes and relationships written: the ratio of the two total times.
        "ratio": _r(seed_total / batched_total if batched_total else None, 2),
    }


# =========================================================================== queries
def _local_queries(data_dir: Path, work_dir: Path, count: int, seed: int) -> list[str]:
    """The question file's local questions, then titles of random records (as users type
    them), up to `count`."""
    from nara_kg.ingest.layout import WorkLayout
    from nara_kg.ingest.stages import iter_chunks

    queries = []
    questions = data_dir / "questions.jsonl"
    if questions.exists():
        for line in questions.read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                if entry.get("mode", "local") == "local":
                    queries.append(entry["question"])
    titles = []
    for row in iter_chunks(WorkLayout(work_dir), ["chunkSeqId", "props", "isStub"]):
        if row["chunkSeqId"] == 0 and not row["isStub"]:
            props = json.loads(row["props"])
            title = props.get("title") or props.get("heading")
            if title:
                titles.append(str(title))
    rng = random.Random(seed)
    rng.shuffle(titles)
    return (queries + titles)[:count]


def measure_local_search(
    driver: Any, database: str, embedder: Any, queries: list[str], k: int = 10
) -> dict[str, Any]:
    """Hybrid local search (as `nara-kg search` and the evaluation asset run it), per query."""
    from nara_kg.retrieval.search import local_search

    for query in queries[:10]:  # warm-up: model, driver pool, page cache, query plans
        local_search(driver, database, embedder.encode, query, k=k)
    latencies = [
        local_search(driver, database, embedder.encode, query, k=k).latency_ms for query in queries
    ]
    return {
        "queries": len(latencies),
        "k": k,
        "p50_ms": _r(percentile(latencies, 50), 2),
        "p95_ms": _r(percentile(latencies, 95), 2),
        "max_ms": _r(max(latencies) if latencies else float("nan"), 2),
        "mean_ms": _r(statistics.fmean(latencies) if latencies else float("nan"), 2),
    }


def measure_global_search(
    driver: Any, database: str, embedder: Any, questions: list[str]
) -> dict[str, Any]:
    """Global search (map-reduce over community reports) with the extractive backend, through
    `ask` as the CLI runs it; no generation cache, so every question is answered afresh."""
    from nara_kg.generation.llm import ExtractiveLLM
    from nara_kg.retrieval.ask import ask

    llm = ExtractiveLLM()
    ask(driver, database, embedder, llm, None, questions[0], mode="global")  # warm-up
    latencies = []
    answered = 0
    for question in questions:
        started = time.perf_counter()
        response = ask(driver, database, embedder, llm, None, question, mode="global")
        latencies.append((time.perf_counter() - started) * 1000.0)
        answered += int(not response["refused"])
    return {
        "queries": len(latencies),
        "answered": answered,
        "p50_ms": _r(percentile(latencies, 50), 2),
        "p95_ms": _r(percentile(latencies, 95), 2),
        "max_ms": _r(max(latencies) if latencies else float("nan"), 2),
    }


def _global_questions(data_dir: Path, count: int) -> list[str]:
    questions = []
    path = data_dir / "questions.jsonl"
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and json.loads(line).get("mode") == "global":
                questions.append(json.loads(line)["question"])
    for question in GLOBAL_QUESTIONS:
        if question not in questions:
            questions.append(question)
    return questions[: max(1, count)]


# =========================================================================== the suite
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


def run_suite(opts: SuiteOptions, settings: Neo4jSettings, log: Log = _quiet) -> dict[str, Any]:
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
                small_data = scratch / "data-small"
                generate_dataset(small_data, memory_records, opts.seed)
                memory_small = build_in_subprocess(
                    settings, small_data, scratch / "work-small", wipe=True, opts=opts, log=log
                )
                shutil.rmtree(small_data, ignore_errors=True)
                shutil.rmtree(scratch / "work-small", ignore_errors=True)

        with _phase(phases, f"generate {opts.records} records", log):
            dataset = generate_dataset(data_dir, opts.records, opts.seed)
        results["records"] = dataset["records"]
        results["dataset"] = dataset

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
        embedding = full.pop("embedding")
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
                "records_per_second": _r(dataset["records"] / build_seconds, 2),
                # The graph's chunks (one copy per naId), not every chunk row of every file.
                "chunks": full["asset_metadata"].get("graph_nodes", {}).get("chunks_desired"),
                "chunk_rows": chunks_meta.get("chunks"),
                "embedded_chunks": embedding["texts"],
                "per_asset_seconds": full["per_asset_seconds"],
                "outside_steps_seconds": full["outside_steps_seconds"],
                "embedding_seconds": embedding["seconds"],
                "embedding_tokens": embedding["tokens"],
                "embedding_chunks_per_second": embedding["chunks_per_second"],
                "build_over_embedding_ratio": _r(build_seconds / embedding["seconds"]),
                "text_embeddings_asset_seconds": asset_embed_s,
                "text_embeddings_chunks_per_second": _r(
                    (vector_meta.get("encoded", 0) + text_meta.get("encoded_here", 0))
                    / asset_embed_s
                    if asset_embed_s
                    else None,
                    2,
                ),
                "text_embeddings_over_plain_ratio": _r(
                    asset_embed_s / embedding["seconds"] if asset_embed_s else None
                ),
                "asset_metadata": full["asset_metadata"],
            }
        )
        model = full["model_time"]
        model_seconds = model["load_seconds"] + model["encode_seconds"]
        model_seconds += model["count_tokens_seconds"]
        results["build_model_time"] = model
        results["build_model_seconds"] = _r(model_seconds)
        results["build_overhead_seconds"] = _r(build_seconds - model_seconds)
        results["build_overhead_share"] = _r((build_seconds - model_seconds) / build_seconds, 4)
        #: Measured in the same process at the same time, so machine load that drifts between
        #: the build and the plain encode after it does not move this one.
        results["build_over_model_ratio"] = _r(build_seconds / model_seconds)
        asset_encoding = (vector_meta.get("encoding_seconds") or 0.0) + (
            text_meta.get("encoding_seconds") or 0.0
        )
        if asset_embed_s and asset_encoding:
            results["text_embeddings_overhead_share"] = _r(1 - asset_encoding / asset_embed_s, 4)
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
            results["build_over_embedding_cpu_ratio"] = _r(work / plain_cpu["process_cpu_seconds"])
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
        results["incremental_fraction"] = _r(incremental["seconds"] / build_seconds, 4)

        with _phase(phases, "queries", log):
            embedder = Embedder(backend=opts.backend, device=opts.device)
            embedder.encode(["warm-up"])
            queries = _local_queries(data_dir, work_dir, opts.local_queries, opts.seed)
            local = measure_local_search(driver, settings.database, embedder, queries)
            global_ = measure_global_search(
                driver,
                settings.database,
                embedder,
                _global_questions(data_dir, opts.global_queries),
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
            results["peak_memory_growth_ratio"] = _r(
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


# =========================================================================== the report
RESULTS_START = "<!-- bench:results:start -->"
RESULTS_END = "<!-- bench:results:end -->"


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def markdown_report(results: dict[str, Any]) -> str:
    """The generated part of BENCHMARKS.md: headline table, per-asset table, details."""
    r = results
    env = r.get("environment", {})
    lines = [
        f"Run of {r.get('started_at', '?')}: **{_fmt(r.get('records'))} records** "
        f"({_fmt(r.get('chunks'))} chunks, {_fmt(r.get('embedded_chunks'))} embedded), "
        f"{env.get('cpus', '?')} CPUs, torch threads {env.get('torch_threads', '?')}, "
        f"load average before/after {env.get('load_average_before')} / "
        f"{env.get('load_average_after')}.",
        "",
        "| # | measurement | measured | target | met |",
        "|---|---|---|---|---|",
    ]
    targets = {row["metric"]: row for row in r.get("targets", [])}

    def target_cells(key: str) -> tuple[str, str]:
        row = targets.get(key)
        if row is None:
            return "-", "-"
        met = row["met"]
        status = "n/a" if met is None else ("yes" if met else f"**no** ({row['miss']})")
        return row["target"], status

    def line(number: str, label: str, value: str, key: str | None = None) -> None:
        target, status = target_cells(key) if key else ("-", "-")
        lines.append(f"| {number} | {label} | {value} | {target} | {status} |")

    line("1", "whole build, wall time (s)", _fmt(r.get("build_seconds"), 1))
    line("1", "records / s", _fmt(r.get("records_per_second"), 1))
    line("1", "peak RSS of the build process (MB)", _fmt(r.get("peak_rss_mb"), 0))
    line(
        "2",
        "plain `SentenceTransformer.encode` of the same texts (s)",
        _fmt(r.get("embedding_seconds"), 1),
    )
    line(
        "2",
        "build / embedding alone",
        _fmt(r.get("build_over_embedding_ratio")),
        "build_over_embedding_ratio",
    )
    model = r.get("build_model_time") or {}
    line(
        "2",
        "time in the model during the build: load + encode + token counting (s)",
        f"{_fmt(model.get('load_seconds'), 1)} + {_fmt(model.get('encode_seconds'), 1)} + "
        f"{_fmt(model.get('count_tokens_seconds'), 1)} = {_fmt(r.get('build_model_seconds'), 1)}",
    )
    line(
        "2",
        "build time outside the model (s, share of the build)",
        f"{_fmt(r.get('build_overhead_seconds'), 1)} "
        f"({_fmt((r.get('build_overhead_share') or 0) * 100, 1)}%)",
    )
    line(
        "2",
        "build / time in the model during the build (same process, same time)",
        _fmt(r.get("build_over_model_ratio")),
    )
    line(
        "4",
        "API latency p50 / p95 (ms): POST /api/search, POST /api/ask",
        f"{_fmt(r.get('api_search_p50_ms'), 1)} / {_fmt(r.get('api_search_p95_ms'), 1)}, "
        f"{_fmt(r.get('api_ask_p50_ms'), 1)} / {_fmt(r.get('api_ask_p95_ms'), 1)}",
    )
    parallel = r.get("parallel") or {}
    builds = parallel.get("builds") or {}
    for count in ("1", "2"):
        build = builds.get(count) or {}
        line(
            "2",
            f"build through the jobs, {count} parallel partition run(s) "
            f"({_fmt(parallel.get('records'))} records, {_fmt(build.get('runs'))} runs, "
            f"{_fmt(build.get('threads_per_model'))} model threads each) (s)",
            _fmt(build.get("seconds"), 1),
        )
    line(
        "2",
        "share of the build (1 partition run) that is not the embedding model",
        f"{_fmt((r.get('build_not_model_share') or 0) * 100, 1)}%",
    )
    line(
        "2",
        "`chunk_embeddings` + `text_embeddings` time outside `encode` (share)",
        f"{_fmt((r.get('text_embeddings_overhead_share') or 0) * 100, 1)}%",
    )
    line(
        "2",
        "`chunk_embeddings` + `text_embeddings` / plain encode",
        _fmt(r.get("text_embeddings_over_plain_ratio")),
    )
    line(
        "2",
        "chunks/s: plain encode / the embedding steps",
        f"{_fmt(r.get('embedding_chunks_per_second'), 1)} / "
        f"{_fmt(r.get('text_embeddings_chunks_per_second'), 1)}",
    )
    onnx = r.get("onnx") or {}
    line(
        "2",
        f"ONNX Runtime / PyTorch throughput ({_fmt(onnx.get('texts'))} texts)",
        _fmt(r.get("onnx_vs_torch_ratio")),
        "onnx_vs_torch_ratio",
    )
    line("2", "ONNX min cosine to PyTorch", _fmt(r.get("onnx_min_cosine"), 6), "onnx_min_cosine")
    writes = r.get("writes") or {}
    line(
        "3",
        f"batched / seed writes ({_fmt(writes.get('sample_nodes'))} nodes + "
        f"{_fmt(writes.get('sample_includes'))} Includes)",
        _fmt(r.get("batched_vs_seed_write_ratio"), 1),
        "batched_vs_seed_write_ratio",
    )
    if writes:
        line(
            "3",
            "nodes/s batched / seed",
            f"{_fmt(writes['batched']['nodes_per_second'], 0)} / "
            f"{_fmt(writes['seed']['nodes_per_second'], 0)} ({_fmt(writes['nodes_ratio'], 1)}x)",
        )
        line(
            "3",
            "Includes/s batched / seed",
            f"{_fmt(writes['batched']['rels_per_second'], 0)} / "
            f"{_fmt(writes['seed']['rels_per_second'], 0)} ({_fmt(writes['rels_ratio'], 1)}x)",
        )
    inc = r.get("incremental") or {}
    line(
        "4",
        f"incremental after {_fmt(inc.get('records_changed'))} records changed "
        f"({_fmt(inc.get('files_touched'))}/{_fmt(inc.get('files_total'))} files) (s)",
        _fmt(inc.get("seconds"), 1),
    )
    line(
        "4",
        "incremental / full build",
        _fmt(r.get("incremental_fraction"), 3),
        "incremental_fraction",
    )
    local = r.get("local_search") or {}
    line(
        "5",
        f"local (hybrid) search p50 / p95 (ms, {_fmt(local.get('queries'))} queries)",
        f"{_fmt(r.get('local_search_p50_ms'), 1)} / {_fmt(r.get('local_search_p95_ms'), 1)}",
        "local_search_p95_ms",
    )
    glob = r.get("global_search") or {}
    line(
        "5",
        f"global search p50 / p95 (ms, extractive, {_fmt(glob.get('queries'))} questions)",
        f"{_fmt(r.get('global_search_p50_ms'), 1)} / {_fmt(r.get('global_search_p95_ms'), 1)}",
    )
    memory = r.get("memory") or {}
    line(
        "6",
        f"peak RSS at {_fmt(memory.get('small_records'))} / "
        f"{_fmt(memory.get('large_records'))} records (MB)",
        f"{_fmt(memory.get('small_peak_rss_mb'), 0)} / {_fmt(memory.get('large_peak_rss_mb'), 0)}",
    )
    line(
        "6",
        "peak memory growth (4x records)",
        _fmt(r.get("peak_memory_growth_ratio"), 3),
        "peak_memory_growth_ratio",
    )

    contention = r.get("contention") or {}
    if any(contention.values()):
        lines += [
            "",
            "Where the machine's CPU went (from /proc; other processes = everything on this "
            "shared machine but the benchmark and its Neo4j):",
            "",
            "| phase | wall (s) | benchmark CPU-s | Neo4j CPU-s | other processes CPU-s "
            "(share of all CPUs) |",
            "|---|---|---|---|---|",
        ]
        for name, label in (
            ("build", "whole build"),
            ("text_embeddings_step", "`text_embeddings` step"),
            ("plain_encode", "plain encode of the same texts"),
        ):
            row = contention.get(name)
            if row:
                lines.append(
                    f"| {label} | {_fmt(row.get('wall_seconds'), 1)} | "
                    f"{_fmt(row.get('process_cpu_seconds'), 1)} | "
                    f"{_fmt(row.get('neo4j_cpu_seconds'), 1)} | "
                    f"{_fmt(row.get('other_processes_cpu_seconds'), 1)} "
                    f"({_fmt((row.get('other_processes_share') or 0) * 100, 0)}%) |"
                )
        if r.get("build_over_embedding_cpu_ratio") is not None:
            lines += [
                "",
                "In CPU seconds, which competing processes do not inflate, the build (benchmark "
                "process + Neo4j) costs "
                f"**{_fmt(r.get('build_over_embedding_cpu_ratio'))}x** the plain encode.",
            ]
    lines += ["", "Wall time and peak RSS per asset (full build, from the run's step events):", ""]
    lines += [
        "| asset | full build (s) | share | peak RSS (MB) | incremental (s) |",
        "|---|---|---|---|---|",
    ]
    incremental_steps = inc.get("per_asset_seconds", {})
    resources = r.get("per_asset_resources") or {}
    build = r.get("build_seconds") or 0
    for asset, seconds in (r.get("per_asset_seconds") or {}).items():
        share = f"{seconds / build:.1%}" if build else "-"
        peak = (resources.get(asset) or {}).get("peak_rss_mb")
        lines.append(
            f"| {asset} | {_fmt(seconds, 1)} | {share} | {_fmt(peak, 0)} | "
            f"{_fmt(incremental_steps.get(asset), 1)} |"
        )
    lines.append(
        f"| (outside steps: run start, resources, events) | "
        f"{_fmt(r.get('outside_steps_seconds'), 1)} | | | |"
    )
    if r.get("profile_top"):
        lines += ["", "Hottest functions of the full build (cProfile, by own time):", ""]
        lines += ["| function | calls | own s | cumulative s |", "|---|---|---|---|"]
        for row in r["profile_top"][:15]:
            lines.append(
                f"| `{row['function']}` | {row['calls']} | {row['tottime']} | {row['cumtime']} |"
            )
    summary = {k: r.get(k) for k in REQUIRED_KEYS}
    lines += [
        "",
        "`nara-kg bench --json` keys of this run:",
        "",
        "```json",
        json.dumps(summary, indent=2),
        "```",
    ]
    return "\n".join(lines)


def update_benchmarks_md(path: Path, results: dict[str, Any]) -> None:
    """Replace the generated block of BENCHMARKS.md (between the markers), keeping the rest."""
    block = f"{RESULTS_START}\n{markdown_report(results)}\n{RESULTS_END}"
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if RESULTS_START in text and RESULTS_END in text:
            head, rest = text.split(RESULTS_START, 1)
            _, tail = rest.split(RESULTS_END, 1)
            path.write_text(head + block + tail, encoding="utf-8")
            return
        path.write_text(text.rstrip() + "\n\n## Latest results\n\n" + block + "\n", "utf-8")
        return
    path.write_text(f"# Benchmarks\n\n## Latest results\n\n{block}\n", encoding="utf-8")


# =========================================================================== child entry
def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.suite")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="one timed build (used by the suite, per process)")
    build.add_argument("--data", required=True)
    build.add_argument("--work", required=True)
    build.add_argument("--out", required=True)
    build.add_argument("--backend", default="torch")
    build.add_argument("--device", default="cpu")
    build.add_argument("--batch-size", type=int, default=64)
    build.add_argument("--onnx-sample", type=int, default=2_000)
    build.add_argument("--seed", type=int, default=7)
    build.add_argument("--wipe", action="store_true")
    build.add_argument("--incremental", action="store_true", help="the kg_incremental job")
    build.add_argument("--embedding-check", action="store_true")
    build.add_argument("--no-onnx", action="store_true")
    build.add_argument("--profile", default=None)
    args = parser.parse_args(argv)
    result = child_build(args)
    Path(args.out).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
