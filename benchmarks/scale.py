"""The graph side at scale: whole builds with the stand-in model at several N, and how each
step's time and memory grow with N (`nara-kg bench --scale 10000 --scale 100000`).

The embedding model is replaced by `nara_kg.embedding.standin` (hashed vectors of the same
dimension, key `standin-hash:384`), so that what is measured is everything else: parse, chunk,
nodes, relationships, Leiden, reports, indexes, search. Per N: a generated export, one build in
a child process of its own (the same `build_in_subprocess` path as the suite, so peak RSS is
the build's own), per-step wall time and peak RSS (sampled from /proc), the local Neo4j's
resident memory and store size, and local and global search latency with the stand-in
encoding the queries. Between consecutive N, each step's growth exponent
log(t2/t1) / log(N2/N1): 1 is linear, 2 quadratic.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import platform
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.build import build_in_subprocess
from benchmarks.common import Log, open_driver, quiet, rounded, wipe_database
from benchmarks.data import generate_dataset_in_child
from benchmarks.options import SuiteOptions
from benchmarks.queries import (
    global_questions,
    local_queries_with_warm_up,
    measure_global_search,
    measure_local_search,
)
from benchmarks.sampling import local_server_pid
from nara_kg.embedding.standin import STANDIN_BACKEND, StandinEmbedder, standin_key
from nara_kg.settings import Neo4jSettings, neo4j_home

SCALE_START = "<!-- bench:scale:start -->"
SCALE_END = "<!-- bench:scale:end -->"

#: The per-file stages inside the `file_stages` step, in their order.
FILE_STAGES = ("raw_jsonl", "parsed_records", "chunks", "chunk_embeddings")

#: Steps shorter than this at the larger N get no exponent: their ratio is noise.
_MIN_SECONDS_FOR_EXPONENT = 1.0


def growth_exponent(n1: float, v1: float | None, n2: float, v2: float | None) -> float | None:
    """log(v2/v1) / log(n2/n1), or None where it is undefined."""
    if not v1 or not v2 or v1 <= 0 or v2 <= 0 or n1 <= 0 or n2 <= n1:
        return None
    return round(math.log(v2 / v1) / math.log(n2 / n1), 3)


def _server_memory(pid: int | None) -> dict[str, Any] | None:
    """Resident and peak resident memory of the local Neo4j (the JVM: heap + page cache +
    native), from /proc."""
    if pid is None:
        return None
    values: dict[str, Any] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                values[f"{name.lower()}_mb"] = round(int(rest.split()[0]) / 1024, 1)
    return values or None


def _store_mb(database: str) -> float | None:
    """Size on disk of the local server's database folder (store files, not transaction logs)."""
    folder = neo4j_home() / "data" / "databases" / database
    if not folder.is_dir():
        return None
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20, 1)


def scale_run(
    records: int, opts: SuiteOptions, settings: Neo4jSettings, driver: Any, log: Log = quiet
) -> dict[str, Any]:
    """One N: generate, build with the stand-in (wiped first), measure the searches."""
    scratch = opts.scratch.resolve() / "scale"
    data_dir, work_dir = scratch / f"data-{records}", scratch / f"work-{records}"
    scratch.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    dataset = generate_dataset_in_child(data_dir, records, opts.seed)
    log(f"scale {records}: generated {dataset['records']} records in {dataset['seconds']}s")
    build_opts = replace(opts, backend=STANDIN_BACKEND, onnx=False)
    build = build_in_subprocess(
        settings,
        data_dir,
        work_dir,
        wipe=True,
        opts=build_opts,
        profile_path=scratch / f"build-{records}.prof" if opts.profile else None,
        log=log,
    )
    server_pid = local_server_pid()
    embedder = StandinEmbedder()
    queries, warm_up = local_queries_with_warm_up(data_dir, work_dir, opts.local_queries, opts.seed)
    local = measure_local_search(driver, settings.database, embedder, queries, warm_up=warm_up)
    global_ = measure_global_search(
        driver, settings.database, embedder, global_questions(data_dir, opts.global_queries)
    )
    log(
        f"scale {records}: build {build['seconds']:.1f}s, local p95 {local['p95_ms']} ms, "
        f"global p95 {global_['p95_ms']} ms"
    )
    resources = build.get("per_asset_resources") or {}
    steps = {
        step: {
            "seconds": seconds,
            "peak_rss_mb": (resources.get(step) or {}).get("peak_rss_mb"),
            "cpu_seconds": (resources.get(step) or {}).get("process_cpu_seconds"),
            "neo4j_cpu_seconds": (resources.get(step) or {}).get("neo4j_cpu_seconds"),
        }
        for step, seconds in build["per_asset_seconds"].items()
    }
    meta = build["asset_metadata"]
    # The per-file stages run inside the one `file_stages` step; their own seconds (summed
    # over files) come from its metadata.
    for stage in FILE_STAGES:
        seconds = (meta.get(stage) or {}).get("seconds")
        if seconds is not None:
            steps[f"file_stages/{stage}"] = {"seconds": seconds, "peak_rss_mb": None}
    run = {
        "records": dataset["records"],
        "requested_records": records,
        "files": dataset["files"],
        "input_mb": round(dataset["bytes"] / 2**20, 1),
        "generate_seconds": dataset["seconds"],
        "chunks": meta.get("graph_nodes", {}).get("chunks_desired"),
        "chunk_rows": meta.get("chunks", {}).get("chunks"),
        "build_seconds": build["seconds"],
        "records_per_second": rounded(dataset["records"] / build["seconds"], 1),
        "outside_steps_seconds": build["outside_steps_seconds"],
        "peak_rss_mb": build["peak_rss_mb"],
        "steps": steps,
        "neo4j_memory": _server_memory(server_pid),
        "neo4j_store_mb": _store_mb(settings.database),
        "local_search": local,
        "global_search": global_,
        "asset_metadata": meta,
        "profile_top": build.get("profile_top"),
        "seconds": round(time.perf_counter() - started, 1),
    }
    wipe_database(driver, settings.database)
    shutil.rmtree(data_dir, ignore_errors=True)
    shutil.rmtree(work_dir, ignore_errors=True)
    return run


def growth(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Between each pair of consecutive N: the exponent of every step's time and peak RSS, of
    the whole build, of the build's peak RSS and of the searches' p95."""
    out = []
    for small, large in itertools.pairwise(runs):
        n1, n2 = small["records"], large["records"]
        steps: dict[str, Any] = {}
        for step, figures in large["steps"].items():
            before = small["steps"].get(step)
            if before is None:
                continue
            timed = figures["seconds"] >= _MIN_SECONDS_FOR_EXPONENT
            steps[step] = {
                "time": growth_exponent(n1, before["seconds"], n2, figures["seconds"])
                if timed
                else None,
                "peak_rss": growth_exponent(n1, before["peak_rss_mb"], n2, figures["peak_rss_mb"]),
            }
        out.append(
            {
                "from_records": n1,
                "to_records": n2,
                "build_time": growth_exponent(
                    n1, small["build_seconds"], n2, large["build_seconds"]
                ),
                "peak_rss": growth_exponent(n1, small["peak_rss_mb"], n2, large["peak_rss_mb"]),
                "local_search_p95": growth_exponent(
                    n1, small["local_search"]["p95_ms"], n2, large["local_search"]["p95_ms"]
                ),
                "global_search_p95": growth_exponent(
                    n1, small["global_search"]["p95_ms"], n2, large["global_search"]["p95_ms"]
                ),
                "steps": steps,
                #: Faster than linear: the steps to look at first.
                "superlinear_steps": sorted(
                    step for step, e in steps.items() if e["time"] is not None and e["time"] > 1.1
                ),
            }
        )
    return out


def run_scale(
    sizes: list[int], opts: SuiteOptions, settings: Neo4jSettings, log: Log = quiet
) -> dict[str, Any]:
    """Every N in `sizes` (ascending), then the growth between them: the `scale` object of
    `nara-kg bench --scale ... --json`."""
    driver = open_driver(settings)
    runs = []
    try:
        for records in sorted(set(sizes)):
            runs.append(scale_run(records, opts, settings, driver, log))
    finally:
        with contextlib.suppress(Exception):
            wipe_database(driver, settings.database)
        driver.close()
    return {
        "model": standin_key(),
        "sizes": sorted(set(sizes)),
        "runs": runs,
        "growth": growth(runs),
    }


def _cell(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def markdown_scale_report(scale: dict[str, Any]) -> str:
    """The generated part of BENCHMARKS.md's "Graph side at scale" section."""
    runs = scale["runs"]
    if not runs:
        return "_no scale run_"
    sizes = [run["records"] for run in runs]
    head = " | ".join(f"N = {n:,}" for n in sizes)
    lines = [
        f"Model: stand-in `{scale['model']}` (hashed vectors, no model).",
        "",
        f"| figure | {head} |",
        "|---|" + "---:|" * len(runs),
    ]
    rows: list[tuple[str, Any]] = [
        ("chunks in the graph", lambda r: _cell(r["chunks"])),
        ("whole build, s", lambda r: _cell(r["build_seconds"])),
        ("records / s", lambda r: _cell(r["records_per_second"])),
        ("build peak RSS, MB", lambda r: _cell(r["peak_rss_mb"])),
        ("Neo4j RSS after build, MB", lambda r: _cell((r["neo4j_memory"] or {}).get("vmrss_mb"))),
        ("Neo4j store, MB", lambda r: _cell(r["neo4j_store_mb"])),
        (
            "local search p50 / p95, ms",
            lambda r: (
                f"{_cell(r['local_search']['p50_ms'])} / {_cell(r['local_search']['p95_ms'])}"
            ),
        ),
        (
            "global search p50 / p95, ms",
            lambda r: (
                f"{_cell(r['global_search']['p50_ms'])} / {_cell(r['global_search']['p95_ms'])}"
            ),
        ),
    ]
    for label, cell in rows:
        lines.append(f"| {label} | " + " | ".join(cell(r) for r in runs) + " |")
    lines += ["", "Per step: wall seconds (peak RSS MB of the build process during the step)", ""]
    pairs = scale["growth"]
    exp_head = "".join(f" exponent {p['from_records']:,}→{p['to_records']:,} |" for p in pairs)
    lines.append(f"| step | {head} |{exp_head}")
    lines.append("|---|" + "---:|" * (len(runs) + len(pairs)))
    steps = sorted(runs[-1]["steps"], key=lambda s: -runs[-1]["steps"][s]["seconds"])
    for step in steps:
        cells = []
        for run in runs:
            figures = run["steps"].get(step)
            cells.append(
                "-"
                if figures is None
                else f"{_cell(figures['seconds'])} ({_cell(figures['peak_rss_mb'], 0)})"
            )
        for pair in pairs:
            exponent = (pair["steps"].get(step) or {}).get("time")
            cells.append(_cell(exponent, 2))
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    for pair in pairs:
        lines.append(
            f"\n{pair['from_records']:,}→{pair['to_records']:,}: whole build exponent "
            f"{_cell(pair['build_time'], 2)}, peak RSS exponent {_cell(pair['peak_rss'], 2)}, "
            f"local p95 {_cell(pair['local_search_p95'], 2)}, global p95 "
            f"{_cell(pair['global_search_p95'], 2)}; faster than linear (> 1.1): "
            + (", ".join(pair["superlinear_steps"]) or "none")
            + "."
        )
    return "\n".join(lines)


def update_scale_section(path: Path, scale: dict[str, Any]) -> None:
    """Replace the generated block of the scale section of BENCHMARKS.md, keeping the rest."""
    block = f"{SCALE_START}\n{markdown_scale_report(scale)}\n{SCALE_END}"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    if SCALE_START in text and SCALE_END in text:
        head, rest = text.split(SCALE_START, 1)
        _, tail = rest.split(SCALE_END, 1)
        path.write_text(head + block + tail, encoding="utf-8")
        return
    section = "## Graph side at scale (stand-in model)\n\n" + block + "\n"
    path.write_text(text.rstrip() + "\n\n" + section, encoding="utf-8")


def run_scale_suite(
    sizes: list[int], opts: SuiteOptions, settings: Neo4jSettings, log: Log = quiet
) -> dict[str, Any]:
    """What `nara-kg bench --scale N ...` prints: the scale runs under `scale`, and the
    machine and load they ran on (the scale figures are only comparable on the same)."""
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    load_before = os.getloadavg()
    scale = run_scale(sizes, opts, settings, log)
    return {
        "mode": "scale",
        "scale": scale,
        "environment": {
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "neo4j_uri": settings.uri,
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
        },
        "options": {
            "seed": opts.seed,
            "local_queries": opts.local_queries,
            "global_queries": opts.global_queries,
        },
        "started_at": started_at,
    }
