"""Grounded local answers: one or two sentences from the retrieved records, or the refusal.

Retrieval happens elsewhere (:mod:`nara_kg.retrieval.search`) and hands over plain
:class:`AnswerContext` records. With a model, seed 000's answer prompt answers from them. With
the offline default (:class:`~nara_kg.generation.llm.ExtractiveLLM`) the answer is the one or
two sentences of the contexts (titles count as sentences) that share the largest fraction of
the question's content words (:mod:`nara_kg.retrieval.terms`); below
:data:`MIN_ANSWER_OVERLAP` it is the seed's refusal sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from nara_kg.generation.llm import LLM, GenerationCache, cached_complete, is_extractive
from nara_kg.retrieval.faithfulness import GuardResult, guard_answer
from nara_kg.retrieval.prompts import ANSWER_PROMPT, REFUSAL, is_refusal
from nara_kg.retrieval.terms import METHOD_EXTRACTIVE, content_terms, llm_method, overlap

#: Extractive answers need at least this fraction of the question's content words in one
#: sentence; with less, the context does not answer the question and the refusal is returned.
MIN_ANSWER_OVERLAP: Final = 0.5
MAX_ANSWER_SENTENCES: Final = 2

#: A sentence ends at . ! or ? followed by space, but not after an initial ("Harold D.
#: Whitcombe") or a title abbreviation, which archival names are full of.
_SENTENCE_BREAK: Final = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\bMr\.)(?<!\bDr\.)(?<!\bJr\.)(?<!\bSr\.)(?<!\bSt\.)"
    r"(?<!\bMrs\.)(?<!\bGen\.)(?<!\bCol\.)(?<!\bLt\.)\s+|\n+"
)


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
    #: A model's answer after the faithfulness guard (None for the extractive method).
    guard: GuardResult | None = None


def format_answer_prompt(question: str, contexts: Sequence[AnswerContext]) -> str:
    blocks = "\n\n".join(
        f"Context: Title: {' '.join((ctx.title or '').split())} Text: {' '.join(ctx.text.split())}"
        for ctx in contexts
    )
    return f"{ANSWER_PROMPT}\n{blocks}\nQuestion: {question}\nAnswer:"


def _sentences(context: AnswerContext) -> list[str]:
    units: list[str] = []
    if context.title and context.title.strip():
        units.append(" ".join(context.title.split()))
    for piece in _SENTENCE_BREAK.split(context.text):
        piece = " ".join(piece.split())
        if piece:
            units.append(piece)
    return units


def _extractive_answer(question: str, contexts: Sequence[AnswerContext]) -> Answer:
    question_terms = content_terms(question)
    refusal = Answer(text=REFUSAL, method=METHOD_EXTRACTIVE, refused=True, used_na_ids=())
    if not question_terms:
        return refusal
    # (score, shared terms, context index, position, sentence), best first; ties keep the
    # retrieval order of the contexts and the reading order inside one.
    candidates: list[tuple[float, frozenset[str], int, int, str]] = []
    for index, context in enumerate(contexts):
        for position, sentence in enumerate(_sentences(context)):
            score, shared = overlap(question_terms, sentence)
            if score >= MIN_ANSWER_OVERLAP:
                candidates.append((score, shared, index, position, sentence))
    if not candidates:
        return refusal
    candidates.sort(key=lambda c: (-c[0], c[2], c[3]))
    chosen = [candidates[0]]
    covered = set(candidates[0][1])
    for candidate in candidates[1:]:
        if len(chosen) >= MAX_ANSWER_SENTENCES:
            break
        # A second sentence only when it brings question words the first lacks.
        if candidate[1] - covered and candidate[4] != chosen[0][4]:
            chosen.append(candidate)
            covered |= candidate[1]
    used: list[int] = []
    for candidate in chosen:
        na_id = contexts[candidate[2]].na_id
        if na_id not in used:
            used.append(na_id)
    return Answer(
        text=" ".join(candidate[4] for candidate in chosen),
        method=METHOD_EXTRACTIVE,
        refused=False,
        used_na_ids=tuple(used),
    )


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
    return Answer(text=guarded.text, method=method, refused=False, used_na_ids=used, guard=guarded)
