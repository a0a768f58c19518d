"""Global search: GraphRAG's map/reduce over the community reports of one level.

The reports are shuffled (seeded) and packed into batches that fit a token budget; each batch
is mapped to scored points, and the best points are reduced into the answer. With a model, the
map and reduce steps use GraphRAG's prompts (:mod:`nara_kg.retrieval.prompts`). With the offline
default (:class:`~nara_kg.generation.llm.ExtractiveLLM`) each report summary and finding scores
``round(100 * shared content words / question content words)`` (:mod:`nara_kg.retrieval.terms`),
the answer lists the best points, and a question about the collection as a whole is answered
with an overview of the largest communities.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

from nara_kg.generation.community_profile import KeyRecord
from nara_kg.generation.community_report import CommunityReport
from nara_kg.generation.generation_cache import GenerationCache, cached_complete
from nara_kg.generation.llm_base import LLM, ExtractiveLLM, is_extractive
from nara_kg.retrieval.citations import AnswerCitation, Source, attribute, cite
from nara_kg.retrieval.faithfulness import GuardResult, guard_answer
from nara_kg.retrieval.global_answer_text import (
    cited_answer,
    per_community,
    representative,
    split_sentences,
)
from nara_kg.retrieval.global_points import Point, parse_points
from nara_kg.retrieval.global_themes import (
    OVERVIEW_TERMS,
    is_overview_question,
    main_themes,
    min_theme_size,
    overview_points,
    topic_terms,
)
from nara_kg.retrieval.prompts import MAP_PROMPT, REDUCE_PROMPT, REFUSAL, is_refusal
from nara_kg.retrieval.report_batches import ReportBlock, join_blocks, pack_batches
from nara_kg.retrieval.terms import METHOD_EXTRACTIVE, llm_method, overlap

if TYPE_CHECKING:  # the text splitter's import is not worth paying to answer a question
    from nara_kg.ingest.chunking import TokenCounter, TokensCounter

__all__ = [
    "MAX_REDUCE_POINTS",
    "OVERVIEW_TERMS",
    "GlobalAnswer",
    "Point",
    "global_search",
    "is_overview_question",
    "main_themes",
    "min_theme_size",
    "parse_points",
    "representative",
    "split_sentences",
    "topic_terms",
]

#: Points a reduce step may use even when the budget would allow more (keeps answers readable).
MAX_REDUCE_POINTS: Final = 20


@dataclass(frozen=True, slots=True)
class GlobalAnswer:
    text: str
    #: Points that went into the reduce step, best first.
    points_used: tuple[Point, ...]
    #: Communities behind those points, in order of first use.
    communities: tuple[str, ...]
    refused: bool
    method: str
    #: One per answer sentence, each naming a record of the community it came from.
    citations: tuple[AnswerCitation, ...] = ()
    #: A model's answer after the faithfulness guard (None for the extractive method).
    guard: GuardResult | None = None


def _titled(title: str, text: str) -> str:
    """A point's text: `text` alone when it already names `title`, else "title: text"."""
    if not text:
        return title
    return text if title in text else f"{title}: {text}"


def _extractive_points(question_terms: frozenset[str], batch: Sequence[ReportBlock]) -> list[Point]:
    points: list[Point] = []
    for block in batch:
        report = block.report
        candidates = [(_titled(report.title, block.summary), f"{report.title} {block.summary}")]
        for finding in block.findings:
            description = _titled(finding.summary, finding.explanation)
            candidates.append((description, f"{finding.summary} {finding.explanation}"))
        for description, scored_text in candidates:
            fraction, _ = overlap(question_terms, scored_text)
            points.append(Point(description, round(100 * fraction), report.community_id))
    return points


def _point_text(rank: int, point: Point) -> str:
    return f"----Analyst {rank}----\nImportance Score: {point.score}\n{point.description}"


def _reduce_selection(
    points: Sequence[Point], budget: int, count_tokens: TokenCounter
) -> tuple[list[Point], str]:
    """Best-first points while their text fits the budget (the first one shortened if needed)."""
    used: list[Point] = []
    parts: list[str] = []
    # Counts add up over blank-line-joined text, less each count's special tokens (see
    # pack_batches): one count per point instead of one of the whole growing text.
    specials = count_tokens("")
    joined_tokens = 0
    for point in points[:MAX_REDUCE_POINTS]:
        part = _point_text(len(used) + 1, point)
        part_tokens = count_tokens(part)
        with_part = joined_tokens + part_tokens - specials if parts else part_tokens
        if with_part > budget:
            if used:
                break
            words = point.description.split()
            while words and count_tokens(part) > budget:
                words = words[: len(words) // 2]
                point = Point(" ".join(words) + " …", point.score, point.community_id)
                part = _point_text(1, point)
            with_part = count_tokens(part)
            if with_part > budget:
                raise ValueError(f"reduce token budget {budget} cannot hold a single point")
        used.append(point)
        parts.append(part)
        joined_tokens = with_part
    return used, "\n\n".join(parts)


def _communities(points: Sequence[Point]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for point in points:
        for community_id in point.community_id.split(","):
            if community_id:
                seen.setdefault(community_id, None)
    return tuple(seen)


def global_search(
    question: str,
    reports: Sequence[CommunityReport],
    llm: LLM,
    cache: GenerationCache | None,
    *,
    batch_token_budget: int,
    count_tokens: TokenCounter,
    count_tokens_many: TokensCounter | None = None,
    seed: int = 0,
    reduce_token_budget: int,
    max_workers: int = 1,
    sizes: Mapping[str, int] | None = None,
    members: Mapping[str, Sequence[KeyRecord]] | None = None,
) -> GlobalAnswer:
    """GraphRAG global search over the reports of one level.

    Shuffle (seeded) and batch the reports (:func:`pack_batches`), map every batch to scored
    points, drop the points scored 0, sort the rest best first (ties keep batch order), and
    reduce as many as fit `reduce_token_budget` into the answer. No surviving point -> the
    refusal. `max_workers` > 1 maps batches concurrently (a model backend caps its own requests).

    The extractive map scores a report by the question's topic words (:func:`topic_terms`); a
    question about the collection as a whole (:func:`is_overview_question`) has none, and is
    answered with the summaries of its main themes (:func:`main_themes`, by community size,
    `sizes`: id -> members, and rating). It is refused only when there is no report at all.

    Every answer sentence ends with the marker of a record it is cited to (`members`: each
    community's top members, highest degree first): a theme's or report point's sentences cite
    the community's representative record, a finding about one of its top members that record;
    a model's answer sentences the representative of the community they share most words with.
    """
    extractive = is_extractive(llm)
    method = METHOD_EXTRACTIVE if extractive else llm_method(llm)
    members = members or {}

    def refusal() -> GlobalAnswer:
        return GlobalAnswer(REFUSAL, (), (), True, method)

    if extractive and is_overview_question(question):
        overview = overview_points(reports, sizes or {})
        if not overview:
            return refusal()
        used, _ = _reduce_selection(overview, reduce_token_budget, count_tokens)
        text, citations = cited_answer(used, members)
        return GlobalAnswer(
            text or REFUSAL, tuple(used), _communities(used), not text, method, citations
        )

    batches = pack_batches(
        reports,
        batch_token_budget=batch_token_budget,
        count_tokens=count_tokens,
        count_tokens_many=count_tokens_many,
        seed=seed,
    )
    question_terms = topic_terms(question)

    def map_batch(batch: list[ReportBlock]) -> list[Point]:
        if extractive:
            return _extractive_points(question_terms, batch)
        prompt = MAP_PROMPT.format(context_data=join_blocks(batch), query=question)
        reply, _ = cached_complete(llm, prompt, cache)
        return parse_points(reply, [block.report.community_id for block in batch])

    if max_workers > 1 and len(batches) > 1:
        with ThreadPoolExecutor(max_workers=max_workers) as pool:
            mapped = list(pool.map(map_batch, batches))
    else:
        mapped = [map_batch(batch) for batch in batches]

    # Stable sort: equal scores keep the (seeded) batch order.
    points = sorted(
        (point for batch_points in mapped for point in batch_points if point.score > 0),
        key=lambda point: -point.score,
    )
    if not points:
        return refusal()
    used, report_data = _reduce_selection(points, reduce_token_budget, count_tokens)
    if extractive:
        text, citations = cited_answer(per_community(used), members)
        if not text:
            return GlobalAnswer(REFUSAL, tuple(used), _communities(used), True, method)
        return GlobalAnswer(text, tuple(used), _communities(used), False, method, citations)
    prompt = REDUCE_PROMPT.format(report_data=report_data, query=question)
    reply, _ = cached_complete(llm, prompt, cache)
    if not reply.strip() or is_refusal(reply.strip()):
        return GlobalAnswer(REFUSAL, tuple(used), _communities(used), True, method)
    communities = _communities(used)
    by_id = {report.community_id: report for report in reports}
    # A sentence naming a person, number or date that none of the reports read states is
    # dropped; with nothing left, the extractive answer over the same reports stands in.
    guarded = guard_answer(
        " ".join(split_sentences(reply)),
        [_report_text(by_id[c], members.get(c, ())) for c in communities if c in by_id],
    )
    if not guarded.kept:
        fallback = global_search(
            question,
            reports,
            ExtractiveLLM(),
            None,
            batch_token_budget=batch_token_budget,
            count_tokens=count_tokens,
            count_tokens_many=count_tokens_many,
            seed=seed,
            reduce_token_budget=reduce_token_budget,
            sizes=sizes,
            members=members,
        )
        return replace(fallback, guard=guarded)
    sources = []
    for community_id in communities:
        record = representative(members.get(community_id, ()))
        report = by_id.get(community_id)
        if record is not None and report is not None:
            text_of = f"{report.title} {report.summary}"
            sources.append(Source(record.na_id, record.title, text_of))
    text, citations = cite(attribute(split_sentences(guarded.text), sources))
    return GlobalAnswer(
        text or guarded.text, tuple(used), communities, False, method, citations, guarded
    )


def _report_text(report: CommunityReport, members: Sequence[KeyRecord]) -> str:
    """What a model's global answer may state about one community: its report and the titles
    of its top members."""
    findings = " ".join(f"{f.summary} {f.explanation}" for f in report.findings)
    titles = " ".join(member.title or "" for member in members)
    return f"{report.title} {report.summary} {findings} {titles}"
