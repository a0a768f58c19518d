"""Query latency: hybrid local search and global search, in process."""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import rounded
from benchmarks.sampling import Snapshot, cpu_between
from nara_kg.retrieval.evaluation import percentile

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


def local_queries(data_dir: Path, work_dir: Path, count: int, seed: int) -> list[str]:
    """The question file's local questions, then titles of random records (as users type
    them), up to `count`."""
    from nara_kg.ingest.layout import WorkLayout
    from nara_kg.ingest.stages.chunks import iter_chunks
    from nara_kg.model.tables import Col

    queries = []
    questions = data_dir / "questions.jsonl"
    if questions.exists():
        for line in questions.read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                if entry.get("mode", "local") == "local":
                    queries.append(entry["question"])
    titles = []
    for row in iter_chunks(WorkLayout(work_dir), [Col.PROPS, Col.IS_STUB], first_only=True):
        if not row[Col.IS_STUB]:
            props = json.loads(row[Col.PROPS])
            title = props.get("title") or props.get("heading")
            if title:
                titles.append(str(title))
    rng = random.Random(seed)
    rng.shuffle(titles)
    return (queries + titles)[:count]


#: Searches run before the measured ones, one per other record's title (as many as the graph
#: has, up to this), stopping early after WARM_UP_SECONDS. Neo4j's JIT compiles the search
#: path slowly on two cores: after a restart and a build, its CPU per search fell from 48 ms
#: over the first 250 searches to 23 ms over the third 250 and 14 ms over the eighth (9 ms
#: after several thousand), and the p95 from 56 to 25 ms. A p95 taken after a few dozen
#: searches measured how recently the server had started; this one is that of a server that has
#: been answering searches, as a serving one has. The first searches after the build are
#: reported beside it (`first_searches`), and the warm-up's CPU per search pass by pass
#: (`warm_up.passes`).
WARM_UP_SEARCHES = 4_000
WARM_UP_SECONDS = 120.0
#: Searches per pass of the warm-up's record.
WARM_UP_PASS = 250


def local_queries_with_warm_up(
    data_dir: Path, work_dir: Path, count: int, seed: int
) -> tuple[list[str], list[str]]:
    """:func:`local_queries` (the measured ones) and up to :data:`WARM_UP_SEARCHES` further
    titles to warm the server up on."""
    queries = local_queries(data_dir, work_dir, count + WARM_UP_SEARCHES, seed)
    return queries[:count], queries[count:]


def _latency_figures(latencies: Sequence[float]) -> dict[str, Any]:
    return {
        "p50_ms": rounded(percentile(latencies, 50), 2),
        "p95_ms": rounded(percentile(latencies, 95), 2),
        "max_ms": rounded(max(latencies) if latencies else float("nan"), 2),
        "mean_ms": rounded(statistics.fmean(latencies) if latencies else float("nan"), 2),
    }


def _warm_up(
    search: Callable[[str], float],
    queries: Sequence[str],
    searches: int,
    seconds: float,
    probe: Callable[[], Snapshot | None],
) -> tuple[list[float], list[dict[str, Any]]]:
    """`searches` searches cycling over `queries` (fewer past `seconds`): their latencies, and
    per pass of :data:`WARM_UP_PASS` searches the p95 and the CPU per search."""
    latencies: list[float] = []
    passes: list[dict[str, Any]] = []
    started = time.perf_counter()
    before, pass_start = probe(), 0
    while len(latencies) < searches:
        latencies.append(search(queries[len(latencies) % len(queries)]))
        out_of_time = time.perf_counter() - started >= seconds
        if len(latencies) - pass_start == WARM_UP_PASS or len(latencies) == searches or out_of_time:
            after = probe()
            taken = latencies[pass_start:]
            cpu = per_search_cpu(cpu_between(before, after), len(taken)) or {}
            passes.append(
                {
                    "searches": len(taken),
                    "p95_ms": rounded(percentile(taken, 95), 2),
                    "client_cpu_ms_per_search": cpu.get("client_cpu_ms_per_search"),
                    "neo4j_cpu_ms_per_search": cpu.get("neo4j_cpu_ms_per_search"),
                }
            )
            before, pass_start = after, len(latencies)
            if out_of_time:
                break
    return latencies, passes


def measure_local_search(
    driver: Any,
    database: str,
    embedder: Any,
    queries: list[str],
    k: int = 10,
    warm_up: Sequence[str] = (),
    probe: Callable[[], Snapshot | None] = lambda: None,
    warm_up_searches: int | None = None,
    warm_up_seconds: float = WARM_UP_SECONDS,
) -> dict[str, Any]:
    """Hybrid local search (as `nara-kg search` and the evaluation asset run it), per query,
    after `warm_up_searches` searches (one pass by default) over the `warm_up` queries (the first
    ten measured ones when there are none): model, driver pool, page cache, query plans and the
    server's compiled code. `probe` snapshots the machine's CPU: a search is about as much of
    this process's CPU as of Neo4j's on two shared cores, so the p95 moves with what else the
    machine runs (steal, other processes), and the figures say how much there was."""
    from nara_kg.retrieval.entity_path import clear_anchor_neighbourhoods
    from nara_kg.retrieval.search import clear_query_vectors, local_search

    def search(query: str) -> float:
        return local_search(driver, database, embedder.encode, query, k=k).latency_ms

    warm = list(warm_up) or queries[:10]
    warm_latencies, passes = _warm_up(
        search, warm, warm_up_searches or len(warm), warm_up_seconds, probe
    )
    clear_query_vectors()  # every measured query encodes its vector
    # Measured queries reuse only the anchor neighbourhoods that other measured queries read.
    clear_anchor_neighbourhoods()
    before = probe()
    latencies = [search(query) for query in queries]
    cpu = cpu_between(before, probe())
    return {
        "queries": len(latencies),
        "warm_up_queries": len(warm),
        "k": k,
        **_latency_figures(latencies),
        "cpu": per_search_cpu(cpu, len(latencies)),
        "warm_up": {"searches": len(warm_latencies), "passes": passes},
        #: The first searches after the build, as many as are measured: the server as the build
        #: left it.
        "first_searches": _latency_figures(warm_latencies[: len(queries)]),
    }


def per_search_cpu(cpu: dict[str, Any] | None, searches: int) -> dict[str, Any] | None:
    """:func:`~benchmarks.sampling.cpu_between` of the measured searches, with this process's
    and Neo4j's CPU per search in milliseconds."""
    if cpu is None or not searches:
        return cpu
    server = cpu.get("neo4j_cpu_seconds")
    return {
        **cpu,
        "client_cpu_ms_per_search": rounded(cpu["process_cpu_seconds"] * 1000 / searches, 2),
        "neo4j_cpu_ms_per_search": (
            rounded(server * 1000 / searches, 2) if server is not None else None
        ),
    }


def measure_global_search(
    driver: Any, database: str, embedder: Any, questions: list[str]
) -> dict[str, Any]:
    """Global search (map-reduce over community reports) with the extractive backend, through
    `ask` as the CLI runs it; no generation cache, so every question is answered afresh."""
    from nara_kg.generation.llm import ExtractiveLLM
    from nara_kg.retrieval.ask import ask
    from nara_kg.retrieval.global_search import is_overview_question

    llm = ExtractiveLLM()
    # Warm-up: the driver pool, the model (loaded on first encode, which the first question may
    # not need, so a later one would pay for it), and each level's reports, read and fitted
    # once per process (an overview question reads a coarser level than a topical one). The
    # first question of each kind is timed apart: it is what a fresh process pays once.
    embedder.encode(["warm-up"])
    # The classifier sends requests for records ("What kinds of records describe ...?") to
    # local search even in global mode: its first search in a process is warmed up here too.
    ask(driver, database, embedder, llm, None, questions[0], mode="local")
    first_of_kind = list({is_overview_question(q): q for q in reversed(questions)}.values())
    cold_ms = []
    for question in first_of_kind:
        started = time.perf_counter()
        ask(driver, database, embedder, llm, None, question, mode="global")
        cold_ms.append(rounded((time.perf_counter() - started) * 1000.0, 2))
    latencies = []
    answered = 0
    for question in questions:
        started = time.perf_counter()
        response = ask(driver, database, embedder, llm, None, question, mode="global")
        latencies.append((time.perf_counter() - started) * 1000.0)
        answered += int(not response.refused)
    return {
        "queries": len(latencies),
        "answered": answered,
        "p50_ms": rounded(percentile(latencies, 50), 2),
        "p95_ms": rounded(percentile(latencies, 95), 2),
        "max_ms": rounded(max(latencies) if latencies else float("nan"), 2),
        "first_question_per_level_ms": cold_ms,
    }


def global_questions(data_dir: Path, count: int) -> list[str]:
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
