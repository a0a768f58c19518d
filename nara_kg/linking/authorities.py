"""The authority records entity linking matches: naId, type, heading, variant names, dates.

`Authority` is what the linker needs of one authority record; `authority_from_properties` reads
it from a parsed record's flattened node properties (the names of seed 000's table, as
`nara_kg.ingest.parsing` writes them: `useFor`, `heading_variantPersonNames`,
`name_organizationNames`, `variantOrganizationNames`, `logicalDate_birthDate`, ...).

Dates are whole years: the life of a person, the existence of an organization (over its whole
name history). They come from the record's date fields when it has them, else from the dates
written in its headings ("Morgenthau, Henry, 1891-1967", "... Authority. 2/16/1944-6/30/1946",
"U.S. Trade and Development Agency. (10/28/1992 - )").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

#: The five `authorityType` values (the same as `nara_kg.model.schema.AUTHORITY_TYPES`).
PERSON: Final = "person"
ORGANIZATION: Final = "organization"
GEOGRAPHIC_PLACE: Final = "geographicPlaceName"
TOPICAL_SUBJECT: Final = "topicalSubject"
SPECIFIC_RECORDS_TYPE: Final = "specificRecordsType"

_DATE: Final = r"(?:ca\.\s*)?(?:\d{1,2}/){0,2}\d{3,4}\??"
#: Dates at the end of a person heading: ", 1882-1945", ", 1890-", ", b. 1900", ", d. 1950",
#: ", ca. 1880-1950", ", active 1920-1930", ", fl. 1920".
PERSON_DATES: Final = re.compile(
    r",\s*(?P<marker>b\.|born|d\.|died|fl\.|flourished|active)?\s*"
    rf"(?P<range>{_DATE}(?:\s*-\s*(?:{_DATE})?)?)\.?\s*$",
    re.IGNORECASE,
)
#: Dates at the end of an organization heading, after a period, comma or parenthesis
#: (". 2/16/1944-6/30/1946", ". (10/28/1992 - )", " (1946-1950)", ". 4/1942-"), so that a number
#: that is part of a name ("Camp 1234") is not read as a date.
ORGANIZATION_DATES: Final = re.compile(
    rf"(?:[.,]\s*\(?|\s*\()\s*(?P<range>{_DATE}(?:\s*-\s*(?:{_DATE})?)?)\s*\)?\.?\s*$"
)
_YEAR: Final = re.compile(r"(?<!\d)\d{3,4}(?!\d)")


@dataclass(frozen=True, slots=True)
class Authority:
    """One authority record, as much of it as linking needs."""

    na_id: int
    authority_type: str
    heading: str
    #: Other names: useFor, variant person/organization names, former organization names.
    variants: tuple[str, ...] = ()
    #: Life or existence in whole years; None where unknown (or, for the end, still open).
    start_year: int | None = None
    end_year: int | None = None
    #: Other naIds that stand for this authority (an organization's `organizationNames[].naId`,
    #: which description records cite as creators).
    aliases: tuple[int, ...] = ()

    @property
    def has_dates(self) -> bool:
        return self.start_year is not None or self.end_year is not None

    def fits(self, start: int | None, end: int | None) -> bool:
        """Whether [start, end] (None: open) overlaps this authority's years (None: open)."""
        if start is not None and self.end_year is not None and start > self.end_year:
            return False
        return not (end is not None and self.start_year is not None and end < self.start_year)


def heading_years(heading: str, authority_type: str) -> tuple[int | None, int | None]:
    """The years written at the end of a person or organization heading, (None, None) if none.

    "b. 1900" gives only a start, "d. 1950" only an end; an open range ("1890-", "(1992 - )")
    has no end."""
    pattern = PERSON_DATES if authority_type == PERSON else ORGANIZATION_DATES
    if authority_type not in (PERSON, ORGANIZATION):
        return None, None
    match = pattern.search(heading)
    if match is None:
        return None, None
    marker = (match.groupdict().get("marker") or "").lower()
    text = match.group("range")
    first, _, second = text.partition("-")
    start = _last_year(first)
    end = _last_year(second) if second else None
    if marker in ("d.", "died"):
        return None, start
    if not second and marker in ("fl.", "flourished", "active"):
        return start, start
    return start, end


def authority_from_properties(properties: Mapping[str, Any]) -> Authority | None:
    """The authority of one parsed authority record (or stub); None without naId, type or
    heading."""
    na_id = properties.get("naId")
    kind = properties.get("authorityType")
    heading = _text(properties.get("heading"))
    if not isinstance(na_id, int) or not isinstance(kind, str) or heading is None:
        return None
    variants: list[str] = []
    for key in ("useFor", "variantOrganizationNames", "name_organizationNames"):
        variants.extend(_texts(properties.get(key)))
    for key in (
        "heading_organizationNames",
        "heading_variantPersonNames",
        "name_variantPersonNames",
    ):
        variants.extend(_texts(properties.get(key)))
    if kind == PERSON:
        variants.extend(_texts(properties.get("name")))
        surname = heading.split(",", 1)[0].strip()
        if "," in heading:
            for fuller in _texts(properties.get("fullerFormOfName")):
                variants.append(f"{surname}, {fuller}")
    start, end = _years(properties, kind, [heading, *variants])
    aliases = tuple(a for a in _ints(properties.get("naId_organizationNames")) if a != na_id)
    unique = tuple(dict.fromkeys(v for v in variants if v != heading))
    return Authority(na_id, kind, heading, unique, start, end, aliases)


def _years(
    properties: Mapping[str, Any], kind: str, headings: Iterable[str]
) -> tuple[int | None, int | None]:
    """The record's date fields where it has them, each end else from its headings."""
    start = _date_year(properties.get("logicalDate_birthDate")) or _date_year(
        properties.get("logicalDate_establishDate")
    )
    end = _date_year(properties.get("logicalDate_deathDate")) or _date_year(
        properties.get("logicalDate_abolishDate")
    )
    # An organization exists from its first name's start to its last name's end (open if any
    # name is open); a person's variant headings repeat the heading's dates.
    spans = [span for span in (heading_years(h, kind) for h in headings) if span != (None, None)]
    if spans:
        starts = [s for s, _ in spans if s is not None]
        ends = [e for _, e in spans]
        if start is None and starts:
            start = min(starts)
        if end is None and all(e is not None for e in ends):
            end = max(e for e in ends if e is not None)
    return start, end


def _last_year(text: str) -> int | None:
    years = _YEAR.findall(text)
    return int(years[-1]) if years else None


def _date_year(value: Any) -> int | None:
    if isinstance(value, str) and len(value) >= 4 and value[:4].isdigit():
        return int(value[:4])
    return None


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _texts(value: Any) -> list[str]:
    values = value if isinstance(value, list | tuple) else [value]
    return [t for t in (_text(v) for v in values) if t is not None]


def _ints(value: Any) -> list[int]:
    values = value if isinstance(value, list | tuple) else [value]
    return [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
