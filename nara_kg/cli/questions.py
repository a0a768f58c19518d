"""`nara-kg search`, `nara-kg ask` and `nara-kg eval`: the questions side of the command line."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import click

from nara_kg.cli.common import TEXT, cli_resources, int_option
from nara_kg.model.limits import MAX_K, MAX_LEVEL, MAX_NA_ID


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
            type=TEXT,
            help='Type of archival materials, e.g. "Textual Records" (repeatable).',
        ),
        click.option(
            "--date-from", type=TEXT, default=None, help="YYYY[-MM[-DD]]: dates reaching it."
        ),
        click.option("--date-to", type=TEXT, default=None, help="YYYY[-MM[-DD]]: dates up to it."),
        int_option(
            "--within",
            default=None,
            low=1,
            high=MAX_NA_ID,
            help="naId of a record group, series, file unit or collection: only records under it.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@contextmanager
def _generation_cache(resources: Any) -> Iterator[Any]:
    """The generation cache beside the work data, the one the build's reports go through."""
    from nara_kg.generation.llm import GenerationCache

    path = resources.paths.llm_cache_path
    path.parent.mkdir(parents=True, exist_ok=True)
    with GenerationCache(path) as cache:
        yield cache


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


@click.command()
@click.argument("query", type=TEXT)
@int_option("--k", default=5, low=1, high=MAX_K, help="Number of records to return.")
@click.option("--json", "as_json", is_flag=True)
@_filter_options
def search(query: str, k: int, as_json: bool, **filter_options: Any) -> None:
    """Hybrid local search (vector + full-text, fused) with hierarchy and authorities."""
    from nara_kg.retrieval.search import local_search

    filters = _filters(filter_options)
    with cli_resources() as r:
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


@click.command("eval")
@click.option(
    "--questions",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="JSONL: id, question, expected_naids, mode; with expected_facts / answerable, the "
    "questions are also answered and the answers judged.",
)
@click.option(
    "--no-entity-path",
    is_flag=True,
    help="Leave out the ranking through the authorities a question names (to compare).",
)
@click.option(
    "--no-answers",
    is_flag=True,
    help="Measure retrieval only, even when the file labels answers.",
)
@click.option("--json", "as_json", is_flag=True)
def evaluate(questions: Path, no_entity_path: bool, no_answers: bool, as_json: bool) -> None:
    """Retrieval metrics over a question file: hit@1, hit@5, MRR@10, latency p50/p95; with
    mention_labels.jsonl beside it, entity linking's precision and recall against it; for a
    file that labels answers (expected_facts, answerable), answer accuracy overall and by kind
    and the refusal rate of unanswerable questions, each question asked as `nara-kg ask` asks."""
    from nara_kg.graph.mentions import record_mention_pairs
    from nara_kg.linking.labels import LABELS_FILE, load_labels, score_labels
    from nara_kg.retrieval.evaluation import (
        answer_report,
        evaluate_local,
        load_questions,
        search_retriever,
    )

    loaded = load_questions(questions)
    with cli_resources() as r:
        driver, database = r.neo4j.get_driver(), r.neo4j.database
        embedder = r.embedding_model.get_embedder()
        embedder.encode(["warm-up"])
        retrieve = search_retriever(
            driver, database, embedder.encode, entity_path=not no_entity_path
        )
        report = evaluate_local(loaded, retrieve).to_dict()
        labels = questions.with_name(LABELS_FILE)
        if labels.exists():
            pairs = record_mention_pairs(driver, database)
            report["entity_linking"] = score_labels(pairs, load_labels(labels)).to_dict()
        if not no_answers:
            answers = answer_report(
                loaded, driver, database, embedder, r.llm.get_llm, r.paths.llm_cache_path
            )
            if answers is not None:
                report["answers"] = answers.to_dict()
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
    if "answers" in report:
        _echo_answers(report["answers"])


def _echo_answers(answers: dict[str, Any]) -> None:
    click.echo(f"answer accuracy  {answers['accuracy']} over {answers['n']}")
    click.echo(f"refused unanswerable {answers['refusal_rate_unanswerable']}")
    click.echo(f"refused answerable   {answers['refusal_rate_answerable']}")
    for kind, metrics in answers["by_kind"].items():
        click.echo(
            f"  {kind:14} accuracy {metrics['accuracy']}  ({metrics['answered']}/{metrics['n']})"
        )
    for row in answers["per_question"]:
        if not row["answered"]:
            missing = ", ".join(row["missing"]) or ("not refused" if not row["answerable"] else "")
            click.echo(f"  FAIL {row['id']} [{row['kind']}] {row['question']}")
            click.echo(f"       missing: {missing or 'refused'}; answer: {row['answer'] or '-'}")


@click.command("ask")
@click.argument("question", type=TEXT)
@click.option(
    "--mode",
    type=click.Choice(["local", "global", "auto"]),
    default="auto",
    show_default=True,
    help="local: records found by hybrid search; global: community reports; auto: decide.",
)
@int_option("--k", default=5, low=1, high=MAX_K, help="Records retrieved for local answers.")
@int_option(
    "--level", default=None, low=0, high=MAX_LEVEL, help="Community level for global search."
)
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
    from nara_kg.cli.quick import import_driver_without_dataframes, quick_resources

    import_driver_without_dataframes()
    from nara_kg.retrieval.ask import Mode, ask_with_fallback

    filters = _filters(filter_options)
    with quick_resources() as quick:
        # The default, model-free path opens without Dagster (nara_kg.cli.quick).
        if quick is not None:
            response = ask_with_fallback(
                quick.driver,
                quick.database,
                quick.embedder,
                quick.llm,
                None,
                question,
                strict=strict_llm or quick.strict,
                mode=cast(Mode, mode),
                k=k,
                level=level,
                filters=filters,
            )
    if quick is None:
        with cli_resources() as r, _generation_cache(r) as cache:
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
