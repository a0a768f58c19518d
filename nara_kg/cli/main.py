"""`nara-kg`: the command line of the platform."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import click

from nara_kg.cli.bench import bench_command
from nara_kg.cli.neo4j import neo4j_group
from nara_kg.settings import PROJECT_ROOT, Neo4jSettings, dagster_home

#: The embedded instance of `make demo` (SQLite): run monitoring marks a run whose process died
#: as failed; the pools admit one user of the embedding model and one Neo4j writer at a time
#: (on 2 cores more would only contend); at most two runs at once when launched from the UI.
#: deploy/postgres/dagster.yaml is the same on PostgreSQL.
LOCAL_INSTANCE_YAML = """\
telemetry:
  enabled: false
run_monitoring:
  enabled: true
  poll_interval_seconds: 15
concurrency:
  pools:
    default_limit: 1
  runs:
    max_concurrent_runs: 2
"""


def _dagster_home() -> Path:
    """A persistent Dagster instance, so the UI shows the runs that `build` made."""
    home = dagster_home()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text(LOCAL_INSTANCE_YAML, encoding="utf-8")
    return home


class _Commands(click.Group):
    """Expected failures (a server down, a wrong password, an empty query, nothing built yet)
    end in one line on stderr and exit code 2; `--debug` shows the traceback instead."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as error:
            from nara_kg.errors import explain

            message = explain(error)
            if message is None or (ctx.obj or {}).get("debug"):
                raise
            click.echo(f"error: {message}", err=True)
            ctx.exit(2)


@click.group(cls=_Commands, help="Build and query the NARA catalog knowledge graph.")
@click.version_option(package_name="nara-kg")
@click.option(
    "--debug",
    is_flag=True,
    envvar="NARA_KG_DEBUG",
    help="Show the full traceback of a failure instead of one line.",
)
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    ctx.obj = {"debug": debug}


main.add_command(neo4j_group)
main.add_command(bench_command)


@main.command("demo-data")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--records", default=400, show_default=True, help="Approximate record count.")
@click.option("--seed", default=7, show_default=True)
@click.option(
    "--shard-lines",
    default=200,
    show_default=True,
    help="Records per output file (smaller: more files, e.g. to exercise partitions).",
)
@click.option(
    "--real-export",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also emit authority records for the creators[] naIds found in this real export.",
)
def demo_data(
    out_dir: Path, records: int, seed: int, shard_lines: int, real_export: Path | None
) -> None:
    """Generate realistic NARA export records of all ten types into OUT_DIR."""
    from nara_kg.demo import generate_demo_data

    summary = generate_demo_data(
        out_dir, records=records, seed=seed, real_export_dir=real_export, shard_lines=shard_lines
    )
    total = sum(summary.records_by_type.values())
    click.echo(f"wrote {total} records in {len(summary.files)} files under {out_dir}")
    for node_type, count in sorted(summary.records_by_type.items()):
        click.echo(f"  {node_type:22} {count}")
    click.echo(f"questions: {summary.questions_path}")


def _ensure_server() -> None:
    from nara_kg.devserver import process as neo4j_server
    from nara_kg.settings import neo4j_home

    settings = Neo4jSettings.from_env()
    if settings.managed:
        neo4j_server.start(settings, neo4j_home(), log=lambda m: click.echo(m, err=True))


@main.command()
@click.option(
    "--data",
    "data_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Input export folder (default: NARA_DATA_DIR, else the demo data).",
)
@click.option(
    "--full",
    is_flag=True,
    help="kg_full_rebuild: re-parse, re-chunk and re-embed every file, rewrite every node.",
)
@click.option(
    "--parallel",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Run the per-file stages as this many concurrent runs (one per range of files).",
)
@click.option(
    "--wait",
    "wait_s",
    default=0.0,
    show_default=True,
    help="Seconds to wait for a build already running on the same work folder (0: refuse).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary.")
def build(data_dir: Path | None, full: bool, parallel: int, wait_s: float, as_json: bool) -> None:
    """Run the knowledge-graph job over every input file (the jobs the UI shows).

    `kg_incremental` (unchanged files, chunks and relationships are skipped) or, with --full,
    `kg_full_rebuild`; the runs land in the Dagster instance at DAGSTER_HOME. Exits non-zero
    when a run fails, a blocking check included.
    """
    import dagster as dg

    from nara_kg.app.launch import build as launch_build
    from nara_kg.app.locking import build_lock

    with _resources() as r:
        data = (data_dir or r.paths.data_path).resolve()
        work, follow = r.paths.layout.root, r.paths.follow_external_links
    _dagster_home()
    _ensure_server()
    with (
        build_lock(work, wait_s=wait_s, command=" ".join(sys.argv)),
        dg.DagsterInstance.get() as instance,
    ):
        outcome = launch_build(
            data,
            instance,
            full=full,
            parallel=parallel,
            follow_external_links=follow,
            log=lambda message: click.echo(message, err=True),
        )
    parsed = outcome.assets.get("parsed_records", {})
    selection = outcome.assets.get("record_selection", {})
    nodes = outcome.assets.get("graph_nodes", {})
    summary: dict[str, Any] = {
        "success": outcome.success,
        "run_id": outcome.run_ids[-1] if outcome.run_ids else None,
        "run_ids": outcome.run_ids,
        "data_dir": str(data),
        "full": full,
        "parallel": parallel,
        "seconds": outcome.seconds,
        "partitions": {
            "total": outcome.partitions.total,
            "added": len(outcome.partitions.added),
            "removed": len(outcome.partitions.removed),
            "invalid_names": outcome.partitions.invalid,
        },
        "files_processed": parsed.get("files_parsed", 0),
        "files_skipped": parsed.get("files_skipped_unchanged", 0),
        "records_loaded": nodes.get("records_written", 0),
        "records_removed": nodes.get("records_removed", 0),
        "lines_rejected": selection.get("lines_rejected", 0),
        "rejects_path": selection.get("rejects_path"),
        "checks_failed": outcome.checks_failed,
        "assets": {
            asset: {
                key: value
                for key, value in values.items()
                if isinstance(value, int | float | str) and not isinstance(value, bool)
            }
            for asset, values in outcome.assets.items()
        },
    }
    if not outcome.success:
        summary["failed_steps"] = outcome.failed_steps
    if as_json:
        click.echo(json.dumps(summary, indent=2, default=str))
    else:
        for key, values in summary["assets"].items():
            shown = {k: v for k, v in values.items() if k != "data_dir"}
            click.echo(f"{key:26} {json.dumps(shown, default=str)[:200]}")
        status = "succeeded" if outcome.success else "FAILED"
        click.echo(f"build {status} (runs {', '.join(outcome.run_ids)})")
        if summary["checks_failed"]:
            click.echo(f"checks failed: {', '.join(summary['checks_failed'])}")
    if not outcome.success:
        sys.exit(1)


@contextmanager
def _resources() -> Iterator[Any]:
    """The Definitions' own resources (same bindings and defaults), initialized here."""
    from resources import open_resources

    with open_resources() as resources:
        yield resources


def _filter_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The search filters (retrieval.filters.SearchFilters) as options of `search` and `ask`."""
    options = [
        click.option(
            "--description-level",
            "levels",
            multiple=True,
            type=click.Choice(["item", "fileUnit", "series", "recordGroup", "collection"]),
            help="Only records of this level of description (repeatable).",
        ),
        click.option(
            "--record-type",
            type=click.Choice(["description", "authority"]),
            default=None,
            help="Only description or only authority records.",
        ),
        click.option(
            "--authority-type",
            "authority_types",
            multiple=True,
            type=click.Choice(
                [
                    "person",
                    "organization",
                    "geographicPlaceName",
                    "specificRecordsType",
                    "topicalSubject",
                ]
            ),
            help="Only authority records of this type (repeatable; with --description-level, "
            "either matches).",
        ),
        click.option(
            "--materials",
            multiple=True,
            help='Type of archival materials, e.g. "Textual Records" (repeatable).',
        ),
        click.option("--date-from", default=None, help="YYYY[-MM[-DD]]: dates reaching it."),
        click.option("--date-to", default=None, help="YYYY[-MM[-DD]]: dates up to it."),
        click.option(
            "--within",
            type=int,
            default=None,
            help="naId of a record group, series, file unit or collection: only records under it.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _filters(options: dict[str, Any]) -> Any:
    from nara_kg.retrieval.filters import SearchFilters

    return SearchFilters(
        levels=tuple(options["levels"]),
        record_type=options["record_type"],
        authority_types=tuple(options["authority_types"]),
        materials=tuple(options["materials"]),
        date_from=options["date_from"],
        date_to=options["date_to"],
        within=options["within"],
    )


@main.command()
@click.argument("query")
@click.option("--k", default=5, show_default=True, help="Number of records to return.")
@click.option("--json", "as_json", is_flag=True)
@_filter_options
def search(query: str, k: int, as_json: bool, **filter_options: Any) -> None:
    """Hybrid local search (vector + full-text, fused) with hierarchy and authorities."""
    from nara_kg.retrieval.search import local_search

    filters = _filters(filter_options)
    with _resources() as r:
        embedder = r.embedding_model.get_embedder()
        result = local_search(
            r.neo4j.get_driver(), r.neo4j.database, embedder.encode, query, k=k, filters=filters
        )
    if as_json:
        click.echo(
            json.dumps(
                {
                    "query": query,
                    "filters": filters.describe(),
                    "latency_ms": round(result.latency_ms, 2),
                    "hits": [h.to_dict() for h in result.hits],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    for rank, hit in enumerate(result.hits, start=1):
        click.echo(f"{rank}. [{hit.type}] {hit.title}  (naId {hit.naId}, score {hit.score:.4f})")
        click.echo(f"   {hit.source}")
        path = " > ".join(str(h.get("title") or h.get("naId")) for h in hit.hierarchy[:-1])
        if path:
            click.echo(f"   in: {path}")
        for authority in hit.authorities[:5]:
            click.echo(f"   {authority['relationship']}: {authority.get('heading')}")
    click.echo(f"({len(result.hits)} records, {result.latency_ms:.0f} ms)")


@main.command("eval")
@click.option(
    "--questions",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="JSONL: id, question, expected_naids, mode.",
)
@click.option(
    "--no-entity-path",
    is_flag=True,
    help="Leave out the ranking through the authorities a question names (to compare).",
)
@click.option("--json", "as_json", is_flag=True)
def evaluate(questions: Path, no_entity_path: bool, as_json: bool) -> None:
    """Retrieval metrics over a question file: hit@1, hit@5, MRR@10, latency p50/p95; with
    mention_labels.jsonl beside it, entity linking's precision and recall against it."""
    from nara_kg.graph.mentions import record_mention_pairs
    from nara_kg.linking.labels import LABELS_FILE, load_labels, score_labels
    from nara_kg.retrieval.evaluation import evaluate_local, load_questions
    from nara_kg.retrieval.search import local_search

    with _resources() as r:
        driver, database = r.neo4j.get_driver(), r.neo4j.database
        embedder = r.embedding_model.get_embedder()
        embedder.encode(["warm-up"])

        def retrieve(text: str) -> tuple[list[int], float]:
            result = local_search(
                driver, database, embedder.encode, text, k=10, entity_path=not no_entity_path
            )
            return [h.naId for h in result.hits], result.latency_ms

        report = evaluate_local(load_questions(questions), retrieve).to_dict()
        labels = questions.with_name(LABELS_FILE)
        if labels.exists():
            pairs = record_mention_pairs(driver, database)
            report["entity_linking"] = score_labels(pairs, load_labels(labels)).to_dict()
    if as_json:
        report["per_question_ranks"] = {q["id"]: q["rank"] for q in report["per_question"]}
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    for key in ("n", "hit_at_1", "hit_at_5", "mrr_at_10", "latency_ms_p50", "latency_ms_p95"):
        click.echo(f"{key:16} {report[key]}")
    for kind, metrics in report["by_kind"].items():
        figures = "  ".join(f"{name} {value}" for name, value in metrics.items())
        click.echo(f"  {kind:14} {figures}")
    if "entity_linking" in report:
        figures = "  ".join(f"{k} {v}" for k, v in report["entity_linking"].items())
        click.echo(f"entity linking   {figures}")


@main.command("ask")
@click.argument("question")
@click.option(
    "--mode",
    type=click.Choice(["local", "global", "auto"]),
    default="auto",
    show_default=True,
    help="local: records found by hybrid search; global: community reports; auto: decide.",
)
@click.option("--k", default=5, show_default=True, help="Records retrieved for local answers.")
@click.option("--level", type=int, default=None, help="Community level for global search.")
@click.option(
    "--strict-llm",
    is_flag=True,
    help="Fail when the configured LLM does not answer (default: answer extractively).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the answer with its provenance.")
@_filter_options
def ask_command(
    question: str,
    mode: str,
    k: int,
    level: int | None,
    strict_llm: bool,
    as_json: bool,
    **filter_options: Any,
) -> None:
    """Answer a question (or list records) from the graph, with the provenance subgraph."""
    from nara_kg.generation.llm import GenerationCache
    from nara_kg.retrieval.ask import Mode, ask_with_fallback

    filters = _filters(filter_options)
    with _resources() as r:
        cache_path = r.paths.llm_cache_path
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        with GenerationCache(cache_path) as cache:
            response = ask_with_fallback(
                r.neo4j.get_driver(),
                r.neo4j.database,
                r.embedding_model.get_embedder(),
                r.llm.get_llm(),
                cache,
                question,
                strict=strict_llm or r.llm.strict,
                mode=cast(Mode, mode),
                k=k,
                level=level,
                filters=filters,
            )
    if as_json:
        click.echo(json.dumps(response.to_dict(), indent=2, ensure_ascii=False, default=str))
        return
    if response.fallback is not None:
        click.echo(f"note: {response.fallback.reason}; answered extractively", err=True)
    click.echo(
        f"[{response.request_type} via {response.classification_method}; "
        f"{response.mode} search; {response.method}]"
    )
    if response.answer:
        click.echo(response.answer)
    for rank, record in enumerate(response.records, start=1):
        click.echo(f"{rank}. [{record.type}] {record.title}  {record.source}")
    if response.global_sources is not None:
        click.echo(f"communities: {', '.join(response.global_sources.communities) or '-'}")
    provenance = response.provenance
    click.echo(
        f"(provenance: {len(provenance.nodes)} nodes, "
        f"{len(provenance.relationships)} relationships; --json for all)"
    )


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--rate-limit",
    default=120,
    show_default=True,
    type=click.IntRange(0, None),
    help="API requests a minute per client (0: no limit).",
)
def serve(host: str, port: int, rate_limit: int) -> None:
    """The question-answering API and the chat page (http://HOST:PORT/, schema at /docs)."""
    from nara_kg.api.server import serve as run_server

    _ensure_server()
    run_server(host, port, rate_per_minute=rate_limit, log=lambda m: click.echo(m, err=True))


@main.command()
@click.option("--port", default=3000, show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True)
def ui(port: int, host: str) -> None:
    """Open the Dagster UI on this code location (with the same environment defaults)."""
    _dagster_home()
    command = [
        sys.executable,
        "-m",
        "dagster",
        "dev",
        "-w",
        str(PROJECT_ROOT / "workspace.yaml"),
        "-h",
        host,
        "-p",
        str(port),
    ]
    click.echo(f"Dagster UI on http://{host}:{port} (Ctrl-C to stop)")
    raise SystemExit(subprocess.call(command, cwd=PROJECT_ROOT))
