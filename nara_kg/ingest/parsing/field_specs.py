"""Where a field of the tables (:mod:`nara_kg.ingest.parsing.fields`) is read from
(:func:`spec_for`), and the key sets that say which JSON shapes are valid."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from nara_kg.model.schema import Prop

FieldKind = Literal["value", "int", "naid", "bool", "date"]


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """Where one flattened property is read from.

    `path` walks keys from the record; lists met on the way are flattened, and a key written
    `a|b` reads whichever of the two spellings an object has. `fallback` is tried when `path`
    gives nothing.
    """

    path: tuple[str, ...]
    many: bool
    kind: FieldKind = "value"
    fallback: tuple[str, ...] | None = None


#: Containers that are lists of objects (or of dates) in the JSON.
LIST_CONTAINERS: Final[frozenset[str]] = frozenset(
    {
        "creators",
        "contributors",
        "subjects",
        "donors",
        "digitalObjects",
        "physicalOccurrences",
        "variantControlNumbers",
        "microformPublications",
        "onlineResources",
        "findingAids",
        "productionDates",
        "referenceUnits",
        "broaderTerms",
        "narrowerTerms",
        "relatedTerms",
        "jurisdictions",
        "organizationNames",
        "personalReferences",
        "organizationalReferences",
        "variantPersonNames",
    }
)
#: Top-level lists of strings observed (or documented by two sources) in the real data.
STRICT_SCALAR_LISTS: Final[frozenset[str]] = frozenset(
    {
        "accessionNumbers",
        "generalNotes",
        "generalRecordsTypes",
        "internalTransferNumbers",
        "languages",
        "otherTitles",
        "recordsCenterTransferNumbers",
        "dispositionAuthorityNumbers",
    }
)
#: Authority lists nobody has quoted a real value of: a lone string is accepted as a list of one
#: instead of rejecting the record.
LENIENT_SCALAR_LISTS: Final[frozenset[str]] = frozenset(
    {"sourceNotes", "useFor", "programAreas", "variantOrganizationNames"}
)
#: Leaves that are lists inside an object.
LIST_LEAVES: Final[frozenset[str]] = frozenset(
    {"specificUseRestrictions", "contributorTypes", "creatorTypes"}
)
#: Keys whose value must be a list; anything else rejects the record, naming the key.
STRICT_LISTS: Final[frozenset[str]] = LIST_CONTAINERS | STRICT_SCALAR_LISTS | {"ancestors"}
#: Keys whose value must be an object.
STRICT_OBJECTS: Final[frozenset[str]] = frozenset(
    {"accessRestriction", "useRestriction", "dataControlGroup", "linkCounts", "role"}
)
#: Date objects; a bare string is accepted as the logicalDate.
DATE_OBJECTS: Final[frozenset[str]] = frozenset(
    {
        "coverageStartDate",
        "coverageEndDate",
        "inclusiveStartDate",
        "inclusiveEndDate",
        "birthDate",
        "deathDate",
        "establishDate",
        "abolishDate",
    }
)
INT_FIELDS: Final[frozenset[str]] = frozenset(
    {"itemCount", "fileUnitCount", "seriesCount", "recordGroupNumber"}
)
BOOL_FIELDS: Final[frozenset[str]] = frozenset({"audiovisual"})
#: The dates a file unit's or item's title states (parse._title_date_properties).
TITLE_DATE_FIELDS: Final[tuple[str, ...]] = (Prop.TITLE_START_DATE, Prop.TITLE_END_DATE)
#: Computed rather than read: `ancestors` is ordered by distance, `source` is the catalog URL.
COMPUTED_FIELDS: Final[frozenset[str]] = frozenset({"ancestors", "source", *TITLE_DATE_FIELDS})


def spec_for(name: str) -> FieldSpec:
    """Where a seed-table field is read from: `<leaf>_<container>` or a top-level key."""
    if "_" in name:
        # `<leaf>_<container>`: no leaf of the seed table contains an underscore.
        leaf, container = name.split("_", 1)
        if leaf == "findingAidtype":
            leaf = "findingAidType|findingAidtype"
        many = container in LIST_CONTAINERS or leaf in LIST_LEAVES
        kind: FieldKind = "value"
        if leaf == "naId":
            kind = "naid"
        elif leaf == "logicalDate":
            kind = "date"
        elif container == "linkCounts":
            kind = "int"
        # recordGroup and collection records may keep their reference units at top level.
        fallback = None
        if container == "referenceUnits":
            fallback = ("physicalOccurrences", container, leaf)
        return FieldSpec((container, leaf), many, kind, fallback)
    if name == "naId":
        return FieldSpec((name,), False, "naid")
    if name in INT_FIELDS:
        return FieldSpec((name,), False, "int")
    if name in BOOL_FIELDS:
        return FieldSpec((name,), False, "bool")
    many = name in STRICT_SCALAR_LISTS or name in LENIENT_SCALAR_LISTS
    return FieldSpec((name,), many)


def spec_table(*names: str) -> dict[str, FieldSpec]:
    """Each named field with where it is read from (:func:`spec_for`)."""
    return {name: spec_for(name) for name in names}
