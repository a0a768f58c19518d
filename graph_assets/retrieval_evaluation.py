"""The retrieval_evaluation asset: retrieval quality of the finished graph, with its advisory
threshold check (named in :mod:`quality.names`). Core: :mod:`nara_kg.retrieval.evaluation`
(the metrics, the pass rule, the retriever, the global and answer runs)."""

from collections.abc import Iterator
from typing import Any

import dagster as dg

from graph_assets.common import GRAPH_GROUP, OWNERS, severity, table, timed
from graph_assets.community_reports import community_reports
from graph_assets.evaluation_metadata import answer_metadata, per_question_table, search_figures
from graph_assets.relationships import (
    authority_relationships,
    includes_relationships,
    next_relationships,
)
from graph_assets.vector_index import vector_index
from nara_kg.embedding.encoder import Embedder
from nara_kg.model.check_names import RETRIEVAL_THRESHOLDS_CHECK, is_blocking
from nara_kg.retrieval.evaluation import (
    MIN_HIT_AT_5,
    MIN_MRR_AT_10,
    EvaluationReport,
    Question,
    answer_report,
    evaluate_local,
    global_results,
    load_questions,
    meets_thresholds,
    search_retriever,
)
from nara_kg.retrieval.known_items import known_item_questions, read_known_item_records
from resources import EmbeddingModel, LLMResource, Neo4jResource, PipelinePaths

#: Records the generated known-item questions are made from, and the seed that picks them.
KNOWN_ITEM_SAMPLE = 50
KNOWN_ITEM_SEED = 7


@dg.asset(
    group_name=GRAPH_GROUP,
    kinds={"python", "neo4j"},
    owners=OWNERS,
    deps=[
        vector_index,
        next_relationships,
        includes_relationships,
        authority_relationships,
        community_reports,
    ],
    check_specs=[
        dg.AssetCheckSpec(
            RETRIEVAL_THRESHOLDS_CHECK,
            asset="retrieval_evaluation",
            description=f"hit@5 >= {MIN_HIT_AT_5} and MRR@10 >= {MIN_MRR_AT_10}",
            blocking=is_blocking(RETRIEVAL_THRESHOLDS_CHECK),
        )
    ],
    description=(
        "Runs the question file (JSONL: id, question, expected_naids, mode) through hybrid "
        "local search and records hit@1, hit@5, MRR@10 and latency p50/p95; global questions "
        "go through global search over the community reports, recording whether an answer "
        "was given and which communities supported it. A file that labels answers "
        "(expected_facts, answerable) is also answered through ask and judged: answer "
        "accuracy overall and per kind, refusal rate of unanswerable questions. Without a "
        "question file (a real export has none), known-item questions made from the export "
        "are asked instead: a sample of records (fixed seed), each asked for by its title's "
        "words as a user would type them, with that record as the answer; the metadata says "
        "they were generated. Core: nara_kg.retrieval.evaluation.evaluate_local, "
        "evaluate_answers, nara_kg.retrieval.search.local_search, nara_kg.retrieval.ask.ask, "
        "nara_kg.retrieval.known_items.known_item_questions."
    ),
)
def retrieval_evaluation(
    context: dg.AssetExecutionContext,
    neo4j: Neo4jResource,
    embedding_model: EmbeddingModel,
    paths: PipelinePaths,
    llm: LLMResource,
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    questions_path = paths.questions_path
    if not questions_path.exists():
        # A real export carries no question file: known-item questions made from it instead.
        yield from _known_item_evaluation(context, neo4j, embedding_model, paths)
        return
    questions = load_questions(questions_path)
    embedder = embedding_model.get_embedder()
    metadata: dict[str, Any] = {}
    report = _search_questions(questions, neo4j, embedder, metadata)
    context.log.info(
        f"hit@1={report.hit_at_1:.3f} hit@5={report.hit_at_5:.3f} "
        f"mrr@10={report.mrr_at_10:.3f} p95={report.latency_ms_p95:.1f}ms over {report.n}"
    )
    run = (neo4j.get_driver(), neo4j.database, embedder, llm.get_llm, paths.llm_cache_path)
    global_rows = global_results(questions, *run)
    answers = answer_report(questions, *run)
    yield dg.MaterializeResult(
        metadata={
            **metadata,
            "questions_file": dg.MetadataValue.path(str(questions_path)),
            "question_file_found": True,
            "n": report.n,
            **search_figures(report),
            "skipped_questions": len(report.skipped) - len(global_rows),
            "global_questions": len(global_rows),
            "global_answered": sum(1 for row in global_rows if row["answered"]),
            "global_results": table(global_rows, limit=50),
            "per_question": per_question_table(report, ("id", "question", "rank", "latency_ms")),
            **(answer_metadata(answers) if answers else {}),
        }
    )
    yield dg.AssetCheckResult(
        check_name=RETRIEVAL_THRESHOLDS_CHECK,
        passed=meets_thresholds(report),
        severity=severity(RETRIEVAL_THRESHOLDS_CHECK),
        metadata={
            "hit_at_5": report.hit_at_5,
            "mrr_at_10": report.mrr_at_10,
            "min_hit_at_5": MIN_HIT_AT_5,
            "min_mrr_at_10": MIN_MRR_AT_10,
        },
    )


def _search_questions(
    questions: list[Question], neo4j: Neo4jResource, embedder: Embedder, metadata: dict[str, Any]
) -> EvaluationReport:
    """hit@k, MRR and latency of the questions through hybrid local search (top 10); the
    step's seconds go into `metadata`."""
    retrieve = search_retriever(neo4j.get_driver(), neo4j.database, embedder.encode)
    embedder.encode(["warm-up"])  # the first call pays for loading; keep it out of latencies
    with timed(metadata):
        return evaluate_local(questions, retrieve)


def _known_item_evaluation(
    context: dg.AssetExecutionContext,
    neo4j: Neo4jResource,
    embedding_model: EmbeddingModel,
    paths: PipelinePaths,
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """hit@k and MRR over known-item questions generated from the parsed export, labelled as
    generated; with no record to ask about, the check fails as not evaluated (a warning)."""
    parts = sorted(paths.layout.parsed_dir.glob("*.records.parquet"))
    questions = known_item_questions(
        read_known_item_records(parts), sample=KNOWN_ITEM_SAMPLE, seed=KNOWN_ITEM_SEED
    )
    source: dict[str, Any] = {
        "questions_file": dg.MetadataValue.path(str(paths.questions_path)),
        "question_file_found": False,
        "question_source": "generated: known items from the export",
        "known_item_seed": KNOWN_ITEM_SEED,
    }
    if not questions:
        context.log.warning("no question file and no record to make a question of: not evaluated")
        yield dg.MaterializeResult(metadata={**source, "evaluated": False, "n": 0})
        yield dg.AssetCheckResult(
            check_name=RETRIEVAL_THRESHOLDS_CHECK,
            passed=False,
            severity=dg.AssetCheckSeverity.WARN,
            description=(
                f"not evaluated: no question file at {paths.questions_path} and no record in "
                "the export to make a known-item question of"
            ),
            metadata={"evaluated": False},
        )
        return
    metadata: dict[str, Any] = {}
    report = _search_questions(questions, neo4j, embedding_model.get_embedder(), metadata)
    context.log.info(
        f"known items: hit@1={report.hit_at_1:.3f} hit@5={report.hit_at_5:.3f} "
        f"mrr@10={report.mrr_at_10:.3f} over {report.n} generated questions"
    )
    columns = ("id", "question", "expected", "rank", "latency_ms")
    yield dg.MaterializeResult(
        metadata={
            **metadata,
            **source,
            "evaluated": True,
            "n": report.n,
            **search_figures(report),
            "per_question": per_question_table(report, columns),
        }
    )
    yield dg.AssetCheckResult(
        check_name=RETRIEVAL_THRESHOLDS_CHECK,
        passed=meets_thresholds(report),
        severity=severity(RETRIEVAL_THRESHOLDS_CHECK),
        description=f"measured on {report.n} known-item questions generated from the export",
        metadata={
            "hit_at_1": round(report.hit_at_1, 4),
            "hit_at_5": round(report.hit_at_5, 4),
            "mrr_at_10": round(report.mrr_at_10, 4),
            "min_hit_at_5": MIN_HIT_AT_5,
            "min_mrr_at_10": MIN_MRR_AT_10,
            "question_source": "generated",
            "evaluated": True,
        },
    )
