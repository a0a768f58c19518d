"""A retrieved record as an answer reads it: its properties, the body text of every chunk
(without the search header), its ancestors, its children counted by level and its authorities,
read by one query (:mod:`nara_kg.graph.answers`); and how its facts are said in prose."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Final

from neo4j import Driver

from nara_kg.graph import answers as cypher
from nara_kg.model.schema import AUTHORITY_RELATIONSHIPS, HEADER_BODY_SEPARATOR, Prop

#: How a level of description reads in a sentence.
LEVEL_NAMES: Final[Mapping[str, str]] = {
    "recordGroup": "record group",
    "collection": "collection",
    "series": "series",
    "fileUnit": "file unit",
    "item": "item",
    "itemAv": "item",
}

#: A record's own dates, in the order they count: the catalog's, else those its title states.
_DATE_PAIRS: Final = (
    ("logicalDate_inclusiveStartDate", "logicalDate_inclusiveEndDate"),
    ("logicalDate_coverageStartDate", "logicalDate_coverageEndDate"),
    (Prop.TITLE_START_DATE, Prop.TITLE_END_DATE),
)


@dataclass(frozen=True, slots=True)
class Ancestor:
    na_id: int
    title: str | None
    level: str | None
    date_start: str | None
    date_end: str | None
    reference_units: tuple[str, ...] = ()
    record_group_number: int | None = None


@dataclass(frozen=True, slots=True)
class GraphRecord:
    na_id: int
    title: str | None
    level: str | None
    properties: Mapping[str, Any]
    #: The body text of each chunk in order, search headers removed.
    bodies: tuple[str, ...] = ()
    #: Nearest first.
    ancestors: tuple[Ancestor, ...] = ()
    #: level of description -> children at that level (`Includes`).
    children: Mapping[str, int] = field(default_factory=dict)
    #: (relationship, heading, authority type) of the authorities that point at the record.
    authorities: tuple[tuple[str, str, str | None], ...] = ()

    @property
    def body(self) -> str:
        """The chunks' bodies, a line each (a chunk mostly ends where a paragraph or sentence
        did); a chunk that starts mid-sentence (lower case, a comma) continues the line."""
        text = ""
        for body in self.bodies:
            if not text:
                text = body
            elif body[:1] in ",;:)":
                text += body
            elif body[:1].islower():
                text += " " + body
            else:
                text += "\n" + body
        return text

    def strings(self, key: str) -> list[str]:
        """A property as a list of non-empty strings (a single value becomes a list of one)."""
        value = self.properties.get(key)
        if value is None:
            return []
        values = value if isinstance(value, list) else [value]
        return [str(v).strip() for v in values if v is not None and str(v).strip()]

    @property
    def own_dates(self) -> tuple[str | None, str | None]:
        for start_key, end_key in _DATE_PAIRS:
            start, end = self.properties.get(start_key), self.properties.get(end_key)
            if start or end:
                return start or end, end or start
        return None, None

    @property
    def dates_from_title(self) -> bool:
        """Its own dates are those its title states (it has no catalog dates)."""
        return not any(self.properties.get(k) for pair in _DATE_PAIRS[:-1] for k in pair) and bool(
            self.properties.get(Prop.TITLE_START_DATE) or self.properties.get(Prop.TITLE_END_DATE)
        )

    @property
    def level_name(self) -> str:
        return LEVEL_NAMES.get(self.level or "", self.level or "record")

    def ancestor_at(self, level: str) -> Ancestor | None:
        return next((a for a in self.ancestors if a.level == level), None)


#: The lines of a chunk's search header (nara_kg.ingest.chunking.build_header).
_HEADER_LINE: Final = re.compile(r"^(Title|Type|Part of|Dates): ")


def body_of(text: str | None) -> str:
    """A chunk's text without its search header (a header-only chunk has no body)."""
    if not text:
        return ""
    if HEADER_BODY_SEPARATOR in text:
        head, body = text.split(HEADER_BODY_SEPARATOR, 1)
        if all(_HEADER_LINE.match(line) for line in head.splitlines()):
            return body.strip()
        return text.strip()
    if all(_HEADER_LINE.match(line) for line in text.splitlines()):
        return ""
    return text.strip()


def _ancestor(raw: Mapping[str, Any]) -> Ancestor:
    start = raw.get("logicalDate_inclusiveStartDate") or raw.get("logicalDate_coverageStartDate")
    end = raw.get("logicalDate_inclusiveEndDate") or raw.get("logicalDate_coverageEndDate")
    units = raw.get("name_referenceUnits") or []
    return Ancestor(
        na_id=int(raw["naId"]),
        title=raw.get("title"),
        level=raw.get("levelOfDescription"),
        date_start=start or end,
        date_end=end or start,
        reference_units=tuple(units if isinstance(units, list) else [units]),
        record_group_number=raw.get("recordGroupNumber"),
    )


def graph_record(row: Mapping[str, Any]) -> GraphRecord:
    """A row of :data:`nara_kg.graph.answers.RECORD_FACTS` as a record."""
    properties = dict(row["properties"])
    return GraphRecord(
        na_id=int(row["naId"]),
        title=properties.get("title") or properties.get("heading"),
        level=properties.get("levelOfDescription") or properties.get("nodeType"),
        properties=properties,
        bodies=tuple(b for b in (body_of(t) for t in row.get("texts") or []) if b),
        ancestors=tuple(_ancestor(a) for a in row.get("ancestors") or [] if a),
        children={str(level): int(n) for level, n in row.get("children") or []},
        authorities=tuple(
            (str(rel), str(heading), kind)
            for rel, heading, kind in row.get("authorities") or []
            if rel and heading
        ),
    )


def load_records(driver: Driver, database: str, na_ids: Sequence[int]) -> list[GraphRecord]:
    """The records with these naIds, in that order (unknown naIds left out)."""
    rows = cypher.record_facts(
        driver, database, list(dict.fromkeys(na_ids)), [r.value for r in AUTHORITY_RELATIONSHIPS]
    )
    return [graph_record(row) for row in rows]


EN_DASH: Final = "\N{EN DASH}"

_MONTHS: Final = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def spoken_date(iso: str) -> str:
    """An ISO date as a reader says it ("1933-04-27" -> "April 27, 1933")."""
    try:
        parsed = date.fromisoformat(iso[:10])
    except ValueError:
        return iso
    return f"{_MONTHS[parsed.month - 1]} {parsed.day}, {parsed.year}"


def spoken_span(start: str | None, end: str | None) -> str | None:
    """A date span in words; whole years (January 1 to December 31) as years."""
    if not start and not end:
        return None
    start, end = start or end, end or start
    assert start is not None and end is not None
    if start[5:10] == "01-01" and end[5:10] == "12-31":
        first, last = start[:4], end[:4]
        return first if first == last else f"{first} {EN_DASH} {last}"
    if start == end:
        return spoken_date(start)
    return f"{spoken_date(start)} {EN_DASH} {spoken_date(end)}"


def describe(record: GraphRecord) -> str:
    """One sentence naming a record: what it is and where it sits ("Volume 696, ..., a file
    unit in Diaries of Henry Morgenthau, Jr.")."""
    title = record.title or f"naId {record.na_id}"
    parent = record.ancestors[0] if record.ancestors else None
    where = f" in {parent.title}" if parent is not None and parent.title else ""
    span = None if record.dates_from_title else spoken_span(*record.own_dates)
    dated = f", dated {span}" if span else ""
    return f"{title}, a {record.level_name}{where}{dated}"
