"""Answer evaluation through the project's own ask path: an
:data:`~nara_kg.retrieval.evaluation.Answerer` that asks each question the way `nara-kg ask`
does (the question's own mode, the configured backend with the extractive fallback)."""

from __future__ import annotations

from typing import cast

from neo4j import Driver

from nara_kg.embedding.encoder import Embedder
from nara_kg.generation.llm import LLM, GenerationCache
from nara_kg.retrieval.ask import Mode, ask_with_fallback
from nara_kg.retrieval.evaluation import Answerer, GivenAnswer, Question


def ask_answerer(
    driver: Driver,
    database: str,
    embedder: Embedder,
    llm: LLM,
    cache: GenerationCache | None,
    *,
    k: int = 5,
) -> Answerer:
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
        return GivenAnswer(
            text=response.answer,
            refused=response.refused,
            latency_ms=response.latency_ms,
            na_ids=tuple(record.naId for record in response.records),
            method=response.method,
        )

    return answer
