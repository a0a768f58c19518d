"""Answer evaluation through the project's own ask path: an
:data:`~nara_kg.retrieval.evaluation.Answerer` that asks each question the way `nara-kg ask`
does (the question's own mode, the configured backend with the extractive fallback)."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from neo4j import Driver

from nara_kg.embedding.encoder import Embedder
from nara_kg.generation.llm import LLM, GenerationCache
from nara_kg.retrieval.ask import AskResponse, Mode, ask_with_fallback
from nara_kg.retrieval.evaluation import Answerer, GivenAnswer, Question


def ask_answerer(
    driver: Driver,
    database: str,
    embedder: Embedder,
    llm: LLM,
    cache: GenerationCache | None,
    *,
    k: int = 5,
    on_response: Callable[[Question, AskResponse], None] | None = None,
) -> Answerer:
    """`on_response` sees each whole response (its faithfulness counts, its method) before it
    is reduced to the answer that is judged."""

    def answer(question: Question) -> GivenAnswer:
        response = ask_with_fallback(
            driver,
            database,
            embedder,
            llm,
            cache,
            question.question,
            mode=cast(Mode, question.mode),
            k=k,
        )
        if on_response is not None:
            on_response(question, response)
        return GivenAnswer(
            text=response.answer,
            refused=response.refused,
            latency_ms=response.latency_ms,
            na_ids=tuple(record.naId for record in response.records),
            method=response.method,
        )

    return answer
