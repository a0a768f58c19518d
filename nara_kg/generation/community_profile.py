"""What a community's records are, in words a researcher reads: how many of each kind, when
(the years their dates span), whose (their creators), the key series and collections, the
record that stands for them; and the prose helpers the extractive report writes it with.

Made from every member and relationship row of the community (not only those that fit a
report's token budget), so a coarse community's profile is as complete as a fine one's.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Protocol

from nara_kg.linking.authorities import PERSON_DATES
from nara_kg.linking.surface_forms import organization_forms
from nara_kg.model.schema import AuthorityType, DescriptionLevel, Rel

#: Kinds of record, singular and plural, as a sentence names them.
_KIND_WORDS: Final[dict[str, tuple[str, str]]] = {
    DescriptionLevel.ITEM: ("item", "items"),
    DescriptionLevel.FILE_UNIT: ("file unit", "file units"),
    DescriptionLevel.SERIES: ("series", "series"),
    DescriptionLevel.RECORD_GROUP: ("record group", "record groups"),
    DescriptionLevel.COLLECTION: ("collection", "collections"),
    AuthorityType.PERSON: ("person", "people"),
    AuthorityType.ORGANIZATION: ("organization", "organizations"),
    AuthorityType.GEOGRAPHIC_PLACE_NAME: ("place", "places"),
    AuthorityType.SPECIFIC_RECORDS_TYPE: ("record type", "record types"),
    AuthorityType.TOPICAL_SUBJECT: ("subject", "subjects"),
}
#: Levels that gather other records: a theme's key records are of these.
AGGREGATE_LEVELS: Final = frozenset(
    {DescriptionLevel.SERIES, DescriptionLevel.COLLECTION, DescriptionLevel.RECORD_GROUP}
)
DESCRIPTION_LEVELS: Final = frozenset(level.value for level in DescriptionLevel)
#: Authorities whose names a theme's sentence lists as "people and organizations".
NAMED_AUTHORITY_TYPES: Final = frozenset({AuthorityType.PERSON, AuthorityType.ORGANIZATION})
#: A year in a record's date range ("1933-04-27 to 1945-07-21" joined by an en dash, "ca. 1942").
_YEAR: Final = re.compile(r"(?<!\d)(1[4-9]\d\d|20\d\d)(?!\d)")
KEY_RECORDS: Final = 3
CREATORS_NAMED: Final = 2


def kind_words(node_type: str, count: int) -> str:
    """ "3 file units", "1 series", "2 people"."""
    singular, plural = _KIND_WORDS.get(node_type, (node_type, f"{node_type}s"))
    return f"{count} {singular if count == 1 else plural}"


def join_words(items: Sequence[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


_PERSON_SUFFIX: Final = re.compile(r"^(?:jr|sr|ii|iii|iv)\.?$", re.IGNORECASE)
_PARENTHETICAL: Final = re.compile(r"\s*\([^()]*\)")


def display_name(heading: str, authority_type: str) -> str:
    """An authority heading as running text names it: a person direct and without dates
    ("Morgenthau, Henry, 1891-1967" -> "Henry Morgenthau"), an organization by its own unit
    without dates ("Department of the Interior. War Relocation Authority. 2/16/1944-6/30/1946"
    -> "War Relocation Authority"); other headings as written."""
    heading = " ".join(heading.split())
    if authority_type == AuthorityType.PERSON:
        plain = _PARENTHETICAL.sub("", PERSON_DATES.sub("", heading)).strip(" ,")
        parts = [part.strip() for part in plain.split(",") if part.strip()]
        if len(parts) < 2:
            return plain or heading
        suffix = next((f", {p}" for p in parts[2:] if _PERSON_SUFFIX.match(p)), "")
        return f"{parts[1]} {parts[0]}{suffix}"
    if authority_type == AuthorityType.ORGANIZATION:
        return organization_forms(heading)[-1].strip(" .") or heading
    return heading


class _Member(Protocol):
    """The member fields a profile reads (report_context's MemberInfo; a protocol, as that
    module holds the profile)."""

    @property
    def na_id(self) -> int: ...
    @property
    def title(self) -> str | None: ...
    @property
    def node_type(self) -> str: ...
    @property
    def degree(self) -> int: ...
    @property
    def dates(self) -> str | None: ...
    @property
    def part_of(self) -> str | None: ...


class _Relationship(Protocol):
    @property
    def source_na_id(self) -> int: ...
    @property
    def target_na_id(self) -> int: ...
    @property
    def rel_type(self) -> str: ...


@dataclass(frozen=True, slots=True)
class KeyRecord:
    na_id: int
    title: str
    node_type: str


@dataclass(frozen=True, slots=True)
class CommunityProfile:
    """A community's records, counted and named (see the module docstring)."""

    #: Members by kind, most first (ties: descriptions first, then by kind):
    #: ("fileUnit", 879), ("collection", 1), ... ("person", 1).
    kinds: tuple[tuple[str, int], ...]
    #: The years the description records' dates span, when any carries a date.
    first_year: int | None
    last_year: int | None
    #: Display names of the creators, most records created first.
    creators: tuple[str, ...]
    #: What the members are most often part of, when that is not itself a member.
    part_of: str | None
    #: The description record that stands for the community: the one of highest degree.
    representative: KeyRecord | None
    #: The other series, collections and record groups, highest degree first.
    key_records: tuple[KeyRecord, ...]

    @property
    def total(self) -> int:
        return sum(count for _, count in self.kinds)

    @property
    def span(self) -> str | None:
        if self.first_year is None or self.last_year is None:
            return None
        if self.first_year == self.last_year:
            return str(self.first_year)
        return f"{self.first_year}\u2013{self.last_year}"


@lru_cache(maxsize=65_536)
def years_of(dates: str | None) -> tuple[int, ...]:
    """The years a date range names. Kept per text: a record is a member at every level, and
    matching its dates again at each one was a tenth of profiling a coarse community."""
    return tuple(int(year) for year in _YEAR.findall(dates or ""))


def profile_of(
    members: Iterable[_Member], relationships: Iterable[_Relationship]
) -> CommunityProfile:
    """The profile of a community from all its members and the relationships between them."""
    by_id: dict[int, _Member] = {}
    for member in members:
        by_id.setdefault(member.na_id, member)
    ranked = sorted(by_id.values(), key=lambda m: (-m.degree, m.na_id))
    return profile_of_ranked({m.na_id: m for m in ranked}, relationships)


def profile_of_ranked(
    by_id: Mapping[int, _Member], relationships: Iterable[_Relationship]
) -> CommunityProfile:
    """:func:`profile_of` of members already distinct and ranked (`by_id`: naId -> member, by
    degree, highest first, then naId), as a report context holds them: not ranked again."""
    members = by_id.values()
    kinds = Counter(member.node_type for member in members)
    descriptions = [m for m in members if m.node_type in DESCRIPTION_LEVELS]
    years = [year for m in descriptions for year in years_of(m.dates)]
    created: dict[str, set[int]] = {}
    for rel in relationships:
        if rel.rel_type != Rel.CREATOR:
            continue
        creator = by_id.get(rel.source_na_id)
        if creator is None or not creator.title:
            continue
        name = display_name(creator.title, creator.node_type)
        created.setdefault(name, set()).add(rel.target_na_id)
    creators = sorted(created, key=lambda name: (-len(created[name]), name))
    titles = {m.title for m in members if m.title}
    parents = Counter(m.part_of for m in descriptions if m.part_of and m.part_of not in titles)
    representative = next((m for m in descriptions if m.title), None)
    key_records = itertools.islice(
        (
            m
            for m in descriptions
            if m.node_type in AGGREGATE_LEVELS and m.title and m is not representative
        ),
        KEY_RECORDS,
    )
    return CommunityProfile(
        # Most first; among equals, descriptions before authorities.
        kinds=tuple(
            sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0] not in DESCRIPTION_LEVELS, kv[0]))
        ),
        first_year=min(years, default=None),
        last_year=max(years, default=None),
        creators=tuple(creators),
        part_of=min(parents, key=lambda p: (-parents[p], p)) if parents else None,
        representative=_key(representative) if representative is not None else None,
        key_records=tuple(map(_key, key_records)),
    )


def _key(member: _Member) -> KeyRecord:
    return KeyRecord(member.na_id, member.title or f"Record {member.na_id}", member.node_type)
