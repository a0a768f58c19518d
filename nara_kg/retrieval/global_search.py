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

import json
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from nara_kg.generation.community_report import CommunityReport
from nara_kg.generation.llm import LLM, GenerationCache, cached_complete, is_extractive
from nara_kg.generation.report_parse import extract_json_object
from nara_kg.retrieval.prompts import MAP_PROMPT, REDUCE_PROMPT, REFUSAL, is_refusal
from nara_kg.retrieval.report_batches import ReportBlock, join_blocks, pack_batches
from nara_kg.retrieval.terms import METHOD_EXTRACTIVE, content_terms, fold, llm_method, overlap

if TYPE_CHECKING:  # the text splitter's import is not worth paying to answer a question
    from nara_kg.ingest.chunking import TokenCounter, TokensCounter

#: Points a reduce step may use even when the budget would allow more (keeps answers readable).
MAX_REDUCE_POINTS: Final = 20


@dataclass(frozen=True, slots=True)
class Point:
    description: str
    #: 0-100: how much the point helps answer the question.
    score: int
    #: The report the point comes from; for a model's point that cites no report of its batch,
    #: the comma-joined ids of every report in the batch.
    community_id: str


@dataclass(frozen=True, slots=True)
class GlobalAnswer:
    text: str
    #: Points that went into the reduce step, best first.
    points_used: tuple[Point, ...]
    #: Communities behind those points, in order of first use.
    communities: tuple[str, ...]
    refused: bool
    method: str


def _score(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, int | float) or value != value:  # NaN
        return None
    return round(min(max(float(value), 0.0), 100.0))


_HTML_POINT: Final = re.compile(r"<point>(.*?)</point>", re.DOTALL)
_HTML_DESCRIPTION: Final = re.compile(r"<description>(.*?)</description>", re.DOTALL)
_HTML_SCORE: Final = re.compile(r"<score>(.*?)</score>", re.DOTALL)


def parse_points(text: str, batch_ids: Sequence[str]) -> list[Point]:
    """Points from a map reply: JSON ``{"points": [...]}`` (fenced or in prose), a bare JSON list
    of points, or seed 001's ``<point><description/><score/></point>`` tags. Points without a
    description or a numeric score are skipped; scores are clamped to 0-100."""
    fallback_id = ",".join(batch_ids)
    known = set(batch_ids)
    items: list[Any] = []
    data = extract_json_object(text)
    if data is not None and isinstance(data.get("points"), list):
        items = data["points"]
    else:
        start = text.find("[")
        if start != -1:
            try:
                value, _ = json.JSONDecoder().raw_decode(text, start)
            except ValueError:
                value = None
            if isinstance(value, list):
                items = value
    if not items:
        for match in _HTML_POINT.finditer(text):
            found_description = _HTML_DESCRIPTION.search(match.group(1))
            found_score = _HTML_SCORE.search(match.group(1))
            if found_description and found_score:
                items.append(
                    {"description": found_description.group(1), "score": found_score.group(1)}
                )
    points: list[Point] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        description = item.get("description")
        score = _score(item.get("score"))
        if not isinstance(description, str) or not description.strip() or score is None:
            continue
        cited = item.get("community_id", item.get("report_id"))
        community_id = str(cited) if cited is not None and str(cited) in known else fallback_id
        points.append(Point(" ".join(description.strip().strip('"').split()), score, community_id))
    return points


#: Words that ask about the collection as a whole rather than name a topic ("What are the main
#: themes of these records?"): the extractive map scores reports by the question's *topic*
#: words, and a question left with none is answered from the largest communities instead.
_OVERVIEW_LINES: Final = (
    "main major overall common recurring key primary principal central prominent important",
    "theme topic subject issue area overview summary summarize summarise general generally",
    "kind sort type category whole entire across collection holding hold held contain",
    "cover covered documented mostly often frequent frequently notable largest big biggest",
    "thing anything everything content contents",
)
OVERVIEW_TERMS: Final = frozenset(fold(word) for line in _OVERVIEW_LINES for word in line.split())
#: Findings quoted per report in an extractive overview answer.
OVERVIEW_FINDINGS: Final = 3


def topic_terms(question: str) -> frozenset[str]:
    """The question's content words that name what it is about (not how to summarise it)."""
    return content_terms(question) - OVERVIEW_TERMS


def is_overview_question(question: str) -> bool:
    """True for a question about the whole collection: it has content words, and every one of
    them asks for themes, topics, an overview and the like."""
    return bool(content_terms(question)) and not topic_terms(question)


def _overview_points(
    reports: Sequence[CommunityReport], sizes: Mapping[str, int], limit: int
) -> list[Point]:
    """The `limit` highest-ranked reports, as GraphRAG ranks community reports: largest
    community first, then highest rating (ties by id). Each point is the report's title and
    summary with its first findings; its score is the community's size relative to the
    largest (at least 1, as a 0 would mean "does not help")."""
    ranked = sorted(
        reports, key=lambda r: (-sizes.get(r.community_id, 0), -r.rating, r.community_id)
    )[:limit]
    largest = max((sizes.get(r.community_id, 0) for r in ranked), default=0)
    points = []
    for report in ranked:
        description = f"{report.title}: {report.summary}"
        findings = [f.summary for f in report.findings[:OVERVIEW_FINDINGS] if f.summary]
        if findings:
            description += " Key records: " + "; ".join(findings) + "."
        size = sizes.get(report.community_id, 0)
        score = max(1, round(100 * size / largest)) if largest else 1
        points.append(Point(" ".join(description.split()), score, report.community_id))
    return points


def _extractive_points(question_terms: frozenset[str], batch: Sequence[ReportBlock]) -> list[Point]:
    points: list[Point] = []
    for block in batch:
        report = block.report
        candidates = [(f"{report.title}: {block.summary}", f"{report.title} {block.summary}")]
        for finding in block.findings:
            description = (
                f"{finding.summary}: {finding.explanation}"
                if finding.explanation
                else finding.summary
            )
            candidates.append((description, description))
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


def _plural_reports(count: int) -> str:
    return "community report" if count == 1 else f"{count} community reports"


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
) -> GlobalAnswer:
    """GraphRAG global search over the reports of one level.

    Shuffle (seeded) and batch the reports (:func:`pack_batches`), map every batch to scored
    points, drop the points scored 0, sort the rest best first (ties keep batch order), and
    reduce as many as fit `reduce_token_budget` into the answer. No surviving point -> the
    refusal. `max_workers` > 1 maps batches concurrently (a model backend caps its own requests).

    The extractive map scores a report by the question's topic words (:func:`topic_terms`); a
    question about the collection as a whole (:func:`is_overview_question`) has none, and is
    answered from the highest-ranked reports by community size (`sizes`, id -> members) and
    rating, with their findings. It is refused only when there is no report at all.
    """
    extractive = is_extractive(llm)
    method = METHOD_EXTRACTIVE if extractive else llm_method(llm)

    def refusal() -> GlobalAnswer:
        return GlobalAnswer(REFUSAL, (), (), True, method)

    if extractive and is_overview_question(question):
        overview = _overview_points(reports, sizes or {}, MAX_REDUCE_POINTS)
        if not overview:
            return refusal()
        used, _ = _reduce_selection(overview, reduce_token_budget, count_tokens)
        level = reports[0].level
        heading = (
            f"The main themes of the collection, from the {_plural_reports(len(used))} "
            f"ranked highest by community size and rating (community level {level}):"
        )
        text = "\n".join([heading, *(f"- {point.description}" for point in used)])
        return GlobalAnswer(text, tuple(used), _communities(used), False, method)

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
        text = "\n".join(f"- {point.description}" for point in used)
    else:
        prompt = REDUCE_PROMPT.format(report_data=report_data, query=question)
        reply, _ = cached_complete(llm, prompt, cache)
        text = reply.strip()
        if not text or is_refusal(text):
            return GlobalAnswer(REFUSAL, tuple(used), _communities(used), True, method)
    return GlobalAnswer(text, tuple(used), _communities(used), False, method)
