"""Parsing a model's answer into a :class:`~nara_kg.generation.community_report.CommunityReport`:
the JSON object found in fences or prose, checked field by field."""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

from nara_kg.generation.community_report import CommunityReport, Finding

RATING_MIN: Final = 0.0
RATING_MAX: Final = 10.0
REPORT_KEYS: Final = ("title", "summary", "rating", "rating_explanation", "findings")


class ReportFormatError(ValueError):
    """A model's output is not a usable report; the message names what is missing or wrong."""


_FENCE = re.compile(r"```[A-Za-z]*\s*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


def _first_object(text: str) -> dict[str, Any] | None:
    """The first `{` from which a JSON object decodes (prose after it is ignored)."""
    start = text.find("{")
    while start != -1:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            pass
        else:
            if isinstance(value, dict):
                return value
        start = text.find("{", start + 1)
    return None


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model's answer: inside a ```json fence if there is one, else the
    outermost object found in the prose. None when there is none."""
    for match in _FENCE.finditer(text):
        found = _first_object(match.group(1))
        if found is not None:
            return found
    return _first_object(text)


def _rating(value: Any, problems: list[str]) -> float | None:
    if isinstance(value, bool):
        problems.append(f"'rating' must be a number, got {value!r}")
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            problems.append(f"'rating' must be a number, got {value!r}")
            return None
    if not isinstance(value, int | float) or not math.isfinite(value):
        problems.append(f"'rating' must be a number, got {value!r}")
        return None
    if not RATING_MIN <= value <= RATING_MAX:
        problems.append(f"'rating' {value} is outside {RATING_MIN:g}-{RATING_MAX:g}")
        return None
    return float(value)


def _findings(value: Any, problems: list[str]) -> tuple[Finding, ...] | None:
    if not isinstance(value, list):
        problems.append(f"'findings' must be a list, got {type(value).__name__}")
        return None
    findings: list[Finding] = []
    for index, item in enumerate(value):
        if isinstance(item, str) and item.strip():
            findings.append(Finding(summary=item.strip(), explanation=""))
        elif isinstance(item, dict):
            summary = item.get("summary")
            explanation = item.get("explanation")
            if not isinstance(summary, str) or not summary.strip():
                problems.append(f"findings[{index}] has no text 'summary'")
            elif not isinstance(explanation, str):
                problems.append(f"findings[{index}] has no text 'explanation'")
            else:
                findings.append(Finding(summary=summary.strip(), explanation=explanation.strip()))
        else:
            problems.append(f"findings[{index}] must be an object or a string")
    return tuple(findings)


def repair_report(text: str, community_id: str, level: int, generated_by: str) -> CommunityReport:
    """:func:`parse_report` of the model's answer after its JSON syntax is repaired (quotes,
    commas, brackets left open by a reply cut short) by the `json-repair` library; the fields
    are then checked as strictly as ever, so a repair can add no content. ReportFormatError when
    no JSON object comes out or its fields are still wrong."""
    import json_repair

    where = f"report for community {community_id}"
    candidates = [match.group(1) for match in _FENCE.finditer(text)]
    if "{" in text:
        candidates.append(text[text.find("{") :])
    for candidate in candidates:
        repaired = json_repair.repair_json(candidate, return_objects=True)
        if isinstance(repaired, dict) and repaired:
            return parse_report(json.dumps(repaired), community_id, level, generated_by)
    snippet = " ".join(text.split())[:120]
    raise ReportFormatError(f"{where}: no JSON object could be repaired from {snippet!r}")


def parse_report(text: str, community_id: str, level: int, generated_by: str) -> CommunityReport:
    """A complete report from a model's answer, or :class:`ReportFormatError`.

    Repairs only what cannot change the meaning: the JSON object is taken from ```json fences or
    surrounding prose, a rating given as a numeric string becomes a number, and findings given
    as plain strings become findings with an empty explanation. Anything else missing or mistyped
    is an error, so no half-parsed report is ever returned.
    """
    where = f"report for community {community_id}"
    data = extract_json_object(text)
    if data is None:
        snippet = " ".join(text.split())[:120]
        raise ReportFormatError(f"{where}: no JSON object in the output: {snippet!r}")
    problems: list[str] = []
    missing = [key for key in REPORT_KEYS if key not in data]
    if missing:
        problems.append("missing " + ", ".join(repr(key) for key in missing))
    strings: dict[str, str] = {}
    for key in ("title", "summary", "rating_explanation"):
        if key not in data:
            continue
        value = data[key]
        if not isinstance(value, str):
            problems.append(f"{key!r} must be text, got {type(value).__name__}")
        elif key != "rating_explanation" and not value.strip():
            problems.append(f"{key!r} is empty")
        else:
            strings[key] = value.strip()
    rating = _rating(data["rating"], problems) if "rating" in data else None
    findings = _findings(data["findings"], problems) if "findings" in data else None
    if problems or rating is None or findings is None:
        raise ReportFormatError(f"{where}: " + "; ".join(problems))
    return CommunityReport(
        community_id=community_id,
        level=level,
        title=strings["title"],
        summary=strings["summary"],
        rating=rating,
        rating_explanation=strings["rating_explanation"],
        findings=findings,
        generated_by=generated_by,
    )
