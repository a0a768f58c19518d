"""Evaluation: question files (:mod:`~nara_kg.retrieval.eval_questions`), the retrieval metrics
hit@k, MRR@k and latency percentiles and the pass rule of retrieval quality
(:mod:`~nara_kg.retrieval.retrieval_metrics`), answer accuracy
(:mod:`~nara_kg.retrieval.answer_accuracy`), and here the runs of a question file against the
graph (global questions, answers) that the retrieval_evaluation asset, `nara-kg eval` and the
benchmark share; this module also gathers the names its callers import from those."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nara_kg.retrieval.answer_accuracy import (
    EXCERPT_CHARS,
    Answerer,
    AnswerJudgement,
    AnswerReport,
    GivenAnswer,
    answer_accuracy_by_kind,
    evaluate_answers,
    excerpt,
    judge_answer,
    normalize_text,
    states_fact,
)
from nara_kg.retrieval.eval_questions import QUESTION_MODES, Question, load_questions
from nara_kg.retrieval.retrieval_metrics import (
    MIN_HIT_AT_5,
    MIN_MRR_AT_10,
    RETRIEVED,
    EvaluationReport,
    Retriever,
    evaluate_local,
    first_relevant_rank,
    hit_at,
    meets_thresholds,
    metrics_by_kind,
    mrr_at,
    percentile,
    search_retriever,
)

if TYPE_CHECKING:
    from neo4j import Driver

    from nara_kg.embedding.encoder import Embedder
    from nara_kg.generation.llm_base import LLM

__all__ = [
    "EXCERPT_CHARS",
    "MIN_HIT_AT_5",
    "MIN_MRR_AT_10",
    "QUESTION_MODES",
    "RETRIEVED",
    "AnswerJudgement",
    "AnswerReport",
    "Answerer",
    "EvaluationReport",
    "GivenAnswer",
    "Question",
    "Retriever",
    "answer_accuracy_by_kind",
    "answer_report",
    "evaluate_answers",
    "evaluate_local",
    "excerpt",
    "first_relevant_rank",
    "global_results",
    "hit_at",
    "judge_answer",
    "load_questions",
    "meets_thresholds",
    "metrics_by_kind",
    "mrr_at",
    "normalize_text",
    "percentile",
    "search_retriever",
    "states_fact",
]


def global_results(
    questions: Sequence[Question],
    driver: Driver,
    database: str,
    embedder: Embedder,
    get_llm: Callable[[], LLM],
    cache_path: Path,
) -> list[dict[str, Any]]:
    """Each global question asked through global search over the community reports: whether
    it was answered, the communities that supported the answer, the latency. `get_llm` is
    called only when there is a global question (a misconfigured backend fails no other run)."""
    from nara_kg.generation.generation_cache import GenerationCache
    from nara_kg.retrieval.ask import ask

    rows: list[dict[str, Any]] = []
    selected = [q for q in questions if q.mode == "global"]
    if not selected:
        return rows
    with GenerationCache(cache_path) as cache:
        llm = get_llm()
        for question in selected:
            response = ask(driver, database, embedder, llm, cache, question.question, mode="global")
            rows.append(
                {
                    "id": question.id,
                    "question": question.question,
                    "answered": not response.refused,
                    "communities": ", ".join(
                        response.global_sources.communities if response.global_sources else ()
                    ),
                    "latency_ms": response.latency_ms,
                }
            )
    return rows


def answer_report(
    questions: Sequence[Question],
    driver: Driver,
    database: str,
    embedder: Embedder,
    get_llm: Callable[[], LLM],
    cache_path: Path,
) -> AnswerReport | None:
    """Answer accuracy of the questions that label answers, each asked as `nara-kg ask` asks
    it (None, and `get_llm` not called, when no question labels its answer)."""
    from nara_kg.generation.generation_cache import GenerationCache
    from nara_kg.retrieval.answer_runs import ask_answerer

    if not any(q.has_answer_label for q in questions):
        return None
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    with GenerationCache(cache_path) as cache:
        answerer = ask_answerer(driver, database, embedder, get_llm(), cache)
        return evaluate_answers(questions, answerer)
