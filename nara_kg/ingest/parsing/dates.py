"""A record's date range as short text (ends joined by an en dash), for its chunk header."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from nara_kg.ingest.parsing.values import as_int, date_value


def _format_date(value: Any) -> str | None:
    """Short text for one date object: full date, year-month, or year (with "ca.")."""
    if isinstance(value, str):
        return value.strip() or None
    if not isinstance(value, dict):
        return None
    year = as_int(value.get("year"))
    month = as_int(value.get("month"))
    day = as_int(value.get("day"))
    if year is None:
        text = date_value(value)
    elif month is not None and day is not None:
        text = f"{year:04d}-{month:02d}-{day:02d}"
    elif month is not None:
        text = f"{year:04d}-{month:02d}"
    else:
        # Year-only dates carry a made-up -01-01 / -12-31 logicalDate; show just the year.
        text = f"{year:04d}"
    if text and value.get("dateQualifier") == "ca.":
        text = f"ca. {text}"
    return text


EN_DASH: Final = "\u2013"


def _span(start: str | None, end: str | None) -> str | None:
    if start and end:
        return start if start == end else f"{start}{EN_DASH}{end}"
    if start:
        return f"{start}{EN_DASH}"
    if end:
        return f"{EN_DASH}{end}"
    return None


def _date_sort_key(value: Any) -> str:
    return date_value(value) or ""


def _date_objects(values: Any) -> list[Any]:
    if not isinstance(values, list):
        return []
    return [v for v in values if isinstance(v, dict | str) and date_value(v)]


def date_range(record: Mapping[str, Any], node_type: str) -> str | None:
    """The first date pair the record has (its own dates, then its production dates, then an
    organization's names), as text; None when it has none."""
    for start_key, end_key in (
        ("inclusiveStartDate", "inclusiveEndDate"),
        ("coverageStartDate", "coverageEndDate"),
        ("birthDate", "deathDate"),
        ("establishDate", "abolishDate"),
    ):
        text = _span(_format_date(record.get(start_key)), _format_date(record.get(end_key)))
        if text:
            return text
    productions = sorted(_date_objects(record.get("productionDates")), key=_date_sort_key)
    if productions:
        return _span(_format_date(productions[0]), _format_date(productions[-1]))
    if node_type == "organization":
        # An organization's dates are those of its names: first establishment to last abolition
        # (open-ended while any name has no abolish date).
        names = [n for n in record.get("organizationNames") or [] if isinstance(n, dict)]
        starts = sorted(_date_objects([n.get("establishDate") for n in names]), key=_date_sort_key)
        ends = sorted(_date_objects([n.get("abolishDate") for n in names]), key=_date_sort_key)
        if starts or ends:
            # A dated name without an abolish date is still in use.
            open_ended = any(
                n.get("establishDate") is not None and n.get("abolishDate") is None for n in names
            )
            start = _format_date(starts[0]) if starts else None
            end = None if open_ended or not ends else _format_date(ends[-1])
            return _span(start, end)
    return None
