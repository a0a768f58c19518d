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
import math
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from nara_kg.generation.community_profile import DESCRIPTION_LEVELS, KeyRecord
from nara_kg.generation.community_report import CommunityReport
from nara_kg.generation.generation_cache import GenerationCache, cached_complete
from nara_kg.generation.llm_base import LLM, ExtractiveLLM, is_extractive
from nara_kg.generation.report_parse import extract_json_object
from nara_kg.retrieval.citations import AnswerCitation, CitedSentence, Source, attribute, cite
from nara_kg.retrieval.faithfulness import GuardResult, guard_answer
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
    #: One per answer sentence, each naming a record of the community it came from.
    citations: tuple[AnswerCitation, ...] = ()
    #: A model's answer after the faithfulness guard (None for the extractive method).
    guard: GuardResult | None = None


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


def topic_terms(question: str) -> frozenset[str]:
    """The question's content words that name what it is about (not how to summarise it)."""
    return content_terms(question) - OVERVIEW_TERMS


def is_overview_question(question: str) -> bool:
    """True for a question about the whole collection: it has content words, and every one of
    them asks for themes, topics, an overview and the like."""
    return bool(content_terms(question)) and not topic_terms(question)


#: A theme of an overview is a community holding at least this share of the records the level's
#: communities hold, and at least MIN_THEME_RECORDS: a two-record community is no main theme of
#: a thousand records (at 1 016 records, a theme needs 11).
MIN_THEME_SHARE: Final = 0.01
MIN_THEME_RECORDS: Final = 3
#: Themes an overview names at most.
MAX_THEMES: Final = 8
#: Sentences an answer takes from one report summary or point.
MAX_POINT_SENTENCES: Final = 2


def min_theme_size(total_records: int) -> int:
    """The fewest records a community needs to be a theme among `total_records`."""
    return max(MIN_THEME_RECORDS, math.ceil(MIN_THEME_SHARE * total_records))


def main_themes(
    reports: Sequence[CommunityReport], sizes: Mapping[str, int]
) -> list[CommunityReport]:
    """The reports of the communities of meaningful size (:func:`min_theme_size` of all the
    reports' records), ranked as GraphRAG ranks community reports: largest first, then highest
    rating (ties by id); at most :data:`MAX_THEMES`. When none is that large, the largest."""
    ranked = sorted(
        reports, key=lambda r: (-sizes.get(r.community_id, 0), -r.rating, r.community_id)
    )
    floor = min_theme_size(sum(sizes.get(r.community_id, 0) for r in reports))
    themes = [r for r in ranked if sizes.get(r.community_id, 0) >= floor]
    return (themes or ranked[:1])[:MAX_THEMES]


def _overview_points(reports: Sequence[CommunityReport], sizes: Mapping[str, int]) -> list[Point]:
    """One point per main theme: the report's summary; its score is the community's size
    relative to the largest (at least 1, as a 0 would mean "does not help")."""
    themes = main_themes(reports, sizes)
    largest = max((sizes.get(r.community_id, 0) for r in themes), default=0)
    points = []
    for report in themes:
        size = sizes.get(report.community_id, 0)
        score = max(1, round(100 * size / largest)) if largest else 1
        summary = " ".join(report.summary.split()) or report.title
        points.append(Point(summary, score, report.community_id))
    return points


#: A sentence ends at . ! or ? followed by space, but not after an initial ("Harold D.") or an
#: abbreviation that archival names and titles are full of ("Henry Morgenthau, Jr. (…").
_SENTENCE_BREAK: Final = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\bMr\.)(?<!\bDr\.)(?<!\bJr\.)(?<!\bSr\.)(?<!\bSt\.)"
    r"(?<!\bMrs\.)(?<!\bGen\.)(?<!\bCol\.)(?<!\bLt\.)(?<!\bNo\.)(?<!\bCo\.)(?<!\bInc\.)"
    r"(?<!\bVol\.)\s+|\n+"
)
#: GraphRAG's references inside a model's report or answer ("[Data: Reports (2, 7)]",
#: "[Records: 7001, 7002]"): the citation markers say where a sentence comes from instead.
_REFERENCE: Final = re.compile(r"\s*\[(?:Data|Records|Reports)\s*:[^\]]*\]", re.IGNORECASE)
#: The catalog link an extractive finding ends with: the citation names the record instead.
_SOURCE_LINK: Final = re.compile(r"\s*Source: https?://\S+")


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, references and catalog links removed, each ending in . ! or ?
    (an unfinished last one dropped when others precede it, else ended with an ellipsis)."""
    sentences = []
    text = _SOURCE_LINK.sub("", _REFERENCE.sub("", text)).strip()
    # An excerpt clipped mid-sentence loses its unfinished end when a whole sentence precedes.
    pieces = [p for p in _SENTENCE_BREAK.split(text) if p.strip()]
    if len(pieces) > 1 and not pieces[-1].rstrip().endswith((".", "!", "?")):
        pieces.pop()
    for piece in pieces:
        piece = " ".join(piece.split()).lstrip("-• ").strip()
        if piece:
            sentences.append(
                piece if piece.endswith((".", "!", "?", "\u2026")) else f"{piece}\u2026"
            )
    return sentences


def representative(members: Sequence[KeyRecord]) -> KeyRecord | None:
    """The record that stands for a community among its top members (ranked by degree): the
    first description (series, file unit, ...), else the first member."""
    return next((m for m in members if m.node_type in DESCRIPTION_LEVELS), None) or next(
        iter(members), None
    )


def _cited_by(point: Point, members: Mapping[str, Sequence[KeyRecord]]) -> KeyRecord | None:
    """The record a point cites: a top member its text starts with (a finding about that
    record), else its community's representative."""
    community_members = members.get(point.community_id.split(",")[0], ())
    for member in community_members:
        if member.title and point.description.startswith(member.title):
            return member
    return representative(community_members)


#: A sentence saying less than this many words after its title ("Records of the War Relocation
#: Authority: A record group.") only names a record's kind: an answer line skips it.
MIN_CONTENT_WORDS: Final = 4


def _says_something(sentence: str) -> bool:
    return len(sentence.split(": ", 1)[-1].split()) >= MIN_CONTENT_WORDS


def _per_community(points: Sequence[Point]) -> list[Point]:
    """One point per community, in the order of each community's best point: the first
    sentence of its best point, then of its next ones that say something else, then the best
    point's next sentence, up to :data:`MAX_POINT_SENTENCES` (a report's summary and findings
    repeat one another; a finding that only names a record's kind says nothing)."""
    grouped: dict[str, list[Point]] = {}
    for point in points:
        grouped.setdefault(point.community_id, []).append(point)
    merged = []
    for community_id, community_points in grouped.items():
        split = [split_sentences(point.description) for point in community_points]
        candidates = [sentences[0] for sentences in split if sentences]
        candidates += split[0][1:]
        sentences: list[str] = []
        for index, sentence in enumerate(candidates):
            if sentence in sentences or (index and not _says_something(sentence)):
                continue
            sentences.append(sentence)
            if len(sentences) >= MAX_POINT_SENTENCES:
                break
        merged.append(Point(" ".join(sentences), community_points[0].score, community_id))
    return merged


def _cited_answer(
    points: Sequence[Point], members: Mapping[str, Sequence[KeyRecord]]
) -> tuple[str, tuple[AnswerCitation, ...]]:
    """One line per point, its first sentences each followed by the marker of the record it
    cites (:mod:`nara_kg.retrieval.citations`). A point whose community has no known member
    (only a caller that passes none) keeps its sentences without a marker."""
    lines: list[tuple[list[str], KeyRecord | None]] = []
    for point in points:
        sentences = split_sentences(point.description)[:MAX_POINT_SENTENCES]
        if sentences:
            lines.append((sentences, _cited_by(point, members)))
    _, citations = cite(
        [
            CitedSentence(sentence, record.na_id, record.title)
            for sentences, record in lines
            if record is not None
            for sentence in sentences
        ]
    )
    text, at = [], 0
    for sentences, record in lines:
        if record is None:
            text.append(" ".join(sentences))
            continue
        line = citations[at : at + len(sentences)]
        text.append(" ".join(f"{c.sentence} [{c.marker}]" for c in line))
        at += len(sentences)
    return "\n".join(text), citations


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
        overview = _overview_points(reports, sizes or {})
        if not overview:
            return refusal()
        used, _ = _reduce_selection(overview, reduce_token_budget, count_tokens)
        text, citations = _cited_answer(used, members)
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
        text, citations = _cited_answer(_per_community(used), members)
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
