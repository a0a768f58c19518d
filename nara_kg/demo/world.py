"""The state every record family shares: the authorities, the hierarchy, the ids and the rng.

The dataclasses are the world the records describe (terms, organizations, people, record
groups/collections and series); `World` holds them while the family modules fill it in.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from nara_kg.demo.vocabulary import TOPIC_TAXONOMY

#: Synthetic naIds start far above the real data's (real ones seen so far are below 5e8), so
#: generated and real records can share one graph.
_DESCRIPTION_ID_BASE: Final = 710_000_000
_AUTHORITY_ID_BASE: Final = 780_000_000


@dataclass
class Term:
    """A geographic, specific-records-type or topical authority."""

    na_id: int
    kind: str
    heading: str
    label: str  # the plain words, for prose
    scope_note: str = ""
    broader: list[int] = field(default_factory=list)
    narrower: list[int] = field(default_factory=list)
    related: list[int] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class OrgName:
    """One name of an organization over a period, with its own naId."""

    na_id: int
    name: str
    heading: str
    establish: dict[str, Any]
    abolish: dict[str, Any] | None


@dataclass
class Org:
    """An organization authority: a main agency, or a field office of one (`parent`)."""

    na_id: int
    short: str  # e.g. "Bureau of Flood Prevention"
    topics: list[str]
    names: list[OrgName]
    history: str
    jurisdictions: list[int] = field(default_factory=list)
    people: list[int] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)
    town: str = ""
    #: For prose: "Kettle Creek Field Office of the Bureau of Soil Survey".
    display: str = ""
    parent: int | None = None

    @property
    def current(self) -> OrgName:
        return self.names[-1]


@dataclass
class Person:
    """A person authority."""

    na_id: int
    first: str
    middle: str
    last: str
    female: bool
    birth: dict[str, Any]
    death: dict[str, Any] | None
    heading: str
    biography: str
    title: str | None = None
    orgs: list[int] = field(default_factory=list)

    @property
    def full(self) -> str:
        return f"{self.first} {self.middle}. {self.last}"

    @property
    def pronoun(self) -> str:
        return "she" if self.female else "he"


@dataclass
class Top:
    """A record group or a collection with its folder name."""

    na_id: int
    level: str
    folder: str
    title: str
    stub: dict[str, Any]
    record: dict[str, Any]
    lines: list[str] = field(default_factory=list)
    series: list[Series] = field(default_factory=list)


@dataclass
class Series:
    """A series with what its file units and items draw from (topic, place, office, years)."""

    na_id: int
    top: Top
    title: str
    topic: str
    place: Term
    records_type: str
    office: str
    creators: list[dict[str, Any]]
    start: int
    end: int
    stub: dict[str, Any]
    record: dict[str, Any]
    file_units: list[dict[str, Any]] = field(default_factory=list)
    items: int = 0


@dataclass
class LinkCounter:
    """How many descriptions cite each authority, by role (for `linkCounts` and `role`)."""

    by_role: dict[int, Counter[str]] = field(default_factory=dict)
    descriptions: dict[int, set[int]] = field(default_factory=dict)

    def add(self, authority: int, role: str, description: int) -> None:
        self.by_role.setdefault(authority, Counter())[role] += 1
        self.descriptions.setdefault(authority, set()).add(description)

    def counts(self, authority: int, roles: Iterable[str]) -> dict[str, int]:
        counter = self.by_role.get(authority, Counter())
        result = {"totalDescription": len(self.descriptions.get(authority, ()))}
        for role in roles:
            result[role] = counter.get(role, 0)
        return result


class World:
    """What the records describe, built up family by family, and the one seeded `rng` every
    family draws from (so the same seed gives the same bytes: keep the order of the draws)."""

    def __init__(self, records: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.target = records
        self._next_description = _DESCRIPTION_ID_BASE + self.rng.randrange(1000)
        self._next_authority = _AUTHORITY_ID_BASE + self.rng.randrange(1000)
        self.links = LinkCounter()
        self.geo: list[Term] = []
        self.states: list[Term] = []
        self.towns: list[Term] = []
        self.records_types: list[Term] = []
        self.topics: list[Term] = []
        self.topic_by_label: dict[str, Term] = {}
        self.orgs: list[Org] = []
        self.org_by_name_id: dict[int, Org] = {}
        self.people: list[Person] = []
        self.tops: list[Top] = []
        self.title_counts: Counter[str] = Counter()
        #: (kind, naId, details) of records that make good evaluation questions.
        self.anchors: list[tuple[str, int, dict[str, Any]]] = []
        self.used_towns: set[str] = set()
        self.used_headings: set[str] = set()
        #: Records written, by type (the summary's `records_by_type`).
        self.counts: Counter[str] = Counter()
        #: The authorities each text names: description naId -> field -> {authority: surface}
        #: (see `labels`); an office's prose name -> the authorities it names.
        self.mentions: dict[int, dict[str, dict[int, str]]] = {}
        self.office_names: dict[str, list[tuple[int, str]]] = {}
        #: The label lines, one per labelled description, in the order of the shards.
        self.labels: list[dict[str, Any]] = []
        #: (first, last) of every person, and (parent naId, town) of every field office: what
        #: a new one must differ in (a scan of the lists per draw grew with the square of N).
        self.person_names: set[tuple[str, str]] = set()
        self.field_office_towns: set[tuple[int, str]] = set()
        self._indexes: dict[str, tuple[int, dict[int, Any]]] = {}

    # ---- ids -----------------------------------------------------------------------------

    def description_id(self) -> int:
        self._next_description += self.rng.randint(1, 37)
        return self._next_description

    def authority_id(self) -> int:
        self._next_authority += self.rng.randint(1, 53)
        return self._next_authority

    # ---- lookups -------------------------------------------------------------------------

    def _positions(self, name: str, items: list[Any]) -> dict[int, int]:
        """naId -> index of its first item in `items`, rebuilt only when the list has grown."""
        known = self._indexes.get(name)
        if known is None or known[0] != len(items):
            positions: dict[int, int] = {}
            for index, item in enumerate(items):
                positions.setdefault(item.na_id, index)
            known = (len(items), positions)
            self._indexes[name] = known
        return known[1]

    def org_with_id(self, na_id: int | None) -> Org | None:
        index = self._positions("orgs-positions", self.orgs).get(na_id)  # type: ignore[arg-type]
        return None if index is None else self.orgs[index]

    def person_with_id(self, na_id: int) -> Person | None:
        index = self._positions("people-positions", self.people).get(na_id)
        return None if index is None else self.people[index]

    def people_in_order(self, na_ids: Iterable[int]) -> list[Person]:
        """The people with these naIds, each once, in the order of `people`."""
        position = self._positions("people-positions", self.people)
        return [self.people[i] for i in sorted({position[n] for n in na_ids if n in position})]

    def orgs_in_order(self, na_ids: Iterable[int]) -> list[Org]:
        """The organizations with these naIds, each once, in the order of `orgs`."""
        position = self._positions("orgs-positions", self.orgs)
        return [self.orgs[i] for i in sorted({position[n] for n in na_ids if n in position})]

    def field_offices_of(self, parent: int) -> list[Org]:
        """The field offices of an organization, in the order they were made."""
        known = self._indexes.get("offices")
        if known is None or known[0] != len(self.orgs):
            offices: dict[int, list[Org]] = {}
            for org in self.orgs:
                if org.parent is not None:
                    offices.setdefault(org.parent, []).append(org)
            known = (len(self.orgs), offices)
            self._indexes["offices"] = known
        return list(known[1].get(parent, []))

    def orgs_governing(self, place: int) -> int:
        """How many organizations list the place among their jurisdictions."""
        known = self._indexes.get("governing")
        if known is None or known[0] != len(self.orgs):
            counts: dict[int, int] = {}
            for org in self.orgs:
                for term in set(org.jurisdictions):
                    counts[term] = counts.get(term, 0) + 1
            known = (len(self.orgs), counts)
            self._indexes["governing"] = known
        return int(known[1].get(place, 0))

    def unique(self, heading: str) -> bool:
        """Claim an authority heading; False when another authority already has it."""
        if heading in self.used_headings:
            return False
        self.used_headings.add(heading)
        return True

    def topic(self, label: str) -> Term:
        """The generated topical term for a label, or the nearest generated one."""
        term = self.topic_by_label.get(label)
        if term is not None:
            return term
        for top, narrower in TOPIC_TAXONOMY.items():
            if label in narrower and top in self.topic_by_label:
                return self.topic_by_label[top]
        return self.topics[sum(map(ord, label)) % len(self.topics)]

    def topic_labels(self) -> list[str]:
        """Labels of the generated topical terms that are not subdivisions."""
        labels = [t.heading for t in self.topics if "--" not in t.heading]
        return labels or [t.heading for t in self.topics]
