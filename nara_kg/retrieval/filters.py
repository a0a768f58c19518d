"""What archivists restrict a search to (:class:`SearchFilters`): levels of description,
record and authority types, types of materials, dates, and "within" a record group, series,
file unit or collection; validated when made, and turned into the parameters of the filter
predicate both candidate queries share (``graph.search.FILTER_PREDICATE``).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from neo4j import Driver

from nara_kg.errors import QueryError
from nara_kg.graph import search as cypher
from nara_kg.model.schema import AUTHORITY_TYPES, DESCRIPTION_TYPES, RecordKind

#: The levels of description a search can be restricted to "within" (they hold records).
CONTAINER_LEVELS = frozenset({"recordGroup", "series", "fileUnit", "collection"})
_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


def _iso_bound(value: str | None, *, end: bool, name: str) -> str | None:
    """`YYYY`, `YYYY-MM` or `YYYY-MM-DD` as the first (or, for an end, the last) day it covers.
    A month's last day is written `-31`: dates compare as text, so that bound is exact."""
    if value is None or not str(value).strip():
        return None
    match = _DATE.match(str(value).strip())
    if not match:
        raise QueryError(f"{name} must be a date written YYYY, YYYY-MM or YYYY-MM-DD: {value!r}")
    year, month, day = match.groups()
    if month is not None and not 1 <= int(month) <= 12:
        raise QueryError(f"{name} has no month {month}: {value!r}")
    if day is not None and not 1 <= int(day) <= 31:
        raise QueryError(f"{name} has no day {day}: {value!r}")
    return f"{year}-{month or ('12' if end else '01')}-{day or ('31' if end else '01')}"


@dataclass(frozen=True)
class SearchFilters:
    """What archivists restrict a search to. Values within one field are alternatives; fields
    combine with AND, except `levels` and `authority_types`, which together say which record
    types are wanted (a series or a person, say). Invalid values raise QueryError."""

    #: Levels of description: item, fileUnit, series, recordGroup, collection.
    levels: tuple[str, ...] = ()
    #: `description` or `authority`.
    record_type: str | None = None
    #: person, organization, geographicPlaceName, specificRecordsType, topicalSubject.
    authority_types: tuple[str, ...] = ()
    #: Types of archival materials (`generalRecordsTypes`), e.g. "Textual Records".
    materials: tuple[str, ...] = ()
    #: Records whose dates (inclusive, else coverage, else those a file unit's title states,
    #: else production dates, else those of the nearest dated ancestor) overlap this range.
    date_from: str | None = None
    date_to: str | None = None
    #: naId of a record group, series, file unit or collection: only records under it.
    within: int | None = None

    def __post_init__(self) -> None:
        unknown_levels = sorted(set(self.levels) - DESCRIPTION_TYPES)
        if unknown_levels:
            raise QueryError(
                f"unknown level of description {unknown_levels}: use {sorted(DESCRIPTION_TYPES)}"
            )
        unknown_types = sorted(set(self.authority_types) - AUTHORITY_TYPES)
        if unknown_types:
            raise QueryError(
                f"unknown authority type {unknown_types}: use {sorted(AUTHORITY_TYPES)}"
            )
        kinds = {kind.value for kind in RecordKind}
        if self.record_type is not None and self.record_type not in kinds:
            raise QueryError(f"unknown record type {self.record_type!r}: use {sorted(kinds)}")
        start = _iso_bound(self.date_from, end=False, name="date_from")
        end = _iso_bound(self.date_to, end=True, name="date_to")
        if start is not None and end is not None and start > end:
            raise QueryError(f"date_from {self.date_from} is after date_to {self.date_to}")
        if self.within is not None and self.within <= 0:
            raise QueryError(f"within must be a naId (a positive number): {self.within}")

    @property
    def active(self) -> bool:
        return bool(
            self.levels
            or self.record_type
            or self.authority_types
            or self.materials
            or self.date_from
            or self.date_to
            or self.within is not None
        )

    def describe(self) -> dict[str, Any]:
        """The filters that are set, as given."""
        return {key: value for key, value in asdict(self).items() if value not in ((), None, "")}

    def parameters(self, within_ids: list[int] | None) -> dict[str, Any]:
        """The parameters of `graph.search.FILTER_PREDICATE` (null: not filtered)."""
        types = [*self.levels, *self.authority_types]
        return {
            "types": types or None,
            "recordType": self.record_type,
            "materials": list(self.materials) or None,
            "withinIds": within_ids,
            "dateFrom": _iso_bound(self.date_from, end=False, name="date_from"),
            "dateTo": _iso_bound(self.date_to, end=True, name="date_to"),
        }


NO_FILTERS = SearchFilters()


def filter_parameters(driver: Driver, database: str, filters: SearchFilters) -> dict[str, Any]:
    """The predicate's parameters, with `within` resolved to the naIds under it."""
    within_ids: list[int] | None = None
    if filters.within is not None:
        found = cypher.descendants(driver, database, filters.within)
        if found is None:
            raise QueryError(f"there is no record with naId {filters.within} to search within")
        if found["level"] not in CONTAINER_LEVELS:
            raise QueryError(
                f"naId {filters.within} ({found['nodeType']}) holds no records: search within "
                "a record group, series, file unit or collection"
            )
        within_ids = [int(na_id) for na_id in found["ids"]]
    return filters.parameters(within_ids)
