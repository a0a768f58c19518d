"""The report: the generated block of BENCHMARKS.md, in Markdown, from one run's results."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.options import REQUIRED_KEYS

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


def _answer_lines(line: Callable[[str, str, str], None], answers: dict[str, Any]) -> None:
    """The real-record answer set: accuracy of the default backend, overall and per kind."""
    if not answers.get("n"):
        return
    line(
        "5",
        f"real-record answers ({_fmt(answers.get('n'))}): accuracy / unanswerable refused",
        f"{_fmt(answers.get('accuracy'), 3)} / {_fmt(answers.get('refusal_rate_unanswerable'), 3)}",
    )
    for kind, metrics in (answers.get("by_kind") or {}).items():
        line(
            "5",
            f"  {kind} ({_fmt(metrics.get('n'))}): answer accuracy",
            _fmt(metrics.get("accuracy"), 3),
        )


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
        "plain `SentenceTransformer.encode` of the same texts (s): mean of the encodes just "
        "before and just after the build",
        f"{_fmt(r.get('embedding_seconds'), 1)} ({_fmt(r.get('embedding_seconds_before_build'), 1)}"
        f" / {_fmt(r.get('embedding_seconds_after_build'), 1)})",
    )
    line(
        "2",
        "build / embedding alone",
        _fmt(r.get("build_over_embedding_ratio")),
        "build_over_embedding_ratio",
    )
    line(
        "2",
        "build / the plain encode after it alone (how runs before 46 measured it)",
        _fmt(r.get("build_over_embedding_after_ratio")),
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
    build_cpu = (r.get("contention") or {}).get("build") or {}
    by_thread = build_cpu.get("neo4j_cpu_by_thread") or {}
    if by_thread:
        line(
            "2",
            "Neo4j's CPU during the build, busiest threads (s)",
            f"{_fmt(build_cpu.get('neo4j_cpu_seconds'), 1)}: "
            + ", ".join(f"{name} {_fmt(seconds, 1)}" for name, seconds in by_thread.items()),
        )
    line(
        "4",
        f"API latency p50 / p95 (ms, k = {_fmt((r.get('api') or {}).get('k'))}): "
        "POST /api/search, POST /api/ask",
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
        f"local (hybrid) search p50 / p95 (ms, {_fmt(local.get('queries'))} queries after "
        f"{_fmt((local.get('warm_up') or {}).get('searches', local.get('warm_up_queries')))} "
        "warm-up searches)",
        f"{_fmt(r.get('local_search_p50_ms'), 1)} / {_fmt(r.get('local_search_p95_ms'), 1)}",
        "local_search_p95_ms",
    )
    first = local.get("first_searches") or {}
    if first:
        line(
            "5",
            f"local search: the first {_fmt(local.get('queries'))} searches after the build, "
            "p50 / p95 (ms)",
            f"{_fmt(first.get('p50_ms'), 1)} / {_fmt(first.get('p95_ms'), 1)}",
        )
    passes = (local.get("warm_up") or {}).get("passes") or []
    if passes and passes[0].get("neo4j_cpu_ms_per_search") is not None:
        line(
            "5",
            "local search warm-up: Neo4j's CPU per search, pass by pass "
            f"({_fmt(passes[0].get('searches'))} searches each) (ms)",
            " → ".join(_fmt(p.get("neo4j_cpu_ms_per_search"), 1) for p in passes),
        )
    cpu = local.get("cpu") or {}
    if cpu:
        line(
            "5",
            "local search: CPU per search, this process / Neo4j (ms); "
            "steal and other processes during the searches",
            f"{_fmt(cpu.get('client_cpu_ms_per_search'), 1)} / "
            f"{_fmt(cpu.get('neo4j_cpu_ms_per_search'), 1)}; "
            f"{_fmt(cpu.get('steal_seconds'), 2)} s / "
            f"{_fmt((cpu.get('other_processes_share') or 0) * 100, 1)}%",
        )
    glob = r.get("global_search") or {}
    line(
        "5",
        f"global search p50 / p95 (ms, extractive, {_fmt(glob.get('queries'))} questions)",
        f"{_fmt(r.get('global_search_p50_ms'), 1)} / {_fmt(r.get('global_search_p95_ms'), 1)}",
        "global_search_p95_ms",
    )
    cold = glob.get("first_question_per_level_ms") or []
    if cold:
        line(
            "5",
            "global search: a fresh process's first question per level (ms, not in the p95)",
            " / ".join(_fmt(ms, 1) for ms in cold),
            None,
        )
    line(
        "5",
        "entity_mentions step (s) and its share of the plain encode",
        f"{_fmt(r.get('entity_mentions_seconds'), 1)} "
        f"({_fmt(r.get('entity_mentions_embedding_share'), 3)})",
        "entity_mentions_embedding_share",
    )
    line(
        "5",
        "entity linking precision / recall against the demo's labels",
        f"{_fmt(r.get('entity_mentions_precision'), 3)} / "
        f"{_fmt(r.get('entity_mentions_recall'), 3)}",
    )
    real = r.get("real_questions") or {}
    if real.get("n"):
        line(
            "5",
            f"real-record questions ({_fmt(real.get('n'))}): hit@1 / hit@5 / MRR@10",
            f"{_fmt(real.get('hit_at_1'), 3)} / {_fmt(real.get('hit_at_5'), 3)} / "
            f"{_fmt(real.get('mrr_at_10'), 3)}",
        )
        for kind, metrics in (real.get("by_kind") or {}).items():
            line(
                "5",
                f"  {kind} ({_fmt(metrics.get('n'))}): hit@1 / hit@5 / MRR@10",
                f"{_fmt(metrics.get('hit_at_1'), 3)} / {_fmt(metrics.get('hit_at_5'), 3)} / "
                f"{_fmt(metrics.get('mrr_at_10'), 3)}",
            )
        _answer_lines(line, real.get("answers") or {})
    elif real.get("skipped"):
        line("5", "real-record questions", f"skipped: {real['skipped']}")
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
            "(share of all CPUs) | steal (s) |",
            "|---|---|---|---|---|---|",
        ]
        for name, label in (
            ("build", "whole build"),
            ("text_embeddings_step", "`text_embeddings` step"),
            ("plain_encode", "plain encode of the same texts"),
            ("incremental", "incremental build"),
        ):
            row = contention.get(name)
            if row:
                lines.append(
                    f"| {label} | {_fmt(row.get('wall_seconds'), 1)} | "
                    f"{_fmt(row.get('process_cpu_seconds'), 1)} | "
                    f"{_fmt(row.get('neo4j_cpu_seconds'), 1)} | "
                    f"{_fmt(row.get('other_processes_cpu_seconds'), 1)} "
                    f"({_fmt((row.get('other_processes_share') or 0) * 100, 0)}%) | "
                    f"{_fmt(row.get('steal_seconds'), 1)} |"
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
