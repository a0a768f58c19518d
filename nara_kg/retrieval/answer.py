"""Grounded local answers: one or two sentences from the retrieved records, each ending in
its citation marker, or the refusal.

Retrieval happens elsewhere (:mod:`nara_kg.retrieval.search`). With a model, seed 000's answer
prompt answers from plain :class:`AnswerContext` records and each reply sentence is cited to
the context it shares most words with. The offline default
(:class:`~nara_kg.generation.llm.ExtractiveLLM`) answers from the top records as the graph
holds them (:class:`~nara_kg.retrieval.graph_record.GraphRecord`), in this order: what an exact
naId or title names; a graph fact (:mod:`nara_kg.retrieval.fact_answers`); the sentence of the
records' text that answers (:mod:`nara_kg.retrieval.extractive`), with the record's dates or
its children counted standing in for a when / how-many question whose text states none; a
title-only record whose title is what was asked for; else the seed's refusal sentence followed
by the records that came closest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from nara_kg.generation.llm import LLM, GenerationCache, cached_complete, is_extractive
from nara_kg.retrieval.citations import AnswerCitation, CitedSentence, Source, attribute, cite
from nara_kg.retrieval.extractive import MIN_COVERAGE, candidates, choose, sentences
from nara_kg.retrieval.fact_answers import (
    Fact,
    count_fallback,
    dates_fallback,
    fact_answer,
    identity,
    title_coverage,
)
from nara_kg.retrieval.faithfulness import GuardResult, guard_answer
from nara_kg.retrieval.graph_record import GraphRecord, body_of
from nara_kg.retrieval.prompts import ANSWER_PROMPT, REFUSAL, is_refusal
from nara_kg.retrieval.terms import METHOD_EXTRACTIVE, llm_method

#: Records a refusal names as the closest.
CLOSEST_RECORDS: Final = 3


@dataclass(frozen=True, slots=True)
class AnswerContext:
    na_id: int
    title: str | None
    text: str
    source: str | None


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    method: str
    refused: bool
    #: Records whose text the answer was built from (all contexts the model read, for a model).
    used_na_ids: tuple[int, ...]
    #: One per answer sentence, each ending in its record's marker in `text`.
    citations: tuple[AnswerCitation, ...] = ()
    #: A model's answer after the faithfulness guard (None for the extractive method).
    guard: GuardResult | None = None


def format_answer_prompt(question: str, contexts: Sequence[AnswerContext]) -> str:
    blocks = "\n\n".join(
        f"Context: Title: {' '.join((ctx.title or '').split())} Text: {' '.join(ctx.text.split())}"
        for ctx in contexts
    )
    return f"{ANSWER_PROMPT}\n{blocks}\nQuestion: {question}\nAnswer:"


def _as_record(context: AnswerContext) -> GraphRecord:
    """A context as a record without graph facts: its text without any search header."""
    body = body_of(context.text)
    return GraphRecord(
        na_id=context.na_id,
        title=context.title,
        level=None,
        properties={},
        bodies=(body,) if body else (),
    )


def refusal(method: str, closest: Sequence[GraphRecord] = ()) -> Answer:
    """The seed's refusal sentence, followed by the records that came closest, if any."""
    named = [f"{r.title or 'untitled'} (naId {r.na_id})" for r in closest[:CLOSEST_RECORDS]]
    text = REFUSAL if not named else f"{REFUSAL} The closest records: {'; '.join(named)}."
    return Answer(text=text, method=method, refused=True, used_na_ids=())


def _cited(method: str, facts: Sequence[Fact]) -> Answer:
    text, citations = cite([CitedSentence(f.sentence, f.na_id, f.title) for f in facts])
    return Answer(
        text=text,
        method=method,
        refused=False,
        used_na_ids=tuple(dict.fromkeys(c.na_id for c in citations)),
        citations=citations,
    )


def extractive_answer(
    question: str, records: Sequence[GraphRecord], *, identified: GraphRecord | None = None
) -> Answer:
    """The model-free answer from the top records, best first: what an exact naId or title
    names, a graph fact, the sentence that answers, else the refusal naming the closest."""
    method = METHOD_EXTRACTIVE
    if identified is not None:
        return _cited(method, [identity(identified)])
    facts = fact_answer(question, records)
    if facts:
        return _cited(method, facts)
    kind, found = candidates(question, records)
    has_typed = any(c.typed for c in found)
    if kind == "when" and (fallback := dates_fallback(question, records)):
        # The dates of the record the question names, unless its own text states one.
        typed_own = any(c.typed and c.record.na_id == fallback[0].na_id for c in found)
        if not typed_own:
            return _cited(method, fallback)
    if kind == "how_many" and not has_typed and (fallback := count_fallback(question, records)):
        return _cited(method, fallback)
    chosen = choose(kind, found)
    if chosen:
        return _cited(method, [Fact(c.sentence, c.record.na_id, c.record.title) for c in chosen])
    if records and not records[0].bodies and title_coverage(question, records[0]) >= MIN_COVERAGE:
        return _cited(method, [identity(records[0])])
    return refusal(method, records)


def _extractive_answer(question: str, contexts: Sequence[AnswerContext]) -> Answer:
    return extractive_answer(question, [_as_record(c) for c in _one_per_record(contexts)])


def _one_per_record(contexts: Sequence[AnswerContext]) -> list[AnswerContext]:
    """One context per record (the first, the best retrieved), texts of one record joined."""
    merged: dict[int, AnswerContext] = {}
    for context in contexts:
        if context.na_id in merged:
            first = merged[context.na_id]
            merged[context.na_id] = AnswerContext(
                first.na_id, first.title, f"{first.text} {context.text}", first.source
            )
        else:
            merged[context.na_id] = context
    return list(merged.values())


def answer_question(
    question: str,
    contexts: Sequence[AnswerContext],
    llm: LLM,
    cache: GenerationCache | None,
) -> Answer:
    """A grounded answer from the contexts only, or the seed's refusal sentence."""
    if is_extractive(llm):
        return _extractive_answer(question, contexts)
    method = llm_method(llm)
    if not contexts:
        return Answer(text=REFUSAL, method=method, refused=True, used_na_ids=())
    reply, _ = cached_complete(llm, format_answer_prompt(question, contexts), cache)
    reply = reply.strip()
    if not reply or is_refusal(reply):
        return Answer(text=REFUSAL, method=method, refused=True, used_na_ids=())
    # Sentences stating a name, number or date the records do not hold are dropped; with
    # none left, the extractive answer stands in.
    guarded = guard_answer(reply, [f"{ctx.title or ''}\n{ctx.text}" for ctx in contexts])
    if not guarded.kept:
        return replace(_extractive_answer(question, contexts), guard=guarded)
    used = tuple(dict.fromkeys(ctx.na_id for ctx in contexts))
    sources = [Source(ctx.na_id, ctx.title, ctx.text) for ctx in contexts]
    text, citations = cite(attribute(sentences(guarded.text), sources))
    return Answer(
        text=text,
        method=method,
        refused=False,
        used_na_ids=used,
        citations=citations,
        guard=guarded,
    )
