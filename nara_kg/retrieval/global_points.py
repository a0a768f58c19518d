"""The scored points a global search's map step makes of a batch of community reports, and
the parsing of a model's map reply into them."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from nara_kg.generation.report_parse import extract_json_object


@dataclass(frozen=True, slots=True)
class Point:
    description: str
    #: 0-100: how much the point helps answer the question.
    score: int
    #: The report the point comes from; for a model's point that cites no report of its batch,
    #: the comma-joined ids of every report in the batch.
    community_id: str


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
