"""Questions about the collection as a whole ("What are the main themes of these records?"),
answered extractively from the largest communities: which questions are such, and which
communities are their main themes."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final

from nara_kg.generation.community_report import CommunityReport
from nara_kg.retrieval.global_points import Point
from nara_kg.retrieval.terms import content_terms, fold

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


def overview_points(reports: Sequence[CommunityReport], sizes: Mapping[str, int]) -> list[Point]:
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
