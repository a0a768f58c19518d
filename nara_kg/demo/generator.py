"""A deterministic generator of realistic, synthetic NARA Catalog records of all ten types.

The project cannot ship real NARA data, and no real recordGroup, collection or authority record
is publicly available, so demos, tests and benchmarks run on records made here. They follow
`shared/data/nara/STRUCTURE.md` key for key: `{"record": {...}}` lines, int naIds,
`audiovisual` as a quoted string, date objects with `logicalDate` (year-only dates get -01-01 /
-12-31), ancestors farthest first with `distance`, series stubs in ancestors carrying their
creators, physicalOccurrences with referenceUnits and mediaOccurrences, digitalObjects (some
with OCR `extractedText`, some without `objectType`), restrictions, variantControlNumbers,
holdings counts written as floats, items that skip the fileUnit level, and organization
authorities whose `organizationNames[]` entries have their own naIds, which is what
descriptions' `creators[].naId` point at.

All text comes from the word lists and templates below; nothing is copied from real records.
Places are invented towns in real states; URLs use the reserved domain example.org.
"""

from __future__ import annotations

import calendar
import itertools
import json
import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from nara_kg.ingest.parsing import ParsedRecord, Reference, iter_file

SHARD_LINES: Final = 200
MIN_RECORDS: Final = 40
#: Written into out_dir so a later run may delete shards it made before (and nothing else).
MARKER_FILE: Final = ".nara-demo-data"
QUESTIONS_FILE: Final = "questions.jsonl"

#: Synthetic naIds start far above the real data's (real ones seen so far are below 5e8), so
#: generated and real records can share one graph.
_DESCRIPTION_ID_BASE: Final = 710_000_000
_AUTHORITY_ID_BASE: Final = 780_000_000

AUTHORITY_FOLDERS: Final[dict[str, str]] = {
    "person": "person",
    "organization": "organization",
    "geographicPlaceName": "geographic-reference",
    "specificRecordsType": "specific-records-type",
    "topicalSubject": "topical-subject",
}


@dataclass(frozen=True)
class DemoDataSummary:
    files: list[Path]
    records_by_type: dict[str, int]
    questions_path: Path


# --------------------------------------------------------------------------------------------
# Word lists and templates
# --------------------------------------------------------------------------------------------

_FIRST_MALE: Final = [
    "Albert",
    "Arthur",
    "Bernard",
    "Calvin",
    "Chester",
    "Clarence",
    "Douglas",
    "Edgar",
    "Elmer",
    "Ernest",
    "Floyd",
    "Francis",
    "Harold",
    "Herbert",
    "Homer",
    "Howard",
    "Irving",
    "Jasper",
    "Leland",
    "Lester",
    "Lyle",
    "Marvin",
    "Milton",
    "Norman",
    "Orville",
    "Otis",
    "Ralph",
    "Roscoe",
    "Russell",
    "Stanley",
    "Virgil",
    "Walter",
    "Wendell",
    "Wilbur",
]
_FIRST_FEMALE: Final = [
    "Ada",
    "Agnes",
    "Alma",
    "Beatrice",
    "Bernice",
    "Clara",
    "Cora",
    "Delia",
    "Edith",
    "Eleanor",
    "Elsie",
    "Estelle",
    "Florence",
    "Gertrude",
    "Hazel",
    "Ida",
    "Imogene",
    "Irene",
    "Lucille",
    "Mabel",
    "Marjorie",
    "Mildred",
    "Myrtle",
    "Nellie",
    "Opal",
    "Pearl",
    "Rosalind",
    "Ruth",
    "Sylvia",
    "Thelma",
    "Vera",
    "Viola",
    "Winifred",
]
_LAST: Final = [
    "Abernathy",
    "Ashworth",
    "Barlow",
    "Beckett",
    "Blanchard",
    "Brannock",
    "Calloway",
    "Carrington",
    "Chadwick",
    "Cobbett",
    "Crandall",
    "Delacroix",
    "Dunleavy",
    "Eastman",
    "Ellsworth",
    "Fairbanks",
    "Fenwick",
    "Gallagher",
    "Garrity",
    "Haldane",
    "Hargrove",
    "Hathaway",
    "Holloway",
    "Isley",
    "Jessup",
    "Kimball",
    "Lacroix",
    "Langford",
    "Lowell",
    "Macready",
    "Merriweather",
    "Montague",
    "Northcott",
    "Oakes",
    "Pemberton",
    "Prescott",
    "Quimby",
    "Radcliffe",
    "Rowntree",
    "Sayers",
    "Sheffield",
    "Stallworth",
    "Sutcliffe",
    "Thackeray",
    "Trowbridge",
    "Underhill",
    "Vance",
    "Wainwright",
    "Whitcombe",
    "Winslow",
    "Yardley",
    "Zellner",
    "Ambler",
    "Birdsall",
    "Colfax",
    "Danforth",
    "Emmerich",
    "Fitzhugh",
    "Grantham",
    "Huxtable",
]
_COLLEGES: Final = (
    "a state agricultural college",
    "a small liberal arts college in the Midwest",
    "a school of mines in the West",
    "a normal school",
    "a law school in the East",
    "an engineering institute",
)
_POSITIONS: Final = (
    "field engineer",
    "district supervisor",
    "chief statistician",
    "regional director",
    "assistant administrator",
    "special counsel",
    "survey party chief",
    "principal economist",
)
_PERSONAL_TITLES: Final = ("Dr.", "Col.", "Judge", "Rev.", "Senator")

# (state name, heading abbreviation, postal code, rough latitude, rough longitude)
_STATES: Final = (
    ("Oregon", "Ore.", "OR", 44.0, -120.5),
    ("Montana", "Mont.", "MT", 47.0, -109.6),
    ("Nebraska", "Neb.", "NE", 41.5, -99.8),
    ("Kentucky", "Ky.", "KY", 37.5, -85.3),
    ("Georgia", "Ga.", "GA", 32.7, -83.4),
    ("Minnesota", "Minn.", "MN", 46.3, -94.3),
    ("New Mexico", "N.M.", "NM", 34.4, -106.1),
    ("Maine", "Me.", "ME", 45.3, -69.2),
    ("Tennessee", "Tenn.", "TN", 35.9, -86.4),
    ("Idaho", "Idaho", "ID", 44.4, -114.6),
    ("Kansas", "Kan.", "KS", 38.5, -98.4),
    ("Vermont", "Vt.", "VT", 44.0, -72.7),
    ("Arkansas", "Ark.", "AR", 34.9, -92.4),
    ("Wyoming", "Wyo.", "WY", 43.0, -107.5),
    ("Ohio", "Ohio", "OH", 40.3, -82.8),
    ("Louisiana", "La.", "LA", 31.0, -92.0),
)
_TOWN_FIRST: Final = [
    "Kettle",
    "Harlow",
    "Marrow",
    "Birch",
    "Cedar",
    "Copper",
    "Dunmore",
    "Elk",
    "Fallon",
    "Granite",
    "Hollis",
    "Iron",
    "Juniper",
    "Larch",
    "Millbrook",
    "Pine",
    "Quarry",
    "Raven",
    "Silver",
    "Stone",
    "Thorn",
    "Willow",
    "Wolf",
    "Ash",
    "Bell",
    "Clay",
    "Fox",
    "Glen",
    "Hart",
    "Lark",
]
_TOWN_SECOND: Final = [
    "Creek",
    "Falls",
    "Basin",
    "Ridge",
    "Springs",
    "Crossing",
    "Landing",
    "Valley",
    "Junction",
    "Bend",
    "Flats",
    "Hollow",
    "Point",
    "Harbor",
]

_DEPARTMENTS: Final = (
    "Department of Agriculture",
    "Department of Commerce",
    "Department of the Interior",
    "Department of Labor",
    "Department of the Treasury",
    "War Department",
    "Department of the Navy",
    "Federal Security Agency",
    "Federal Works Agency",
)
_AGENCY_KINDS: Final = ("Bureau", "Office", "Division", "Administration", "Service", "Board")
#: Agency subject -> topical terms its work touches (first is the main one).
_AGENCY_SUBJECTS: Final[dict[str, tuple[str, ...]]] = {
    "Coastal Surveys": ("Hydrography", "Cartography", "Harbors"),
    "Inland Fisheries": ("Wildlife management", "Water supply"),
    "Rural Water Supply": ("Water supply", "Sanitation", "Irrigation"),
    "Soil Survey": ("Soil conservation", "Geology"),
    "Flood Prevention": ("Flood control", "Dams", "Stream gauging"),
    "Highway Research": ("Highways", "Bridges", "Motor vehicles"),
    "Industrial Hygiene": ("Industrial hygiene", "Wages"),
    "Forest Products": ("Forestry", "Mineral resources"),
    "Mine Safety": ("Mineral resources", "Industrial hygiene"),
    "Reclamation Planning": ("Irrigation", "Dams", "Drought relief"),
    "Crop Statistics": ("Crop statistics", "Seed distribution"),
    "Harbor Improvement": ("Harbors", "Inland navigation"),
    "Weather Observation": ("Meteorology", "Aviation"),
    "Migrant Labor Camps": ("Migrant workers", "Emergency housing", "Sanitation"),
    "Emergency Housing": ("Emergency housing", "Civil defense"),
    "Civilian Training": ("Vocational education", "Military training"),
    "Aeronautical Charts": ("Cartography", "Aviation"),
    "Grazing Lands": ("Grazing", "Soil conservation"),
    "Veterans' Placement": ("Vocational education", "Wages"),
    "Drought Relief": ("Drought relief", "Crop statistics"),
    "Marine Inspection": ("Inland navigation", "Harbors"),
    "Child Nutrition": ("Child nutrition", "Public health"),
    "Watershed Protection": ("Flood control", "Forestry", "Soil conservation"),
    "Wildlife Refuges": ("Wildlife management",),
    "Stream Gauging": ("Stream gauging", "Hydrography"),
    "Fire Control": ("Forestry", "Civil defense"),
    "Seed Distribution": ("Seed distribution", "Agriculture"),
    "Railroad Safety": ("Railroads", "Motor vehicles"),
    "Tuberculosis Control": ("Tuberculosis", "Public health"),
    "Defense Mobilization": ("Mobilization", "Civil defense"),
}
_ESTABLISHED_BY: Final = (
    "an act of Congress",
    "Executive Order {n}",
    "Reorganization Plan No. {k} of {year}",
    "a departmental order of the Secretary",
)
_FIELD_WORK: Final = (
    "investigating conditions reported by local officials",
    "preparing plans and cost estimates for federal projects",
    "collecting statistics from state and county offices",
    "inspecting completed works and certifying payments",
    "advising local committees on technical questions",
    "maintaining observation stations and recording measurements",
)

_TOPIC_TAXONOMY: Final[dict[str, tuple[str, ...]]] = {
    "Water resources": ("Flood control", "Irrigation", "Water supply", "Stream gauging"),
    "Natural resources": (
        "Soil conservation",
        "Forestry",
        "Wildlife management",
        "Mineral resources",
    ),
    "Public works": ("Dams", "Highways", "Bridges", "Harbors"),
    "Public health": ("Sanitation", "Tuberculosis", "Industrial hygiene", "Child nutrition"),
    "Transportation": ("Aviation", "Railroads", "Inland navigation", "Motor vehicles"),
    "Agriculture": ("Crop statistics", "Drought relief", "Grazing", "Seed distribution"),
    "Labor": ("Wages", "Vocational education", "Migrant workers", "Labor unions"),
    "National defense": ("Civil defense", "Mobilization", "Military training", "Emergency housing"),
    "Earth sciences": ("Meteorology", "Hydrography", "Cartography", "Geology"),
}
_RELATED_TOPICS: Final = (
    ("Flood control", "Dams"),
    ("Irrigation", "Drought relief"),
    ("Stream gauging", "Hydrography"),
    ("Meteorology", "Drought relief"),
    ("Harbors", "Inland navigation"),
    ("Forestry", "Soil conservation"),
    ("Industrial hygiene", "Wages"),
    ("Emergency housing", "Civil defense"),
    ("Cartography", "Aviation"),
    ("Water resources", "Public works"),
)
_SUBDIVISIONS: Final = (
    "History",
    "Statistics",
    "Law and legislation",
    "Finance",
    "Research",
    "Safety measures",
    "Planning",
    "Public opinion",
)
_TOPIC_ASPECTS: Final = (
    "surveys and engineering studies",
    "federal grants and loans",
    "inspections and enforcement",
    "public information campaigns",
    "cooperation with state agencies",
    "emergency work programs",
    "statistics and annual reporting",
)

#: Specific records type -> narrower types, with a definition used in scope notes.
_RECORDS_TYPES: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    "Correspondence": (("Letters", "Telegrams", "Memorandums"), "letters and other messages"),
    "Photographs": (("Aerial photographs", "Lantern slides", "Negatives"), "photographic prints"),
    "Maps": (("Topographic maps", "Nautical charts", "Survey plats"), "cartographic records"),
    "Reports": (("Annual reports", "Field reports", "Inspection reports"), "formal reports"),
    "Case files": (("Personnel files", "Claims files"), "files on individual cases"),
    "Minutes": (("Board minutes",), "records of proceedings of meetings"),
    "Motion pictures": (("Newsreels",), "films and film footage"),
    "Diaries": ((), "daily personal records"),
    "Speeches": ((), "texts of addresses"),
    "Press releases": ((), "statements issued to the press"),
}
_MEDIA: Final = (
    ("Paper", ("Loose Sheets",)),
    ("Paper", ("Bound Volume",)),
    ("Microfilm", ("Microform",)),
    ("Photographic Print", ("Photographs and other Graphic Materials",)),
    ("Acetate Negative", ("Photographs and other Graphic Materials",)),
)
_GENERAL_RECORDS_TYPES: Final = (
    "Textual Records",
    "Textual Records",
    "Textual Records",
    "Photographs and other Graphic Materials",
    "Maps and Charts",
    "Moving Images",
)
_ACCESS_RESTRICTIONS: Final = (
    "FOIA (b)(6) Personal Information",
    "FOIA (b)(1) National Security",
    "FOIA (b)(5) Privileged Communications",
    "Donor Restricted",
)
_VARIANT_NUMBER_TYPES: Final = (
    "HMS/MLR Entry Number",
    "Former HMS/MLR Entry Number",
    "Inventory Entry Number",
    "Declassification Project Number",
    "Other Identifier",
    "Search Identifier",
)
_CONTRIBUTOR_TYPES: Final = ("Photographer", "Producer", "Author", "Sponsor", "Distributor")
_DOC_KINDS: Final = ("Letter", "Memorandum", "Report", "Telegram", "Transcript", "Photograph")
_VERBS: Final = (
    "reviewed",
    "approved",
    "questioned",
    "postponed",
    "recommended",
    "completed",
    "expanded",
    "reorganized",
)
_OBJECTS: Final = (
    "the proposed work plan",
    "the revised cost estimates",
    "the survey of damaged properties",
    "the schedule of field inspections",
    "the allotment of emergency funds",
    "the request of the county commissioners",
    "the report of the district engineer",
    "the training of local crews",
)
_QUALIFIERS: Final = (
    "after a lengthy discussion",
    "subject to the approval of the Secretary",
    "pending further study",
    "with minor changes",
    "in view of the recent floods",
    "because of a shortage of materials",
    "at the request of the Governor",
)
_MONTHS: Final = tuple(calendar.month_name)[1:]


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def _date(
    year: int, month: int | None = None, day: int | None = None, *, end: bool = False
) -> dict[str, Any]:
    """A date object as the export writes it: parts present, plus a full `logicalDate`."""
    obj: dict[str, Any] = {"year": year}
    if month is not None:
        obj["month"] = month
        if day is not None:
            obj["day"] = day
    logical_month = month if month is not None else (12 if end else 1)
    if day is not None and month is not None:
        logical_day = day
    else:
        logical_day = calendar.monthrange(year, logical_month)[1] if end else 1
    obj["logicalDate"] = f"{year:04d}-{logical_month:02d}-{logical_day:02d}"
    return obj


def _slash_date(obj: dict[str, Any]) -> str:
    """Heading style: 2/16/1944, 4/1942 or 1944."""
    if "day" in obj:
        return f"{obj['month']}/{obj['day']}/{obj['year']}"
    if "month" in obj:
        return f"{obj['month']}/{obj['year']}"
    return str(obj["year"])


def _human_date(obj: dict[str, Any]) -> str:
    if "day" in obj:
        return f"{_MONTHS[obj['month'] - 1]} {obj['day']}, {obj['year']}"
    if "month" in obj:
        return f"{_MONTHS[obj['month'] - 1]} {obj['year']}"
    return str(obj["year"])


_SMALL_WORDS: Final = frozenset({"and", "of", "the", "in", "on", "at", "for", "to"})


def _on_date(obj: dict[str, Any]) -> str:
    return f"on {_human_date(obj)}" if "day" in obj else f"in {_human_date(obj)}"


def _title_case(text: str) -> str:
    """Title style for a subject inside a title: "Flood control" -> "Flood Control"."""
    words = text.split(" ")
    return " ".join(
        w if (i and w in _SMALL_WORDS) else w[:1].upper() + w[1:] for i, w in enumerate(words)
    )


def _wrap(text: str, width: int) -> str:
    """Hard line breaks at spaces, as a typewritten page has (fast: no per-word loop)."""
    lines: list[str] = []
    start = 0
    while len(text) - start > width:
        cut = text.rfind(" ", start, start + width + 1)
        if cut <= start:
            cut = text.find(" ", start + width)
            if cut == -1:
                break
        lines.append(text[start:cut])
        start = cut + 1
    lines.append(text[start:])
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The world the records describe
# --------------------------------------------------------------------------------------------


@dataclass
class _Term:
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
class _OrgName:
    na_id: int
    name: str
    heading: str
    establish: dict[str, Any]
    abolish: dict[str, Any] | None


@dataclass
class _Org:
    na_id: int
    short: str  # e.g. "Bureau of Flood Prevention"
    topics: list[str]
    names: list[_OrgName]
    history: str
    jurisdictions: list[int] = field(default_factory=list)
    people: list[int] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)
    town: str = ""
    #: For prose: "Kettle Creek Field Office of the Bureau of Soil Survey".
    display: str = ""
    parent: int | None = None

    @property
    def current(self) -> _OrgName:
        return self.names[-1]


@dataclass
class _Person:
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
class _Top:
    """A record group or a collection with its folder name."""

    na_id: int
    level: str
    folder: str
    title: str
    stub: dict[str, Any]
    record: dict[str, Any]
    lines: list[str] = field(default_factory=list)
    series: list[_Series] = field(default_factory=list)


@dataclass
class _Series:
    na_id: int
    top: _Top
    title: str
    topic: str
    place: _Term
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
class _LinkCounter:
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


class _Builder:
    def __init__(self, records: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.target = records
        self._next_description = _DESCRIPTION_ID_BASE + self.rng.randrange(1000)
        self._next_authority = _AUTHORITY_ID_BASE + self.rng.randrange(1000)
        self.links = _LinkCounter()
        self.geo: list[_Term] = []
        self.states: list[_Term] = []
        self.towns: list[_Term] = []
        self.records_types: list[_Term] = []
        self.topics: list[_Term] = []
        self.topic_by_label: dict[str, _Term] = {}
        self.orgs: list[_Org] = []
        self.org_by_name_id: dict[int, _Org] = {}
        self.people: list[_Person] = []
        self.tops: list[_Top] = []
        self.title_counts: Counter[str] = Counter()
        #: (kind, naId, details) of records that make good evaluation questions.
        self.anchors: list[tuple[str, int, dict[str, Any]]] = []
        self.used_towns: set[str] = set()
        self.used_headings: set[str] = set()
        self.real_authority_lines: dict[str, list[str]] = {}
        self.counts: Counter[str] = Counter()

    # ---- ids -----------------------------------------------------------------------------

    def description_id(self) -> int:
        self._next_description += self.rng.randint(1, 37)
        return self._next_description

    def authority_id(self) -> int:
        self._next_authority += self.rng.randint(1, 53)
        return self._next_authority

    # ---- text ----------------------------------------------------------------------------

    def sentence(self, office: str, topic: str, place: str) -> str:
        rng = self.rng
        pattern = rng.randrange(6)
        if pattern == 0:
            return (
                f"The {office} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} "
                f"{rng.choice(_QUALIFIERS)}."
            )
        if pattern == 1:
            return (
                f"Work on {topic.lower()} near {place} was {rng.choice(_VERBS)} "
                f"{rng.choice(_QUALIFIERS)}."
            )
        if pattern == 2:
            return (
                f"A total of {rng.randint(12, 4800):,} dollars was allotted for "
                f"{topic.lower()} in {place} during the fiscal year."
            )
        if pattern == 3:
            return (
                f"Local officials in {place} asked that {rng.choice(_OBJECTS)} be "
                f"{rng.choice(_VERBS)} before the end of the season."
            )
        if pattern == 4:
            return (
                f"It is recommended that {rng.choice(_OBJECTS)} be forwarded to the "
                f"{office} for further action."
            )
        return (
            f"Inspection of the {topic.lower()} project showed that about "
            f"{rng.randint(10, 95)} percent of the work had been completed."
        )

    def paragraph(self, office: str, topic: str, place: str, sentences: int) -> str:
        return " ".join(self.sentence(office, topic, place) for _ in range(sentences))

    def ocr_text(self, office: str, topic: str, place: str, date: dict[str, Any]) -> str:
        """OCR-like page text: letterhead, memo lines, hard-wrapped body, scanning noise."""
        rng = self.rng
        pages = rng.choice((1, 1, 1, 2, 2, 3, 5, 8))
        out: list[str] = []
        for page in range(1, pages + 1):
            lines = [
                office.upper(),
                f"{place.upper()}",
                _human_date(date),
                "",
                rng.choice(
                    ("MEMORANDUM FOR THE DIRECTOR", "MEMORANDUM", "TO ALL DISTRICT OFFICES")
                ),
                f"SUBJECT: {topic} - {place}",
                "",
            ]
            for _ in range(rng.randint(2, 5)):
                lines.append(_wrap(self.paragraph(office, topic, place, rng.randint(2, 6)), 68))
                lines.append("")
            lines.append(f"Page {page} of {pages}")
            page_text = "\n".join(lines)
            out.append(self.noise(page_text))
        return "\n\n".join(out)

    def noise(self, text: str) -> str:
        """Characters a scanner gets wrong, applied sparsely."""
        rng = self.rng
        chars = list(text)
        for _ in range(len(chars) // 120):
            position = rng.randrange(len(chars))
            current = chars[position]
            replacement = {"l": "1", "O": "0", "e": "c", "m": "rn", "i": "!", ",": "."}.get(current)
            if replacement is not None:
                chars[position] = replacement
            elif current == " ":
                chars[position] = rng.choice((" ", "  ", " | ", " ~ "))
        return "".join(chars)

    # ---- authorities ---------------------------------------------------------------------

    def unique(self, heading: str) -> bool:
        if heading in self.used_headings:
            return False
        self.used_headings.add(heading)
        return True

    def make_geography(self, count: int) -> None:
        rng = self.rng
        nation = _Term(
            self.authority_id(),
            "geographicPlaceName",
            "United States",
            "the United States",
            "Use for records concerning the United States as a whole, including federal "
            "programs that were not limited to one state or region.",
            extra={"coordinates": "39.83, -98.58"},
        )
        self.unique(nation.heading)
        self.geo.append(nation)
        states = list(_STATES)
        rng.shuffle(states)
        n_states = max(1, min(len(states), (count - 1) // 4))
        for state, abbrev, postal, lat, lon in states[:n_states]:
            term = _Term(
                self.authority_id(),
                "geographicPlaceName",
                state,
                state,
                f"Use for records concerning the State of {state} as a whole. Records about "
                f"a single county or town in {state} are indexed under that place.",
                broader=[nation.na_id],
                extra={"coordinates": f"{lat:.2f}, {lon:.2f}", "abbrev": abbrev, "postal": postal},
            )
            nation.narrower.append(term.na_id)
            self.unique(term.heading)
            self.states.append(term)
            self.geo.append(term)
        attempts = 0
        while len(self.geo) < count and attempts < count * 20:
            attempts += 1
            town = f"{rng.choice(_TOWN_FIRST)} {rng.choice(_TOWN_SECOND)}"
            if town in self.used_towns:
                continue
            state_term = rng.choice(self.states)
            heading = f"{town} ({state_term.extra['abbrev']})"
            if not self.unique(heading):
                continue
            self.used_towns.add(town)
            feature = rng.choice(("town", "farming community", "county seat", "river town"))
            topic = rng.choice(list(_AGENCY_SUBJECTS))
            base_lat, base_lon = (float(x) for x in state_term.extra["coordinates"].split(", "))
            term = _Term(
                self.authority_id(),
                "geographicPlaceName",
                heading,
                f"{town}, {state_term.label}",
                f"{town} is a {feature} in {state_term.label}. Use for records concerning the "
                f"town and its vicinity, including local {topic.lower()} work.",
                broader=[state_term.na_id],
                extra={
                    "coordinates": f"{base_lat + rng.uniform(-1.5, 1.5):.4f}, "
                    f"{base_lon + rng.uniform(-2, 2):.4f}",
                    "town": town,
                    "postal": state_term.extra["postal"],
                },
            )
            state_term.narrower.append(term.na_id)
            self.towns.append(term)
            self.geo.append(term)
        if len(self.towns) >= 2:
            for _ in range(max(1, len(self.towns) // 6)):
                a, b = rng.sample(self.towns, 2)
                if b.na_id not in a.related:
                    a.related.append(b.na_id)
                    b.related.append(a.na_id)

    def make_records_types(self, count: int) -> None:
        order: list[tuple[str, str | None]] = []
        for base, (narrower, _definition) in _RECORDS_TYPES.items():
            order.append((base, None))
            order.extend((n, base) for n in narrower)
        by_heading: dict[str, _Term] = {}
        for heading, parent in order[: max(count, 3)]:
            if parent is not None and parent not in by_heading:
                continue
            definition = _RECORDS_TYPES.get(heading, ((), ""))[1] or (
                f"{heading.lower()}, a kind of {(parent or '').lower()}"
            )
            term = _Term(
                self.authority_id(),
                "specificRecordsType",
                heading,
                heading.lower(),
                f"Use for {definition}, in any physical form.",
            )
            if parent is not None:
                broader = by_heading[parent]
                term.broader.append(broader.na_id)
                broader.narrower.append(term.na_id)
            self.unique(heading)
            by_heading[heading] = term
            self.records_types.append(term)

    def make_topics(self, count: int) -> None:
        rng = self.rng
        tops = list(_TOPIC_TAXONOMY)
        rng.shuffle(tops)
        # Whole small trees first, so even a few terms have broader/narrower links.
        order: list[tuple[str, str | None]] = []
        rest: list[tuple[str, str | None]] = []
        for top in tops:
            narrower = list(_TOPIC_TAXONOMY[top])
            rng.shuffle(narrower)
            order.append((top, None))
            order.extend((n, top) for n in narrower[:2])
            rest.extend((n, top) for n in narrower[2:])
        order.extend(rest)
        for term_label, _parent in list(order):
            for subdivision in _SUBDIVISIONS:
                order.append((f"{term_label}--{subdivision}", term_label))
        for label, parent in order:
            if len(self.topics) >= max(count, 3):
                break
            if parent is not None and parent not in self.topic_by_label:
                continue
            plain = label.replace("--", ", ")
            aspects = rng.sample(_TOPIC_ASPECTS, 2)
            term = _Term(
                self.authority_id(),
                "topicalSubject",
                label,
                plain.lower(),
                f"Use for records about {plain.lower()}, including {aspects[0]} and {aspects[1]}.",
            )
            if parent is not None:
                broader = self.topic_by_label[parent]
                term.broader.append(broader.na_id)
                broader.narrower.append(term.na_id)
            self.unique(label)
            self.topic_by_label[label] = term
            self.topics.append(term)
        for a, b in _RELATED_TOPICS:
            if a in self.topic_by_label and b in self.topic_by_label:
                self.topic_by_label[a].related.append(self.topic_by_label[b].na_id)
                self.topic_by_label[b].related.append(self.topic_by_label[a].na_id)

    def topic(self, label: str) -> _Term:
        """The generated topical term for a label, or the nearest generated one."""
        term = self.topic_by_label.get(label)
        if term is not None:
            return term
        for top, narrower in _TOPIC_TAXONOMY.items():
            if label in narrower and top in self.topic_by_label:
                return self.topic_by_label[top]
        return self.topics[sum(map(ord, label)) % len(self.topics)]

    def make_people(self, count: int) -> None:
        rng = self.rng
        attempts = 0
        while len(self.people) < count and attempts < count * 20:
            attempts += 1
            female = rng.random() < 0.4
            first = rng.choice(_FIRST_FEMALE if female else _FIRST_MALE)
            middle = rng.choice("ABCDEFGHJKLMNPRSTW")
            last = rng.choice(_LAST)
            born = rng.randint(1860, 1935)
            died = born + rng.randint(45, 92)
            death = _date(died, end=True) if died < 2015 else None
            heading = f"{last}, {first} {middle}., {born}-{died if death else ''}"
            if not self.unique(heading) or any(
                p.first == first and p.last == last for p in self.people
            ):
                continue
            birth = _date(born)
            self.people.append(
                _Person(
                    self.authority_id(),
                    first,
                    middle,
                    last,
                    female,
                    birth,
                    death,
                    heading,
                    "",
                    title=rng.choice(_PERSONAL_TITLES) if rng.random() < 0.2 else None,
                )
            )

    def make_orgs(self, count: int) -> None:
        rng = self.rng
        subjects = list(_AGENCY_SUBJECTS)
        rng.shuffle(subjects)
        mains: list[_Org] = []
        n_mains = min(len(subjects), max(2, count // 3))
        attempts = 0
        while len(self.orgs) < count and attempts < count * 30:
            attempts += 1
            # A third are main agencies; the rest are field offices of one of them.
            if len(mains) < n_mains:
                subject = subjects[(len(mains) + attempts) % len(subjects)]
                kind = rng.choice(_AGENCY_KINDS)
                short = f"{kind} of {subject}"
                org = self.make_main_org(short, subject)
                if org is None:
                    continue
                mains.append(org)
            else:
                parent = rng.choice(mains)
                org_or_none = self.make_field_office(parent)
                if org_or_none is None:
                    continue
                org = org_or_none
            self.orgs.append(org)
            for name in org.names:
                self.org_by_name_id[name.na_id] = org

    def make_main_org(self, short: str, subject: str) -> _Org | None:
        rng = self.rng
        departments = rng.sample(_DEPARTMENTS, 2)
        start = rng.randint(1903, 1948)
        transfer = start + rng.randint(4, 18)
        abolished = transfer + rng.randint(3, 30)
        n_names = rng.choice((1, 2, 2, 3))
        dates: list[tuple[dict[str, Any], dict[str, Any] | None, str]] = []
        if n_names == 1:
            end = _date(abolished, 6, 30, end=True) if abolished < 1995 else None
            dates.append(
                (_date(start, rng.randint(1, 12), rng.randint(1, 28)), end, departments[0])
            )
        else:
            first_end = _date(transfer, 6, 30, end=True)
            dates.append((_date(start, rng.randint(1, 12), 1), first_end, departments[0]))
            second_end = _date(abolished, end=True) if abolished < 1995 else None
            dates.append((_date(transfer, 7, 1), second_end, departments[1]))
            if n_names == 3 and second_end is not None:
                later = abolished + 1
                dates.append((_date(later), None, departments[1]))
        names: list[_OrgName] = []
        for index, (establish, abolish, department) in enumerate(dates):
            name = short if index < 2 else f"{subject} Administration"
            period = f"{_slash_date(establish)}-{_slash_date(abolish) if abolish else ''}"
            if index == len(dates) - 1 and abolish is None and rng.random() < 0.5:
                heading = f"{department}. {name}. ({_slash_date(establish)} - )"
            else:
                heading = f"{department}. {name}. {period}"
            if not self.unique(heading):
                return None
            names.append(_OrgName(self.authority_id(), name, heading, establish, abolish))
        topics = list(_AGENCY_SUBJECTS[subject])
        town = rng.choice(self.towns).extra["town"] if self.towns else "Washington"
        history = self.org_history(short, names, topics, dates[0][2], town)
        org = _Org(self.authority_id(), short, topics, names, history, town=town, display=short)
        if rng.random() < 0.2:
            # Some organizations list their current name under their own naId.
            org.na_id = names[-1].na_id
        org.variants = [f"{subject} {short.split(' of ')[0]}", f"U.S. {short}"]
        return org

    def make_field_office(self, parent: _Org) -> _Org | None:
        rng = self.rng
        if not self.towns:
            return None
        town = rng.choice(self.towns).extra["town"]
        if any(o.parent == parent.na_id and o.town == town for o in self.orgs):
            return None
        unit = rng.choice(("Field Office", "District Office", "Regional Office", "Project Office"))
        name = f"{town} {unit}"
        base = parent.current
        start_year = base.establish["year"] + rng.randint(0, 6)
        establish = _date(start_year)
        end_year = start_year + rng.randint(2, 12)
        abolish = _date(end_year, end=True)
        parent_heading = re.sub(r"\.\s*\(?[\d/ ca.-]+\)?\s*$", "", base.heading)
        heading = f"{parent_heading}. {name}. {start_year}-{end_year}"
        if not self.unique(heading):
            return None
        names = [_OrgName(self.authority_id(), name, heading, establish, abolish)]
        history = (
            f"The {name} of the {parent.short} was opened in {start_year} to direct "
            f"{parent.topics[0].lower()} work in the {town} area. "
            f"{self.paragraph(parent.short, parent.topics[0], town, 2)}\n\n"
            f"The office was closed in {end_year}, and its files were sent to the central "
            f"office of the {parent.short}."
        )
        return _Org(
            self.authority_id(),
            f"{parent.short}. {name}",
            parent.topics,
            names,
            history,
            town=town,
            display=f"{name} of the {parent.short}",
            parent=parent.na_id,
        )

    def org_history(
        self,
        short: str,
        names: list[_OrgName],
        topics: list[str],
        department: str,
        town: str,
    ) -> str:
        rng = self.rng
        first = names[0]
        established_by = rng.choice(_ESTABLISHED_BY).format(
            n=rng.randint(6000, 9999), k=rng.randint(1, 5), year=first.establish["year"]
        )
        paragraphs = [
            f"The {short} was established in the {department} by {established_by}, effective "
            f"{_human_date(first.establish)}, to carry out federal programs in "
            f"{topics[0].lower()}" + (f" and {topics[1].lower()}" if len(topics) > 1 else "") + ".",
            "Its staff was responsible for {}, for {}, and for {}.".format(
                *rng.sample(_FIELD_WORK, 3)
            )
            + f" Field work was directed from a district office at {town}.",
        ]
        for previous, name in itertools.pairwise(names):
            department_then = name.heading.split(". ")[0]
            paragraphs.append(
                f"Effective {_human_date(name.establish)}, the {previous.name} was transferred "
                f"to the {department_then}"
                + (f" and renamed the {name.name}" if name.name != previous.name else "")
                + "."
            )
        last = names[-1]
        if last.abolish is not None:
            paragraphs.append(
                f"The {last.name} was abolished {_on_date(last.abolish)}, and its "
                f"remaining functions were assigned to other offices of the "
                f"{last.heading.split('. ')[0]}."
            )
        return "\n\n".join(paragraphs)

    def link_people(self) -> None:
        """Biographies, and the cross references between people and organizations."""
        rng = self.rng
        for person in self.people:
            org = rng.choice(self.orgs) if self.orgs else None
            if org is not None:
                person.orgs.append(org.na_id)
                if person.na_id not in org.people:
                    org.people.append(person.na_id)
            person.biography = self.biography(person, org)
        for org in self.orgs:
            if self.geo:
                state = rng.choice(self.states) if self.states else self.geo[0]
                org.jurisdictions = [self.geo[0].na_id, state.na_id][: rng.choice((1, 2))]

    def biography(self, person: _Person, org: _Org | None) -> str:
        rng = self.rng
        pronoun = person.pronoun
        town = rng.choice(self.towns).label if self.towns else "a small town"
        born = person.birth["year"]
        joined = born + rng.randint(22, 35)
        position = rng.choice(_POSITIONS)
        agency = org.display if org is not None else "federal service"
        paragraphs = [
            f"{person.full} was born in {town} in {born}. {pronoun.capitalize()} studied at "
            f"{rng.choice(_COLLEGES)} and taught school for several years.",
            f"In {joined} {pronoun} joined the {agency} as {position}, and later directed its "
            f"work on {(org.topics[0] if org else 'public works').lower()}. "
            f"{pronoun.capitalize()} wrote widely on the subject and testified before "
            f"congressional committees.",
        ]
        if person.death is not None:
            paragraphs.append(
                f"After retiring, {pronoun} returned to private life. {person.first} "
                f"{person.last} died in {person.death['year']}."
            )
        return "\n\n".join(paragraphs)

    # ---- descriptions --------------------------------------------------------------------

    def reference_unit(self, top_level: str) -> dict[str, Any]:
        rng = self.rng
        place = rng.choice(self.towns) if self.towns else None
        town = place.extra["town"] if place is not None else "Capitol City"
        postal = place.extra["postal"] if place is not None else rng.choice(_STATES)[2]
        name = (
            f"{rng.choice(_LAST)} Presidential Library"
            if top_level == "collection"
            else f"National Archives at {town}"
        )
        code = "".join(w[0] for w in name.split()).upper()
        return {
            "name": name,
            "address1": f"{rng.randint(100, 9899)} {rng.choice(_LAST)} Road",
            "city": town,
            "state": postal,
            "postalCode": f"{rng.randint(10000, 99999)}",
            "phone": f"555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
            "fax": f"555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
            "email": f"{code.lower()}.reference@example.org",
            "mailCode": f"R{code}",
        }

    def restrictions(self, record: dict[str, Any], restricted_share: float) -> None:
        rng = self.rng
        if rng.random() < restricted_share:
            record["accessRestriction"] = {
                "status": rng.choice(("Restricted - Partly", "Restricted - Possibly")),
                "note": "Some records may be screened for personal privacy before release.",
                "specificAccessRestrictions": [
                    {"restriction": r} for r in rng.sample(_ACCESS_RESTRICTIONS, 2)
                ],
            }
            if rng.random() < 0.3:
                record["accessRestriction"]["specificAccessRestrictions"][0][
                    "securityClassification"
                ] = "Confidential"
        else:
            record["accessRestriction"] = {"status": "Unrestricted"}
        if rng.random() < restricted_share:
            record["useRestriction"] = {
                "status": "Restricted - Possibly",
                "specificUseRestrictions": ["Copyright"],
                "note": "Some of the records may be subject to copyright restrictions.",
            }
        else:
            record["useRestriction"] = {"status": "Unrestricted"}

    def physical(
        self, level: str, reference_unit: dict[str, Any], media: int = 1
    ) -> list[dict[str, Any]]:
        rng = self.rng
        occurrences = []
        for index in range(media):
            specific, general = _MEDIA[index % len(_MEDIA)] if index else rng.choice(_MEDIA[:2])
            occurrence: dict[str, Any] = {
                "copyStatus": "Preservation" if index == 0 else "Reproduction-Reference",
                "referenceUnits": [reference_unit],
                "mediaOccurrences": [
                    {"specificMediaType": specific, "generalMediaTypes": list(general)}
                ],
            }
            if level == "series":
                # The bulk export writes holdings counts as floats.
                count = float(rng.randint(1, 60))
                occurrence["holdingsMeasurements"] = [{"count": count, "type": "linear feet"}]
                occurrence["extent"] = f"{int(count)} linear feet"
            elif level == "item" and rng.random() < 0.5:
                pages = rng.randint(1, 12)
                occurrence["extent"] = f"{pages} page{'s' if pages > 1 else ''}"
            if rng.random() < 0.1:
                occurrence["mediaOccurrences"][0]["containerId"] = str(rng.randint(1, 400))
            occurrences.append(occurrence)
        return occurrences

    def digital_objects(
        self, na_id: int, count: int, ocr: tuple[str, str, str, dict[str, Any]] | None
    ) -> list[dict[str, Any]]:
        rng = self.rng
        objects = []
        pdf = rng.random() < 0.6
        for index in range(count):
            filename = f"md{index + 1:04d}.pdf" if pdf else f"img_{na_id}_{index + 1:03d}.jpg"
            obj: dict[str, Any] = {
                "objectFileSize": rng.randint(40_000, 24_000_000),
                "objectFilename": filename,
                "objectId": str(na_id + 1 + index),
                "objectType": "Portable Document File (PDF)" if pdf else "Image (JPG)",
                "objectUrl": f"https://example.org/nara-demo/media/{na_id}/{filename}",
            }
            if rng.random() < 0.04:
                del obj["objectType"]  # missing on some real entries
            if not pdf and rng.random() < 0.2:
                obj["objectDesignator"] = f"page {index + 1}"
                obj["objectDescription"] = "access scan"
            objects.append(obj)
        if ocr is not None and objects:
            # OCR sits on one object of the set, usually the last (as in the bulk export).
            objects[-1]["extractedText"] = self.ocr_text(*ocr)
        return objects

    def subject_refs(
        self, description: int, topic: str, place: _Term | None, share: float
    ) -> list[dict[str, Any]]:
        rng = self.rng
        refs: list[dict[str, Any]] = []
        if rng.random() >= share:
            return refs
        term = self.topic(topic)
        refs.append(self.authority_ref(term.na_id, term.heading, "topicalSubject"))
        self.links.add(term.na_id, "subject", description)
        self.links.add(term.na_id, "topicalSubject", description)
        if place is not None and rng.random() < 0.7:
            refs.append(self.authority_ref(place.na_id, place.heading, "geographicPlaceName"))
            self.links.add(place.na_id, "subject", description)
            self.links.add(place.na_id, "geographicPlaceName", description)
        if self.records_types and rng.random() < 0.4:
            srt = rng.choice(self.records_types)
            refs.append(self.authority_ref(srt.na_id, srt.heading, "specificRecordsType"))
            self.links.add(srt.na_id, "subject", description)
            self.links.add(srt.na_id, "specificRecordsType", description)
        if self.people and rng.random() < 0.15:
            person = rng.choice(self.people)
            refs.append(self.authority_ref(person.na_id, person.heading, "person"))
            self.links.add(person.na_id, "subject", description)
        return refs

    @staticmethod
    def authority_ref(na_id: int, heading: str, authority_type: str) -> dict[str, Any]:
        return {"naId": na_id, "heading": heading, "authorityType": authority_type}

    def org_creator(
        self, org: _Org, name: _OrgName, creator_type: str, description: int
    ) -> dict[str, Any]:
        self.links.add(org.na_id, "creator", description)
        entry: dict[str, Any] = {
            "creatorType": creator_type,
            "authorityType": "organization",
            "naId": name.na_id,  # the nested name, not the organization's own naId
            "heading": name.heading,
            "establishDate": name.establish,
        }
        if name.abolish is not None:
            entry["abolishDate"] = name.abolish
        return entry

    def person_creator(
        self, person: _Person, creator_type: str, description: int
    ) -> dict[str, Any]:
        self.links.add(person.na_id, "creator", description)
        entry: dict[str, Any] = {
            "creatorType": creator_type,
            "authorityType": "person",
            "naId": person.na_id,
            "heading": person.heading,
            "birthDate": person.birth,
        }
        if person.death is not None:
            entry["deathDate"] = person.death
        return entry

    def make_tops(self, n_rg: int, n_coll: int) -> None:
        rng = self.rng
        rg_numbers = rng.sample([n for n in range(301, 599) if n != 210], n_rg)
        mains = [o for o in self.orgs if o.parent is None] or self.orgs
        for number in rg_numbers:
            org = mains[len(self.tops) % len(mains)]
            na_id = self.description_id()
            start = org.names[0].establish["year"]
            end = min(2005, (org.current.abolish or {"year": start + 40})["year"] + 10)
            title = f"Records of the {org.current.name}"
            if title in (t.title for t in self.tops):
                title = f"Records of the {org.short}"
            dates = (_date(start), _date(end, end=True))
            stub = {
                "distance": 0,
                "levelOfDescription": "recordGroup",
                "recordGroupNumber": number,
                "naId": na_id,
                "title": title,
                "inclusiveStartDate": dates[0],
                "inclusiveEndDate": dates[1],
            }
            record: dict[str, Any] = {
                "naId": na_id,
                "levelOfDescription": "recordGroup",
                "recordType": "description",
                "title": title,
                "recordGroupNumber": number,
                "inclusiveStartDate": dates[0],
                "inclusiveEndDate": dates[1],
                "creators": [self.org_creator(org, org.current, "Most Recent", na_id)],
                "scopeAndContentNote": (
                    f"This record group consists of records of the {org.short} and its "
                    f"predecessors, {start}-{end}, documenting federal work on "
                    f"{org.topics[0].lower()}.\n\n"
                    f"{self.paragraph(org.short, org.topics[0], org.town, 3)}"
                ),
                "referenceUnits": [self.reference_unit("recordGroup")],
                "generalRecordsTypes": [
                    "Textual Records",
                    "Photographs and other Graphic Materials",
                ],
                "dataControlGroup": {
                    "groupCd": f"RD{number}",
                    "groupId": "ou=RDT,ou=groups",
                    "groupName": "Reference Division, Textual",
                },
            }
            if rng.random() < 0.5:
                record["findingAids"] = [
                    {
                        "findingAidType": "Preliminary Inventory",
                        "note": f"Preliminary inventory of the records of RG {number}.",
                        "source": "National Archives",
                        "fileFormat": "PDF",
                        "url": f"https://example.org/nara-demo/finding-aids/rg{number}.pdf",
                    }
                ]
            self.anchors.append(("recordGroup", na_id, {"org": org.short, "number": number}))
            self.tops.append(_Top(na_id, "recordGroup", f"rg_{number}", title, stub, record))
        used_people: list[int] = []
        for _ in range(n_coll):
            candidates = [p for p in self.people if p.na_id not in used_people] or self.people
            person = candidates[0]
            used_people.append(person.na_id)
            donor = rng.choice([p for p in self.people if p is not person] or self.people)
            na_id = self.description_id()
            library = rng.choice(("LPX", "NLY", "LPQ", "NLZ"))
            identifier = f"{library}-{person.last.upper()[:6]}"
            start = person.birth["year"] + 18
            end = min(2005, (person.death or {"year": start + 50})["year"])
            dates = (_date(start), _date(end, end=True))
            title = f"{person.first} {person.middle}. {person.last} Papers"
            stub = {
                "distance": 0,
                "levelOfDescription": "collection",
                "collectionIdentifier": identifier,
                "naId": na_id,
                "title": title,
                "inclusiveStartDate": dates[0],
                "inclusiveEndDate": dates[1],
            }
            if rng.random() < 0.5:
                # Presidential-library collections often carry approximate dates.
                dates = ({**dates[0], "dateQualifier": "ca."}, {**dates[1], "dateQualifier": "ca."})
                stub["inclusiveStartDate"], stub["inclusiveEndDate"] = dates
            self.links.add(donor.na_id, "donor", na_id)
            record = {
                "naId": na_id,
                "levelOfDescription": "collection",
                "recordType": "description",
                "title": title,
                "collectionIdentifier": identifier,
                "inclusiveStartDate": stub["inclusiveStartDate"],
                "inclusiveEndDate": stub["inclusiveEndDate"],
                "creators": [self.person_creator(person, "Most Recent", na_id)],
                "donors": [self.authority_ref(donor.na_id, donor.heading, "person")],
                "scopeAndContentNote": (
                    f"This collection consists of the personal and professional papers of "
                    f"{person.full}, {start}-{end}.\n\n{person.biography}\n\n"
                    f"The papers were donated by {donor.first} {donor.last}."
                ),
                "referenceUnits": [self.reference_unit("collection")],
                "variantControlNumbers": [
                    {
                        "number": f"{library} {rng.randint(1, 99)}-{rng.randint(1, 999)}",
                        "type": "Other Identifier",
                    }
                ],
                "dataControlGroup": {"groupCd": library, "groupId": f"ou={library},ou=groups"},
            }
            self.anchors.append(("collection", na_id, {"person": person.full}))
            self.tops.append(_Top(na_id, "collection", f"coll_{identifier}", title, stub, record))

    def make_series(self, count: int) -> list[_Series]:
        rng = self.rng
        all_series: list[_Series] = []
        for index in range(count):
            # Every top gets series first, then the rest go round at random.
            top = self.tops[index] if index < len(self.tops) else rng.choice(self.tops)
            all_series.append(self.make_one_series(top, len(top.series) + 1))
        return all_series

    def make_one_series(self, top: _Top, entry_number: int) -> _Series:
        rng = self.rng
        na_id = self.description_id()
        place = rng.choice(self.towns) if self.towns else self.geo[0]
        records_type = rng.choice(self.records_types).heading if self.records_types else "Records"
        creators: list[dict[str, Any]]
        # Mostly the creator's own subjects, sometimes any subject of the taxonomy.
        any_topic = rng.choice(self.topic_labels())
        if top.level == "recordGroup":
            org = self.org_for_top(top)
            offices = [o for o in self.orgs if o.parent == org.na_id]
            if offices and rng.random() < 0.4:
                # Field offices create series of their own (like the relocation centers of a
                # real record group), about their own town.
                org = rng.choice(offices)
                place = next((t for t in self.towns if t.extra["town"] == org.town), place)
            topic = rng.choice(org.topics) if rng.random() < 0.75 else any_topic
            office = org.display
            start = max(org.names[0].establish["year"], top.stub["inclusiveStartDate"]["year"])
            end = min(start + rng.randint(1, 15), top.stub["inclusiveEndDate"]["year"])
            end = max(start, end)
            latest = [n for n in org.names if n.establish["year"] <= end] or org.names[:1]
            creators = [self.org_creator(org, latest[-1], "Most Recent", na_id)]
            if len(latest) > 1:
                creators.append(self.org_creator(org, latest[-2], "Predecessor", na_id))
        else:
            person_na_id = top.record["creators"][0]["naId"]
            person = next(p for p in self.people if p.na_id == person_na_id)
            topic = any_topic
            office = f"office of {person.full}"
            start = rng.randint(
                top.stub["inclusiveStartDate"]["year"], top.stub["inclusiveEndDate"]["year"]
            )
            end = min(start + rng.randint(0, 12), top.stub["inclusiveEndDate"]["year"])
            creators = [self.person_creator(person, "Most Recent", na_id)]
        town = place.extra.get("town", place.label)
        subject = _title_case(topic)
        pattern = rng.randrange(5)
        if pattern == 0:
            title = f"{records_type} Relating to {subject} in {town}"
        elif pattern == 1:
            title = f"{town} {subject} Project Files, {start}-{end}"
        elif pattern == 2:
            title = f"{records_type} of the {town} {rng.choice(('Committee', 'Survey', 'Project'))}"
        elif pattern == 3:
            title = f"Reports on {subject} Activities near {town}"
        else:
            title = f"{records_type} Concerning {subject}, {start}-{end}"
        self.title_counts[title] += 1
        dates = (_date(start, rng.randint(1, 12), rng.randint(1, 28)), _date(end, end=True))
        stub = {
            "distance": 0,
            "levelOfDescription": "series",
            "naId": na_id,
            "title": title,
            "inclusiveStartDate": dates[0],
            "inclusiveEndDate": dates[1],
            "creators": creators,
        }
        record: dict[str, Any] = {
            "naId": na_id,
            "levelOfDescription": "series",
            "recordType": "description",
            "title": title,
            "inclusiveStartDate": dates[0],
            "inclusiveEndDate": dates[1],
            "creators": creators,
            "generalRecordsTypes": [rng.choice(_GENERAL_RECORDS_TYPES)],
            "ancestors": [self.ancestor(top.stub, 1)],
        }
        if rng.random() < 0.92:
            record["scopeAndContentNote"] = self.series_scope(
                records_type, office, topic, town, start, end
            )
        record["variantControlNumbers"] = [
            {
                "number": f"{rng.choice(('P', 'UD', 'A1', 'NC'))} {entry_number}",
                "type": _VARIANT_NUMBER_TYPES[0],
            }
        ]
        if rng.random() < 0.3:
            record["variantControlNumbers"].append(
                {
                    "number": str(rng.randint(700000, 999999)),
                    "type": rng.choice(_VARIANT_NUMBER_TYPES[1:]),
                    "note": "Number assigned during an earlier inventory.",
                }
            )
        if rng.random() < 0.2:
            record["localIdentifier"] = f"{top.folder.split('_', 1)[1]}-{entry_number}"
        reference_unit = top.record["referenceUnits"][0]
        record["physicalOccurrences"] = self.physical(
            "series", reference_unit, rng.choice((1, 1, 2))
        )
        self.restrictions(record, 0.15)
        record["dataControlGroup"] = dict(top.record["dataControlGroup"])
        subjects = self.subject_refs(na_id, topic, place, 0.7)
        if subjects:
            record["subjects"] = subjects
        if rng.random() < 0.4:
            record["arrangement"] = rng.choice(
                (
                    "Arranged alphabetically by name of project.",
                    "Arranged chronologically.",
                    "Arranged by state and thereunder by county.",
                )
            )
        if rng.random() < 0.2:
            record["functionAndUse"] = (
                f"Used by the {office} to plan and track {topic.lower()} work."
            )
        if rng.random() < 0.1:
            record["microformPublications"] = [
                {
                    "identifier": f"M{rng.randint(1000, 2999)}",
                    "title": title,
                    "note": "Complete microfilm publication of the series.",
                }
            ]
        if rng.random() < 0.1:
            record["onlineResources"] = [
                {
                    "url": f"https://example.org/nara-demo/guides/{na_id}",
                    "description": f"Research guide to {topic.lower()} records",
                    "note": "External guide.",
                }
            ]
        series = _Series(
            na_id,
            top,
            title,
            topic,
            place,
            records_type,
            office,
            creators,
            start,
            end,
            stub,
            record,
        )
        top.series.append(series)
        # A question names the topic and the town, so the series text must name both.
        if "scopeAndContentNote" in record or pattern in (0, 1, 3):
            self.anchors.append(("series", na_id, {"topic": topic, "town": town, "title": title}))
        return series

    def topic_labels(self) -> list[str]:
        """Labels of the generated topical terms that are not subdivisions."""
        labels = [t.heading for t in self.topics if "--" not in t.heading]
        return labels or [t.heading for t in self.topics]

    def org_for_top(self, top: _Top) -> _Org:
        creator = top.record["creators"][0]["naId"]
        return self.org_by_name_id.get(creator) or next(o for o in self.orgs if o.na_id == creator)

    def series_scope(
        self, records_type: str, office: str, topic: str, town: str, start: int, end: int
    ) -> str:
        rng = self.rng
        parts = [
            f"This series consists of {records_type.lower()} created or received by the "
            f"{office} concerning {topic.lower()} in {town} and the surrounding counties, "
            f"{start}-{end}.",
            f"The records include {rng.choice(_TOPIC_ASPECTS)}, {rng.choice(_TOPIC_ASPECTS)}, "
            f"and correspondence with local officials. {self.paragraph(office, topic, town, 2)}",
        ]
        if rng.random() < 0.6:
            parts.append(self.paragraph(office, topic, town, rng.randint(2, 4)))
        return "\n\n".join(parts)

    @staticmethod
    def ancestor(stub: dict[str, Any], distance: int) -> dict[str, Any]:
        return {**stub, "distance": distance}

    def make_file_unit(self, series: _Series) -> dict[str, Any]:
        rng = self.rng
        na_id = self.description_id()
        year = rng.randint(series.start, max(series.start, series.end))
        town = series.place.extra.get("town", series.place.label)
        pattern = rng.randrange(6)
        if pattern == 0:
            month = rng.randint(1, 10)
            title = (
                f"Volume {len(series.file_units) + 1}, {_MONTHS[month - 1]} {rng.randint(1, 28)} "
                f"\u2013 {_MONTHS[month + 1]} {rng.randint(1, 28)}, {year}"
            )
        elif pattern == 1:
            person_first = rng.choice(_FIRST_MALE + _FIRST_FEMALE)
            title = f"Case File {rng.randint(100, 9999)}: {rng.choice(_LAST)}, {person_first}"
        elif pattern == 2:
            title = f"{town}: {_title_case(series.topic)}, {year}"
        elif pattern == 3:
            title = f"{_title_case(series.topic)} - General, {year}-{year + 1}"
        elif pattern == 4:
            title = f"Minutes of the {town} Advisory Board, {year}"
        else:
            title = f"Correspondence with the County Engineer of {town}, {year}"
        self.title_counts[title] += 1
        record: dict[str, Any] = {
            "naId": na_id,
            "levelOfDescription": "fileUnit",
            "recordType": "description",
            "title": title,
            "generalRecordsTypes": series.record["generalRecordsTypes"],
            "ancestors": [self.ancestor(series.top.stub, 2), self.ancestor(series.stub, 1)],
            "physicalOccurrences": [
                {
                    "copyStatus": "Preservation-Reproduction-Reference",
                    "referenceUnits": series.record["physicalOccurrences"][0]["referenceUnits"],
                    "mediaOccurrences": [
                        {"specificMediaType": "Paper", "generalMediaTypes": ["Loose Sheets"]}
                    ],
                }
            ],
            "dataControlGroup": series.record["dataControlGroup"],
        }
        self.restrictions(record, 0.08)
        if rng.random() < 0.6:
            ocr = None
            if rng.random() < 0.15:
                ocr = (
                    series.office,
                    series.topic,
                    town,
                    _date(year, rng.randint(1, 12), rng.randint(1, 28)),
                )
            record["digitalObjects"] = self.digital_objects(na_id, rng.randint(1, 6), ocr)
        if rng.random() < 0.12:
            record["scopeAndContentNote"] = (
                f"This file contains {rng.choice(_DOC_KINDS).lower()}s and notes about "
                f"{series.topic.lower()} in {town}. "
                + self.sentence(series.office, series.topic, town)
            )
        subjects = self.subject_refs(na_id, series.topic, series.place, 0.1)
        if subjects:
            record["subjects"] = subjects
        if rng.random() < 0.05:
            record["variantControlNumbers"] = [
                {
                    "number": f"{rng.randint(1, 99)}-{rng.randint(100, 999)}",
                    "type": "Other Identifier",
                }
            ]
        if rng.random() < 0.03:
            record["otherTitles"] = [f"{town} file {rng.randint(1, 400)}"]
        if pattern == 1 or pattern == 4:
            self.anchors.append(("fileUnit", na_id, {"title": title, "town": town}))
        series.file_units.append(record)
        return record

    def make_item(
        self, series: _Series, file_unit: dict[str, Any] | None
    ) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
        rng = self.rng
        na_id = self.description_id()
        town = series.place.extra.get("town", series.place.label)
        year = rng.randint(series.start, max(series.start, series.end))
        produced = _date(year, rng.randint(1, 12), rng.randint(1, 28))
        kind = rng.choice(_DOC_KINDS)
        subject = _title_case(series.topic)
        sender = rng.choice(self.people)
        receiver = rng.choice(self.people)
        if kind == "Letter":
            title = f"Letter from {sender.full} to {receiver.full} Regarding {subject} at {town}"
        elif kind == "Photograph":
            title = f"Photograph of {subject} Work near {town}, {_human_date(produced)}"
        elif kind == "Transcript":
            title = f"Transcript of a Hearing on {subject} in {town}"
        else:
            title = f"{kind} on {subject} at {town}, {_human_date(produced)}"
        self.title_counts[title] += 1
        ancestors = [
            self.ancestor(series.top.stub, 2 if file_unit is None else 3),
            self.ancestor(series.stub, 1 if file_unit is None else 2),
        ]
        if file_unit is not None:
            ancestors.append(
                {
                    "distance": 1,
                    "levelOfDescription": "fileUnit",
                    "naId": file_unit["naId"],
                    "title": file_unit["title"],
                }
            )
        record: dict[str, Any] = {
            "naId": na_id,
            "levelOfDescription": "item",
            "recordType": "description",
            "title": title,
            # The export writes this flag as a quoted string, in either capitalization.
            "audiovisual": "True"
            if kind == "Photograph" and rng.random() < 0.2
            else rng.choice(("False", "False", "false")),
            "productionDates": [produced],
            "generalRecordsTypes": ["Photographs and other Graphic Materials"]
            if kind == "Photograph"
            else ["Textual Records"],
            "ancestors": ancestors,
            "physicalOccurrences": self.physical(
                "item",
                series.record["physicalOccurrences"][0]["referenceUnits"][0],
                rng.choice((1, 2)),
            ),
            "dataControlGroup": series.record["dataControlGroup"],
        }
        self.restrictions(record, 0.1)
        if rng.random() < 0.5:
            if kind == "Photograph":
                opening = (
                    f"This photograph, taken on {_human_date(produced)}, shows "
                    f"{series.topic.lower()} work near {town}."
                )
            else:
                opening = (
                    f"This {kind.lower()} from {sender.full} to {receiver.full}, dated "
                    f"{_human_date(produced)}, concerns {series.topic.lower()} at {town}."
                )
            paragraphs = [
                opening,
                self.paragraph(series.office, series.topic, town, rng.randint(2, 4)),
            ]
            if rng.random() < 0.4:
                paragraphs.append(self.paragraph(series.office, series.topic, town, 2))
            record["scopeAndContentNote"] = "\n\n".join(paragraphs)
        has_ocr = False
        if rng.random() < 0.8:
            has_ocr = kind != "Photograph" and rng.random() < 0.45
            ocr = (series.office, series.topic, town, produced) if has_ocr else None
            record["digitalObjects"] = self.digital_objects(na_id, rng.randint(1, 4), ocr)
        if rng.random() < 0.15 and self.people:
            contributor = rng.choice(self.people)
            entries = [
                {
                    **self.authority_ref(contributor.na_id, contributor.heading, "person"),
                    "contributorType": "Photographer"
                    if kind == "Photograph"
                    else rng.choice(_CONTRIBUTOR_TYPES),
                }
            ]
            self.links.add(contributor.na_id, "contributor", na_id)
            if rng.random() < 0.3 and self.orgs:
                org = rng.choice(self.orgs)
                entries.append(
                    {
                        **self.authority_ref(
                            org.current.na_id, org.current.heading, "organization"
                        ),
                        "contributorType": "Sponsor",
                    }
                )
                self.links.add(org.na_id, "contributor", na_id)
            record["contributors"] = entries
        subjects = self.subject_refs(na_id, series.topic, series.place, 0.4)
        if subjects:
            record["subjects"] = subjects
        if rng.random() < 0.05:
            record["coverageStartDate"] = _date(year)
            record["coverageEndDate"] = _date(year + rng.randint(0, 3), end=True)
        if rng.random() < 0.08:
            record["variantControlNumbers"] = [
                {"number": f"si{series.topic}", "type": "Search Identifier"}
            ]
        transcription = None
        if rng.random() < 0.1:
            transcription = [
                {"contribution": self.transcription(sender, receiver, series.topic, town)}
                for _ in range(rng.randint(1, 3))
            ]
        if has_ocr or kind in ("Letter", "Memorandum"):
            self.anchors.append(
                (
                    "item",
                    na_id,
                    {
                        "title": title,
                        "topic": series.topic,
                        "town": town,
                        "kind": kind,
                        "date": _human_date(produced),
                    },
                )
            )
        series.items += 1
        return record, transcription

    def transcription(self, sender: _Person, receiver: _Person, topic: str, town: str) -> str:
        """A volunteer's transcription of a letter (the export's `record_transcription`)."""
        salutation = "Madam" if receiver.female else "Sir"
        body = self.paragraph(f"{town} office", topic, town, self.rng.randint(2, 5))
        return f"Dear {salutation}:\n\n{body}\n\nRespectfully yours,\n{sender.full}"

    # ---- authority records ---------------------------------------------------------------

    def org_record(self, org: _Org) -> dict[str, Any]:
        rng = self.rng
        record: dict[str, Any] = {
            "naId": org.na_id,
            "heading": org.current.heading,
            "authorityType": "organization",
            "recordType": "authority",
            "name": org.current.name,
            "administrativeHistoryNote": org.history,
            "organizationNames": [
                {
                    "naId": name.na_id,
                    "name": name.name,
                    "heading": name.heading,
                    "establishDate": name.establish,
                    **({"abolishDate": name.abolish} if name.abolish is not None else {}),
                    "creatorTypes": ["Most Recent"] if name is org.current else ["Predecessor"],
                    "recordSource": "NARA",
                }
                for name in org.names
            ],
            "linkCounts": self.links.counts(
                org.na_id, ("creator", "contributor", "donor", "subject")
            ),
        }
        if org.jurisdictions:
            record["jurisdictions"] = [
                {"naId": geo.na_id, "name": geo.heading}
                for geo in self.geo
                if geo.na_id in org.jurisdictions
            ]
        if org.people:
            record["personalReferences"] = [
                self.authority_ref(p.na_id, p.heading, "person")
                for p in self.people
                if p.na_id in org.people
            ][:5]
        if org.variants and rng.random() < 0.6:
            record["variantOrganizationNames"] = org.variants
        if rng.random() < 0.5:
            record["programAreas"] = [t for t in org.topics[:2]]
        record["sourceNotes"] = [
            f"United States Government Manual, {org.names[0].establish['year'] + 1}"
        ]
        return record

    def person_record(self, person: _Person) -> dict[str, Any]:
        rng = self.rng
        counts = self.links.counts(person.na_id, ("creator", "contributor", "donor", "subject"))
        record: dict[str, Any] = {
            "naId": person.na_id,
            "heading": person.heading,
            "authorityType": "person",
            "recordType": "authority",
            "name": f"{person.last}, {person.first} {person.middle}.",
            "fullerFormOfName": f"{person.first} {self.middle_name(person)}",
            "birthDate": person.birth,
            "biographicalNote": person.biography,
            "linkCounts": counts,
            "role": {
                "creator": counts["creator"] > 0,
                "contributor": counts["contributor"] > 0,
                "donor": counts["donor"] > 0,
                "reference": counts["subject"] > 0,
            },
            "importRecordControlNumber": f"n {rng.randint(50, 99)}{rng.randint(10000, 99999)}",
            "recordSource": "LCNAF",
            "variantPersonNames": [
                {
                    "heading": f"{person.last}, {person.first[0]}. {person.middle}.",
                    "name": f"{person.last}, {person.first[0]}. {person.middle}.",
                }
            ],
        }
        if person.death is not None:
            record["deathDate"] = person.death
        if person.title is not None:
            record["personalTitle"] = person.title
        if person.orgs:
            record["organizationalReferences"] = [
                self.authority_ref(o.na_id, o.current.heading, "organization")
                for o in self.orgs
                if o.na_id in person.orgs
            ]
        return record

    def middle_name(self, person: _Person) -> str:
        names = [n for n in (*_FIRST_MALE, *_FIRST_FEMALE, *_LAST) if n[0] == person.middle]
        return self.rng.choice(names) if names else f"{person.middle}."

    def term_record(self, term: _Term) -> dict[str, Any]:
        by_id = {t.na_id: t for t in (*self.geo, *self.records_types, *self.topics)}
        record: dict[str, Any] = {
            "naId": term.na_id,
            "heading": term.heading,
            "authorityType": term.kind,
            "recordType": "authority",
            "scopeNote": term.scope_note,
        }
        if term.broader:
            record["broaderTerms"] = []
            for na_id in term.broader:
                broader = by_id[na_id]
                entry: dict[str, Any] = {
                    "naId": na_id,
                    "heading": broader.heading,
                    "name": broader.heading,
                }
                if term.kind == "geographicPlaceName":
                    entry["description"] = "State" if broader.broader else "Country"
                record["broaderTerms"].append(entry)
        if term.narrower:
            record["narrowerTerms"] = [
                {"naId": n, "heading": by_id[n].heading} for n in term.narrower[:25]
            ]
        if term.related:
            record["relatedTerms"] = [
                {"naId": n, "heading": by_id[n].heading} for n in term.related
            ]
        roles = {
            "geographicPlaceName": (
                "subject",
                "geographicPlaceName",
                "jurisdiction",
                "organization",
            ),
            "specificRecordsType": ("subject", "specificRecordsType"),
            "topicalSubject": ("subject", "topicalSubject"),
        }[term.kind]
        record["linkCounts"] = self.links.counts(term.na_id, roles)
        if term.kind == "geographicPlaceName":
            # Organizations cite places as jurisdictions; those links are not descriptions.
            governed = sum(1 for o in self.orgs if term.na_id in o.jurisdictions)
            record["linkCounts"]["jurisdiction"] = governed
            record["linkCounts"]["organization"] = governed
            record["coordinates"] = term.extra["coordinates"]
            if "town" in term.extra:
                record["useFor"] = [f"{term.extra['town']} Township"]
        else:
            record["useFor"] = [term.label] if term.label != term.heading.lower() else []
            if not record["useFor"]:
                del record["useFor"]
        record["recordSource"] = "NARA" if term.kind != "topicalSubject" else "LCSH"
        record["importRecordControlNumber"] = f"sh {term.na_id % 10**8:08d}"
        return record

    # ---- whole data set ------------------------------------------------------------------

    def build(self) -> None:
        rng = self.rng
        target = self.target
        n_rg = 1 + target // 5000
        n_coll = 1 + target // 8000
        n_authorities = max(21, round(target * 0.08))
        wanted = {
            "organization": max(4, round(n_authorities * 0.25)),
            "person": max(4 + n_coll, round(n_authorities * 0.25)),
            "geographicPlaceName": max(4, round(n_authorities * 0.18)),
            "specificRecordsType": max(3, round(n_authorities * 0.12)),
            "topicalSubject": max(6, round(n_authorities * 0.20)),
        }
        self.make_geography(wanted["geographicPlaceName"])
        self.make_records_types(wanted["specificRecordsType"])
        self.make_topics(wanted["topicalSubject"])
        self.make_people(wanted["person"])
        self.make_orgs(wanted["organization"])
        self.link_people()
        self.make_tops(n_rg, n_coll)
        n_auth = len(self.geo) + len(self.records_types) + len(self.topics)
        n_auth += len(self.people) + len(self.orgs)
        n_series = max(2 * len(self.tops), round(target * 0.05))
        rest = max(2, target - n_auth - len(self.tops) - n_series)
        n_items = max(1, round(rest * 0.32))
        n_file_units = max(1, rest - n_items)

        all_series = self.make_series(n_series)
        weights = [rng.paretovariate(1.3) for _ in all_series]
        records_by_top: dict[int, list[tuple[dict[str, Any], Any]]] = {
            top.na_id: [] for top in self.tops
        }
        for series in rng.choices(all_series, weights, k=n_file_units):
            records_by_top[series.top.na_id].append((self.make_file_unit(series), None))
        with_units = [s for s in all_series if s.file_units]
        item_counts: Counter[int] = Counter()
        for series in rng.choices(all_series, weights, k=n_items):
            file_unit = None
            # Most items sit in a file unit; some hang directly under the series.
            if rng.random() < 0.7 and (series.file_units or with_units):
                host = series if series.file_units else rng.choice(with_units)
                series = host
                file_unit = rng.choice(host.file_units)
                item_counts[file_unit["naId"]] += 1
            item, transcription = self.make_item(series, file_unit)
            records_by_top[series.top.na_id].append((item, transcription))

        for series in all_series:
            if series.file_units and rng.random() < 0.7:
                series.record["fileUnitCount"] = len(series.file_units)
            if series.items and rng.random() < 0.5:
                series.record["itemCount"] = series.items
            for file_unit in series.file_units:
                if item_counts[file_unit["naId"]] and rng.random() < 0.5:
                    file_unit["itemCount"] = item_counts[file_unit["naId"]]
            records_by_top[series.top.na_id].append((series.record, None))
        for top in self.tops:
            top.record["seriesCount"] = len(top.series)
            entries = [(top.record, None), *records_by_top[top.na_id]]
            # Shards interleave levels, as in the real export.
            rng.shuffle(entries)
            top.lines = [_line(record, transcription) for record, transcription in entries]
            for record, _ in entries:
                self.counts[record["levelOfDescription"]] += 1

    def authority_lines(self) -> dict[str, list[str]]:
        lines: dict[str, list[str]] = {kind: [] for kind in AUTHORITY_FOLDERS}
        for org in self.orgs:
            lines["organization"].append(_line(self.org_record(org)))
        for person in self.people:
            lines["person"].append(_line(self.person_record(person)))
        for term in (*self.geo, *self.records_types, *self.topics):
            lines[term.kind].append(_line(self.term_record(term)))
        for kind, extra in self.real_authority_lines.items():
            lines[kind].extend(extra)
        for kind, kind_lines in lines.items():
            self.counts[kind] += len(kind_lines)
        return lines

    # ---- authorities for creators found in real data -------------------------------------

    def add_real_creators(self, export_dir: Path) -> None:
        """Authority records for the `creators[]` naIds of a real export, so a graph built from
        generated plus real records is connected. Headings come from the references; the text
        is neutral and says it is synthetic (it must not invent facts about real bodies)."""
        creators: dict[int, tuple[Reference, dict[str, Any]]] = {}
        counts: Counter[int] = Counter()
        for parsed in _iter_parsed(export_dir):
            stub_props = {s.na_id: s.properties for s in parsed.stubs}
            references = list(parsed.references)
            for stub in parsed.stubs:
                references.extend(stub.references)
            for reference in references:
                if reference.rel != "creator" or reference.authority_type is None:
                    continue
                counts[reference.na_id] += 1
                creators.setdefault(
                    reference.na_id, (reference, stub_props.get(reference.na_id, {}))
                )
        people: list[str] = []
        groups: dict[str, list[tuple[Reference, dict[str, Any]]]] = {}
        for na_id in sorted(creators):
            reference, props = creators[na_id]
            if reference.authority_type == "person":
                people.append(_line(self.real_person(reference, props, counts[na_id])))
            elif reference.authority_type == "organization":
                groups.setdefault(_org_group_key(reference.heading or str(na_id)), []).append(
                    (reference, props)
                )
        organizations = [
            _line(self.real_organization(key, members, counts)) for key, members in groups.items()
        ]
        self.real_authority_lines = {"person": people, "organization": organizations}

    def real_person(
        self, reference: Reference, props: dict[str, Any], count: int
    ) -> dict[str, Any]:
        heading = reference.heading or f"Person {reference.na_id}"
        name = re.sub(r",\s*[\d-]+\s*$", "", heading)
        record: dict[str, Any] = {
            "naId": reference.na_id,
            "heading": heading,
            "authorityType": "person",
            "recordType": "authority",
            "name": name,
            "biographicalNote": (
                f"{name} is named in the catalog as the creator of archival records "
                f"described here.\n\nThis authority record was generated for demonstration; "
                f"its text is synthetic and gives no biographical facts."
            ),
            "linkCounts": {"totalDescription": count, "creator": count},
            "role": {"creator": True, "contributor": False, "donor": False, "reference": False},
        }
        for key in ("birthDate", "deathDate"):
            logical = props.get(f"logicalDate_{key}")
            if isinstance(logical, str) and len(logical) >= 4 and logical[:4].isdigit():
                record[key] = _date(int(logical[:4]), end=key == "deathDate")
        return record

    def real_organization(
        self, key: str, members: list[tuple[Reference, dict[str, Any]]], counts: Counter[int]
    ) -> dict[str, Any]:
        """One organization whose `organizationNames[]` holds every referenced name; its own
        naId is new, as in the real data where creators cite the nested names."""
        names = []
        for reference, props in members:
            entry: dict[str, Any] = {
                "naId": reference.na_id,
                "name": key.split(". ")[-1],
                "heading": reference.heading or key,
            }
            for prop, field_name in (
                ("logicalDate_establishDate", "establishDate"),
                ("logicalDate_abolishDate", "abolishDate"),
            ):
                logical = props.get(prop)
                if isinstance(logical, str) and logical[:4].isdigit():
                    year, month, day = (int(p) for p in logical.split("-")[:3])
                    entry[field_name] = _date(year, month, day)
            names.append(entry)
        names.sort(key=lambda e: (e.get("establishDate", {}).get("logicalDate", ""), e["naId"]))
        total = sum(counts[reference.na_id] for reference, _ in members)
        record: dict[str, Any] = {
            "naId": self.authority_id(),
            "heading": names[-1]["heading"],
            "authorityType": "organization",
            "recordType": "authority",
            "name": key.split(". ")[-1],
            "administrativeHistoryNote": (
                f"The {key} is named in the catalog as the creator of archival records "
                f"described here, under {len(names)} name(s) used over time.\n\nThis authority "
                f"record was generated for demonstration; its text is synthetic and gives no "
                f"historical facts."
            ),
            "organizationNames": names,
            "linkCounts": {"totalDescription": total, "creator": total},
        }
        if self.geo:
            record["jurisdictions"] = [{"naId": self.geo[0].na_id, "name": self.geo[0].heading}]
        return record

    # ---- questions -----------------------------------------------------------------------

    def questions(self) -> list[dict[str, Any]]:
        rng = self.rng
        by_kind: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        for kind, na_id, details in self.anchors:
            by_kind.setdefault(kind, []).append((na_id, details))
        chosen: list[tuple[str, list[int]]] = []

        def pick(kind: str, count: int) -> list[tuple[int, dict[str, Any]]]:
            pool = by_kind.get(kind, [])
            return rng.sample(pool, min(count, len(pool)))

        # Series: a topic at a place; only combinations no other series shares.
        series_pairs = Counter((d["topic"], d["town"]) for _, d in by_kind.get("series", []))
        unique_series = [
            (na_id, d)
            for na_id, d in by_kind.get("series", [])
            if series_pairs[(d["topic"], d["town"])] == 1
        ]
        for na_id, d in rng.sample(unique_series, min(5, len(unique_series))):
            chosen.append(
                (
                    f"Which series documents {d['topic'].lower()} in {d['town']}?",
                    [na_id],
                )
            )
        # Title-only file units, findable by the words of their titles.
        unique_units = [
            (na_id, d)
            for na_id, d in by_kind.get("fileUnit", [])
            if self.title_counts[d["title"]] == 1
        ]
        for na_id, d in rng.sample(unique_units, min(4, len(unique_units))):
            title = d["title"]
            if title.startswith("Case File"):
                number, name = title.removeprefix("Case File ").split(": ", 1)
                last, first = name.split(", ", 1)
                text = f"Is there a case file number {number} for {first} {last}?"
            else:
                body, year = title.rsplit(", ", 1)
                board = body.removeprefix("Minutes of the ")
                text = f"Find the minutes of the {board} meetings held in {year}."
            chosen.append((text, [na_id]))
        unique_items = [
            (na_id, d) for na_id, d in by_kind.get("item", []) if self.title_counts[d["title"]] == 1
        ]
        for na_id, d in rng.sample(unique_items, min(3, len(unique_items))):
            chosen.append(
                (
                    f"Show me the {d['kind'].lower()} about {d['topic'].lower()} at {d['town']} "
                    f"from {d['date'] if d['kind'] != 'Letter' else 'the correspondence files'}.",
                    [na_id],
                )
            )
        main_orgs = [o for o in self.orgs if o.parent is None]
        field_offices = [o for o in self.orgs if o.parent is not None]
        for org in [*rng.sample(main_orgs, min(1, len(main_orgs))), *field_offices[:1]]:
            chosen.append((f"What was the {org.display} responsible for?", [org.na_id]))
        for person in rng.sample(self.people, min(2, len(self.people))):
            chosen.append(
                (
                    f"Who was {person.first} {person.last} and where did {person.pronoun} work?",
                    [person.na_id],
                )
            )
        for na_id, d in pick("collection", 1):
            chosen.append((f"What do the papers of {d['person']} contain?", [na_id]))
        for na_id, d in pick("recordGroup", 1):
            chosen.append((f"Which record group holds the records of the {d['org']}?", [na_id]))
        narrower_topics = [t for t in self.topics if t.broader and "--" not in t.heading]
        for term in rng.sample(narrower_topics, min(1, len(narrower_topics))):
            chosen.append((f"What does the subject heading {term.heading} cover?", [term.na_id]))
        for term in rng.sample(self.towns, min(1, len(self.towns))):
            chosen.append(
                (f"Where is {term.extra['town']}, and what records concern it?", [term.na_id])
            )
        questions = [
            {"id": f"q{index:02d}", "question": text, "expected_naids": ids, "mode": "local"}
            for index, (text, ids) in enumerate(chosen, start=1)
        ]
        for text in (
            "What are the main themes of the records in this archive?",
            "Which government activities and regions are documented most often across the "
            "record groups and collections?",
            "How did federal programs described in these records change over the decades?",
        ):
            questions.append(
                {
                    "id": f"q{len(questions) + 1:02d}",
                    "question": text,
                    "expected_naids": [],
                    "mode": "global",
                }
            )
        return questions


# --------------------------------------------------------------------------------------------
# Module-level helpers and the entry point
# --------------------------------------------------------------------------------------------

_DATE_SEGMENT: Final = re.compile(r"^[\d/\s\-\u2013()ca.]+$")


def _org_group_key(heading: str) -> str:
    """The name an organization keeps across renames and transfers: the heading without its
    dates and without its top (department) segment, e.g. both "Department A. War Board.
    1944-1946" and "Office B. War Board. 1942-1944" give "War Board"."""
    segments = [s.strip() for s in re.split(r"\.\s+", heading.strip().rstrip("."))]
    segments = [
        s for s in segments if s and not (_DATE_SEGMENT.match(s) and any(c.isdigit() for c in s))
    ]
    if len(segments) > 1:
        segments = segments[1:]
    return ". ".join(segments) or heading


def _line(record: dict[str, Any], transcription: Any = None) -> str:
    payload: dict[str, Any] = {"record": record}
    if transcription:
        payload["record_transcription"] = transcription
    return json.dumps(payload, ensure_ascii=False)


def _iter_parsed(export_dir: Path) -> Iterator[ParsedRecord]:
    suffixes = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".zip")
    paths = sorted(
        p for p in export_dir.rglob("*") if p.is_file() and p.name.lower().endswith(suffixes)
    )
    for path in paths:
        for result in iter_file(path):
            if isinstance(result, ParsedRecord):
                yield result


def _shards(lines: list[str], size: int) -> Iterator[tuple[int, list[str]]]:
    for index, start in enumerate(range(0, len(lines), size), start=1):
        yield index, lines[start : start + size]


def _write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for line in lines:
            handle.write(line)
            handle.write("\n")


def _remove_stale(out_dir: Path, keep: set[Path]) -> None:
    """Delete shards a previous run wrote that this run did not, only under a marked dir."""
    if not (out_dir / MARKER_FILE).is_file():
        return
    roots = [out_dir / "descriptions", out_dir / "authority-records"]
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.jsonl")):
            if path not in keep:
                path.unlink()


def generate_demo_data(
    out_dir: Path,
    *,
    records: int = 400,
    seed: int = 7,
    real_export_dir: Path | None = None,
    shard_lines: int = SHARD_LINES,
) -> DemoDataSummary:
    """Write a synthetic export of about `records` records (all ten types) under `out_dir`.

    Same arguments, same bytes. With `real_export_dir`, also writes authority records for the
    creators that the real records there reference.
    """
    if records < MIN_RECORDS:
        raise ValueError(f"records must be at least {MIN_RECORDS}, got {records}")
    if shard_lines < 1:
        raise ValueError(f"shard_lines must be at least 1, got {shard_lines}")
    builder = _Builder(records, seed)
    builder.build()
    if real_export_dir is not None and real_export_dir.is_dir():
        builder.add_real_creators(real_export_dir)

    planned: list[tuple[Path, list[str]]] = []
    for top in builder.tops:
        group = "record-groups" if top.level == "recordGroup" else "collections"
        for index, shard in _shards(top.lines, shard_lines):
            planned.append(
                (
                    out_dir / "descriptions" / group / top.folder / f"{top.folder}-{index}.jsonl",
                    shard,
                )
            )
    for kind, lines in builder.authority_lines().items():
        folder = AUTHORITY_FOLDERS[kind]
        for index, shard in _shards(lines, shard_lines):
            planned.append(
                (out_dir / "authority-records" / folder / f"{folder}-{index}.jsonl", shard)
            )

    out_dir.mkdir(parents=True, exist_ok=True)
    _remove_stale(out_dir, {path for path, _ in planned})
    (out_dir / MARKER_FILE).write_text(
        json.dumps({"generator": "nara_kg.demo_data", "records": records, "seed": seed}) + "\n",
        encoding="utf-8",
    )
    for path, lines in planned:
        _write(path, lines)
    questions_path = out_dir / QUESTIONS_FILE
    _write(questions_path, [json.dumps(q, ensure_ascii=False) for q in builder.questions()])
    return DemoDataSummary(
        files=sorted(path for path, _ in planned),
        records_by_type={
            kind: builder.counts[kind] for kind in _RECORD_TYPE_ORDER if builder.counts[kind]
        },
        questions_path=questions_path,
    )


_RECORD_TYPE_ORDER: Final = (
    "item",
    "fileUnit",
    "series",
    "recordGroup",
    "collection",
    "person",
    "organization",
    "geographicPlaceName",
    "specificRecordsType",
    "topicalSubject",
)
