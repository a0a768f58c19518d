"""NARA Catalog JSON lines -> typed, flattened records (pure functions, no I/O at import time).

Where fields live in the real JSON is documented in `shared/data/nara/STRUCTURE.md`; the node
properties per record type follow seed 000's table ("Перечень атрибутов"), encoded below as one
dict constant per type. Decisions that the seed and the data leave open:

* Seed typos are fixed consistently: `url_online_resources` is `url_onlineResources`; the table
  row `specificRecordsTypes` is the type `specificRecordsType`; `findingAidtype_findingAids`
  reads `findingAidType` or `findingAidtype` (both spellings exist in secondary sources).
* Every description type also gets the creators fields, `ancestors` (nearest first) and
  `source`; a recordGroup or collection reads `referenceUnits[]` at top level and falls back to
  `physicalOccurrences[].referenceUnits[]`.
* A missing value is absent from the properties dict: never None, never "N/A", never an empty
  list. Lists keep only present values, so parallel lists need not line up.
* A reference entry's authority type is its own `authorityType` when that is one of the five
  authority types; otherwise the list implies it: `jurisdictions` -> geographicPlaceName (the
  geographicPlaceName row of the seed table is the only one with `jurisdiction_linkCounts`, so
  jurisdictions point at places), `organizationNames`/`organizationalReferences` ->
  organization, `personalReferences` -> person, `broaderTerms`/`narrowerTerms`/`relatedTerms` ->
  the holder's own type. Creators, contributors, subjects and donors without a usable
  `authorityType` keep `authority_type=None` and get no stub (the type cannot be guessed).
* `organizationNames[]` entries are the names an organization has had, each with its own naId;
  they are aliases of the organization, not separate authorities. They produce `Reference`s
  (rel `organizationName`, entries naming the record's own naId excluded) and
  `org_name_aliases`, but no stubs: a stub under an alias naId would capture the creator
  relationships that must resolve to the organization itself.
"""

from __future__ import annotations

import gzip
import io
import json
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final, Literal

from nara_kg.model import schema
from nara_kg.model.schema import RecordKind

RAW_LIMIT: Final = 2_000
_MAX_NA_ID: Final = 2**63 - 1  # Neo4j integers are signed 64-bit

NO_RECORD_REASON: Final = (
    "no record object (expected {'record': ...} or {'_source': {'record': ...}})"
)

#: The leading words of every `Rejected.reason`, for counting rejects by kind.
REJECT_CATEGORIES: Final[tuple[str, ...]] = (
    "malformed JSON",
    "no record object",
    "missing naId",
    "unknown type",
    "wrong type",
    "invalid UTF-8",
    "empty file",
    "truncated gzip stream",
    "corrupt gzip stream",
    "truncated zip archive",
    "corrupt zip member",
    "unreadable file",
    "parser error",
)


def reject_category(reason: str) -> str:
    """The category of a reject reason (one of REJECT_CATEGORIES, else the text before ':')."""
    for category in REJECT_CATEGORIES:
        if reason.startswith(category):
            return category
    return reason.split(":", 1)[0]


# --------------------------------------------------------------------------------------------
# Public data types
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reference:
    """One entry of a reference list (`schema.REFERENCE_LISTS`) that carries a naId."""

    rel: str
    na_id: int
    heading: str | None
    authority_type: str | None


@dataclass(frozen=True, slots=True)
class StubRecord:
    """A node known only from a reference or an `ancestors[]` entry."""

    na_id: int
    node_type: str
    properties: dict[str, Any]
    title: str | None
    parent_na_id: int | None
    #: References the stub's own data holds (the creators of an ancestor series), so the
    #: graph can link them even when the ancestor's full record is not in the input.
    references: tuple[Reference, ...] = ()


@dataclass(frozen=True, slots=True)
class ParsedRecord:
    na_id: int
    node_type: str
    record_kind: str
    properties: dict[str, Any]
    body_text: str | None
    title: str | None
    parent_na_id: int | None
    parent_title: str | None
    date_range: str | None
    references: tuple[Reference, ...]
    stubs: tuple[StubRecord, ...]
    org_name_aliases: tuple[int, ...]
    completeness: int
    #: Where the line came from, as passed to parse_line (iter_file: member-qualified name,
    #: 1-based physical line number, blank lines counted).
    file_name: str = ""
    line_num: int = 0


@dataclass(frozen=True, slots=True)
class Rejected:
    file_name: str
    line_num: int
    reason: str
    raw: str


# --------------------------------------------------------------------------------------------
# Field tables (seed 000, "Перечень атрибутов")
# --------------------------------------------------------------------------------------------

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
#: Computed rather than read: `ancestors` is ordered by distance, `source` is the catalog URL.
COMPUTED_FIELDS: Final[frozenset[str]] = frozenset({"ancestors", "source"})

CREATOR_FIELDS: Final[tuple[str, ...]] = (
    "authorityType_creators",
    "creatorType_creators",
    "heading_creators",
    "naId_creators",
)
_REFERENCE_UNIT_FIELDS: Final[tuple[str, ...]] = (
    "address1_referenceUnits",
    "address2_referenceUnits",
    "city_referenceUnits",
    "email_referenceUnits",
    "fax_referenceUnits",
    "mailCode_referenceUnits",
    "name_referenceUnits",
    "phone_referenceUnits",
    "postalCode_referenceUnits",
    "state_referenceUnits",
)


def _spec_for(name: str) -> FieldSpec:
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


def _fields(*names: str) -> dict[str, FieldSpec]:
    return {name: _spec_for(name) for name in names}


_DESCRIPTION_COMMON: Final[tuple[str, ...]] = (
    "naId",
    "title",
    "recordType",
    "levelOfDescription",
    "ancestors",
    "source",
    *CREATOR_FIELDS,
)
_AUTHORITY_COMMON: Final[tuple[str, ...]] = (
    "naId",
    "heading",
    "recordType",
    "authorityType",
    "source",
)

ITEM_FIELDS: Final[dict[str, FieldSpec]] = _fields(
    *_DESCRIPTION_COMMON,
    "accessionNumbers",
    "description_accessRestriction",
    "note_accessRestriction",
    "status_accessRestriction",
    "audiovisual",
    "beginCongress",
    "authorityType_contributors",
    "contributorType_contributors",
    "heading_contributors",
    "naId_contributors",
    "logicalDate_coverageEndDate",
    "logicalDate_coverageStartDate",
    "custodialHistoryNote",
    "groupName_dataControlGroup",
    "dateNote",
    "objectDescription_digitalObjects",
    "objectType_digitalObjects",
    "objectUrl_digitalObjects",
    "endCongress",
    "generalNotes",
    "generalRecordsTypes",
    "internalTransferNumbers",
    "languages",
    "localIdentifier",
    "identifier_microformPublications",
    "note_microformPublications",
    "title_microformPublications",
    "description_onlineResources",
    "note_onlineResources",
    "url_onlineResources",
    "otherTitles",
    "partyDesignation",
    "logicalDate_productionDates",
    "recordsCenterTransferNumbers",
    "scaleNote",
    "scopeAndContentNote",
    "authorityType_subjects",
    "heading_subjects",
    "naId_subjects",
    "subtitle",
    "transferNote",
    "note_useRestriction",
    "specificUseRestrictions_useRestriction",
    "status_useRestriction",
    "note_variantControlNumbers",
    "number_variantControlNumbers",
    "type_variantControlNumbers",
    "copyStatus_physicalOccurrences",
    "extent_physicalOccurrences",
    "physicalOccurrenceNote_physicalOccurrences",
)

FILE_UNIT_FIELDS: Final[dict[str, FieldSpec]] = _fields(
    *_DESCRIPTION_COMMON,
    "accessionNumbers",
    "description_accessRestriction",
    "note_accessRestriction",
    "status_accessRestriction",
    "arrangement",
    "audiovisual",
    "beginCongress",
    "authorityType_contributors",
    "contributorType_contributors",
    "heading_contributors",
    "naId_contributors",
    "logicalDate_coverageEndDate",
    "logicalDate_coverageStartDate",
    "custodialHistoryNote",
    "groupName_dataControlGroup",
    "dateNote",
    "objectDescription_digitalObjects",
    "objectType_digitalObjects",
    "objectUrl_digitalObjects",
    "editStatus",
    "fileFormat_findingAids",
    "findingAidtype_findingAids",
    "note_findingAids",
    "source_findingAids",
    "url_findingAids",
    "urlNote_findingAids",
    "urlDescription_findingAids",
    "endCongress",
    "generalNotes",
    "generalRecordsTypes",
    "internalTransferNumbers",
    "itemCount",
    "languages",
    "localIdentifier",
    "identifier_microformPublications",
    "note_microformPublications",
    "title_microformPublications",
    "description_onlineResources",
    "note_onlineResources",
    "url_onlineResources",  # seed: url_online_resources
    "otherTitles",
    "partyDesignation",
    "copyStatus_physicalOccurrences",
    "extent_physicalOccurrences",
    "physicalOccurrenceNote_physicalOccurrences",
    "recordsCenterTransferNumbers",
    "scaleNote",
    "scopeAndContentNote",
    "soundType",
    "authorityType_subjects",
    "heading_subjects",
    "naId_subjects",
    "subtitle",
    "transferNote",
    "note_useRestriction",
    "specificUseRestrictions_useRestriction",
    "status_useRestriction",
    "note_variantControlNumbers",
    "number_variantControlNumbers",
    "type_variantControlNumbers",
)

SERIES_FIELDS: Final[dict[str, FieldSpec]] = _fields(
    *_DESCRIPTION_COMMON,
    "accessionNumbers",
    "description_accessRestriction",
    "note_accessRestriction",
    "status_accessRestriction",
    "arrangement",
    "audiovisual",
    "beginCongress",
    "authorityType_contributors",
    "contributorType_contributors",
    "heading_contributors",
    "naId_contributors",
    "logicalDate_coverageEndDate",
    "logicalDate_coverageStartDate",
    "custodialHistoryNote",
    "groupName_dataControlGroup",
    "dateNote",
    "dispositionAuthorityNumbers",
    "editStatus",
    "endCongress",
    "fileUnitCount",
    "fileFormat_findingAids",
    "findingAidtype_findingAids",
    "note_findingAids",
    "source_findingAids",
    "url_findingAids",
    "urlNote_findingAids",
    "functionAndUse",
    "generalNotes",
    "generalRecordsTypes",
    "logicalDate_inclusiveEndDate",
    "logicalDate_inclusiveStartDate",
    "internalTransferNumbers",
    "itemCount",
    "languages",
    "localIdentifier",
    "identifier_microformPublications",
    "note_microformPublications",
    "title_microformPublications",
    "numberingNote",
    "note_onlineResources",
    "url_onlineResources",
    "otherTitles",
    "partyDesignation",
    "copyStatus_physicalOccurrences",
    "extent_physicalOccurrences",
    "physicalOccurrenceNote_physicalOccurrences",
    "recordsCenterTransferNumbers",
    "scaleNote",
    "soundType",
    "authorityType_subjects",
    "heading_subjects",
    "naId_subjects",
    "transferNote",
    "note_useRestriction",
    "specificUseRestrictions_useRestriction",
    "status_useRestriction",
    "note_variantControlNumbers",
    "number_variantControlNumbers",
    "type_variantControlNumbers",
)

RECORD_GROUP_FIELDS: Final[dict[str, FieldSpec]] = _fields(
    *_DESCRIPTION_COMMON,
    "beginCongress",
    "logicalDate_coverageEndDate",
    "logicalDate_coverageStartDate",
    "groupName_dataControlGroup",
    "dateNote",
    "endCongress",
    "fileFormat_findingAids",
    "findingAidtype_findingAids",
    "note_findingAids",
    "source_findingAids",
    "url_findingAids",
    "urlNote_findingAids",
    "logicalDate_inclusiveEndDate",
    "logicalDate_inclusiveStartDate",
    "partyDesignation",
    "recordGroupNumber",
    *_REFERENCE_UNIT_FIELDS,
    "seriesCount",
)

COLLECTION_FIELDS: Final[dict[str, FieldSpec]] = _fields(
    *_DESCRIPTION_COMMON,
    "collectionIdentifier",
    "logicalDate_coverageEndDate",
    "logicalDate_coverageStartDate",
    "groupName_dataControlGroup",
    "dateNote",
    "authorityType_donors",
    "heading_donors",
    "naId_donors",
    "fileFormat_findingAids",
    "findingAidtype_findingAids",
    "note_findingAids",
    "source_findingAids",
    "url_findingAids",
    "urlNote_findingAids",
    "logicalDate_inclusiveEndDate",
    "logicalDate_inclusiveStartDate",
    *_REFERENCE_UNIT_FIELDS,
    "seriesCount",
    "note_variantControlNumbers",
    "number_variantControlNumbers",
    "type_variantControlNumbers",
)

GEOGRAPHIC_PLACE_NAME_FIELDS: Final[dict[str, FieldSpec]] = _fields(
    *_AUTHORITY_COMMON,
    "description_broaderTerms",
    "naId_broaderTerms",
    "heading_broaderTerms",
    "coordinates",
    "importRecordControlNumber",
    "geographicPlaceName_linkCounts",
    "jurisdiction_linkCounts",
    "organization_linkCounts",
    "subject_linkCounts",
    "totalDescription_linkCounts",
    "naId_narrowerTerms",
    "heading_narrowerTerms",
    "naId_relatedTerms",
    "heading_relatedTerms",
    "recordSource",
    "scopeNote",
    "sourceNotes",
    "useFor",
)

ORGANIZATION_FIELDS: Final[dict[str, FieldSpec]] = _fields(
    *_AUTHORITY_COMMON,
    "administrativeHistoryNote",
    "naId_jurisdictions",
    "name_jurisdictions",
    "contributor_linkCounts",
    "creator_linkCounts",
    "donor_linkCounts",
    "subject_linkCounts",
    "totalDescription_linkCounts",
    "contributorTypes_organizationNames",
    "creatorTypes_organizationNames",
    "heading_organizationNames",
    "naId_organizationNames",
    "name_organizationNames",
    "recordSource_organizationNames",
    "variantOrganizationNames",
    "authorityType_personalReferences",
    "heading_personalReferences",
    "naId_personalReferences",
    "programAreas",
    "sourceNotes",
)

PERSON_FIELDS: Final[dict[str, FieldSpec]] = _fields(
    *_AUTHORITY_COMMON,
    "biographicalNote",
    "logicalDate_birthDate",
    "logicalDate_deathDate",
    "fullerFormOfName",
    "importRecordControlNumber",
    "contributor_linkCounts",
    "creator_linkCounts",
    "donor_linkCounts",
    "subject_linkCounts",
    "totalDescription_linkCounts",
    "name",
    "numerator",
    "authorityType_organizationalReferences",
    "heading_organizationalReferences",
    "naId_organizationalReferences",
    "personalTitle",
    "recordSource",
    "contributor_role",
    "creator_role",
    "donor_role",
    "reference_role",
    "sourceNotes",
    "fullerFormOfName_variantPersonNames",
    "heading_variantPersonNames",
    "name_variantPersonNames",
    "numerator_variantPersonNames",
    "personalTitle_variantPersonNames",
)

# The seed table names this row `specificRecordsTypes`; the type is `specificRecordsType`.
SPECIFIC_RECORDS_TYPE_FIELDS: Final[dict[str, FieldSpec]] = _fields(
    *_AUTHORITY_COMMON,
    "naId_broaderTerms",
    "name_broaderTerms",
    "importRecordControlNumber",
    "specificRecordsType_linkCounts",
    "subject_linkCounts",
    "totalDescription_linkCounts",
    "naId_narrowerTerms",
    "heading_narrowerTerms",
    "recordSource",
    "naId_relatedTerms",
    "heading_relatedTerms",
    "scopeNote",
    "sourceNotes",
    "useFor",
)

TOPICAL_SUBJECT_FIELDS: Final[dict[str, FieldSpec]] = _fields(
    *_AUTHORITY_COMMON,
    "naId_broaderTerms",
    "name_broaderTerms",
    "subject_linkCounts",
    "topicalSubject_linkCounts",
    "totalDescription_linkCounts",
    "naId_narrowerTerms",
    "heading_narrowerTerms",
    "naId_relatedTerms",
    "heading_relatedTerms",
    "recordSource",
    "scopeNote",
    "sourceNotes",
    "useFor",
)

FIELDS_BY_TYPE: Final[dict[str, dict[str, FieldSpec]]] = {
    "item": ITEM_FIELDS,
    "fileUnit": FILE_UNIT_FIELDS,
    "series": SERIES_FIELDS,
    "recordGroup": RECORD_GROUP_FIELDS,
    "collection": COLLECTION_FIELDS,
    "person": PERSON_FIELDS,
    "organization": ORGANIZATION_FIELDS,
    "geographicPlaceName": GEOGRAPHIC_PLACE_NAME_FIELDS,
    "specificRecordsType": SPECIFIC_RECORDS_TYPE_FIELDS,
    "topicalSubject": TOPICAL_SUBJECT_FIELDS,
}

#: The field holding each type's body text (items and fileUnits: see `_body_text`).
BODY_TEXT_FIELD: Final[dict[str, str]] = {
    "series": "scopeAndContentNote",
    "recordGroup": "scopeAndContentNote",
    "collection": "scopeAndContentNote",
    "geographicPlaceName": "scopeNote",
    "specificRecordsType": "scopeNote",
    "topicalSubject": "scopeNote",
    "organization": "administrativeHistoryNote",
    "person": "biographicalNote",
}

#: Reference lists whose entries name the holder's own kind of term.
_TERM_LISTS: Final[frozenset[str]] = frozenset({"broaderTerms", "narrowerTerms", "relatedTerms"})
#: Reference lists that imply the referenced authority's type.
_IMPLIED_REFERENCE_TYPE: Final[dict[str, str]] = {
    "jurisdictions": "geographicPlaceName",
    "organizationNames": "organization",
    "organizationalReferences": "organization",
    "personalReferences": "person",
}


# --------------------------------------------------------------------------------------------
# Coercion helpers
# --------------------------------------------------------------------------------------------


class _Reject(Exception):
    """Internal: the record is bad; the message is the reject reason."""


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


def _as_int(value: Any) -> int | None:
    """An int from an int, an integral float (the export writes 1.0) or a digit string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        if text.isascii() and text.lstrip("-").isdigit():
            return int(text)
    return None


def _as_na_id(value: Any) -> int | None:
    number = _as_int(value)
    if number is None or number <= 0 or number > _MAX_NA_ID:
        return None
    return number


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "true":
            return True
        if text == "false":
            return False
    return None


def _text(value: Any) -> str | None:
    """A non-blank string, else None."""
    if isinstance(value, str) and value.strip():
        return value
    return None


def _scalar(value: Any) -> Any:
    """A Neo4j-storable scalar for one leaf value, or None when it holds nothing."""
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, dict):
        if not value:
            return None
        logical = value.get("logicalDate")
        if isinstance(logical, str) and logical.strip():
            return logical
        scalars = [v for v in value.values() if v is not None]
        if len(scalars) == 1 and isinstance(scalars[0], str | int | float):
            return _scalar(scalars[0])
        # An object where a value was expected: keep it readable rather than drop it.
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return None


def _walk(node: Any, path: Sequence[str]) -> Iterator[Any]:
    """Leaf values at `path`, flattening every list met (nested lists included)."""
    if node is None:
        return
    if isinstance(node, list):
        for element in node:
            yield from _walk(element, path)
        return
    if not path:
        yield node
        return
    if isinstance(node, dict):
        for key in path[0].split("|"):
            if node.get(key) is not None:
                yield from _walk(node[key], path[1:])
                return
    elif isinstance(node, str) and path == ("logicalDate",):
        yield node  # a date written as a bare string


def _homogeneous(values: list[Any]) -> list[Any]:
    """Neo4j lists hold one type: mixed lists become lists of strings."""
    kinds = {type(v) for v in values}
    if len(kinds) <= 1:
        return values
    return [v if isinstance(v, str) else json.dumps(v) for v in values]


def _extract(record: Mapping[str, Any], name: str, spec: FieldSpec) -> Any:
    raw = list(_walk(record, spec.path))
    if not raw and spec.fallback is not None:
        raw = list(_walk(record, spec.fallback))
    values: list[Any] = []
    for value in raw:
        if spec.kind == "naid":
            number = _as_na_id(value)
            if number is not None:
                values.append(number)
        elif spec.kind == "int":
            number = _as_int(value)
            if number is None:
                raise _Reject(f"wrong type: {name} is {_describe(value)}, expected integer")
            values.append(number)
        elif spec.kind == "bool":
            flag = _as_bool(value)
            if flag is None:
                raise _Reject(f"wrong type: {name} is {_describe(value)}, expected boolean")
            values.append(flag)
        else:
            scalar = _scalar(value)
            if scalar is not None:
                values.append(scalar)
    if not values:
        return None
    if spec.many or len(values) > 1:
        return _homogeneous(values)
    return values[0]


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _validate_shapes(record: Mapping[str, Any]) -> None:
    for key, value in record.items():
        if value is None:
            continue
        if key in STRICT_LISTS and not isinstance(value, list):
            raise _Reject(f"wrong type: {key} is {_describe(value)}, expected list")
        if key in STRICT_OBJECTS and not isinstance(value, dict):
            raise _Reject(f"wrong type: {key} is {_describe(value)}, expected object")
        if key in DATE_OBJECTS and not isinstance(value, dict | str):
            raise _Reject(f"wrong type: {key} is {_describe(value)}, expected date object")
    for key in ("title", "heading"):
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            raise _Reject(f"wrong type: {key} is {_describe(value)}, expected string")


def _record_type(record: Mapping[str, Any]) -> tuple[str, str]:
    """(record kind, node type), or _Reject."""
    kind = record.get("recordType")
    level = record.get("levelOfDescription")
    authority = record.get("authorityType")
    if kind is not None and kind not in (RecordKind.DESCRIPTION, RecordKind.AUTHORITY):
        raise _Reject(f"unknown type: recordType={kind!r}")
    if kind == RecordKind.AUTHORITY or (kind is None and level is None and authority is not None):
        if authority is None:
            raise _Reject("unknown type: authorityType is missing")
        if authority not in schema.AUTHORITY_TYPES:
            raise _Reject(f"unknown type: authorityType={authority!r}")
        return RecordKind.AUTHORITY.value, str(authority)
    if level is None:
        if kind is None:
            raise _Reject("unknown type: no levelOfDescription or authorityType")
        raise _Reject("unknown type: levelOfDescription is missing")
    if level not in schema.DESCRIPTION_TYPES:
        raise _Reject(f"unknown type: levelOfDescription={level!r}")
    return RecordKind.DESCRIPTION.value, str(level)


# --------------------------------------------------------------------------------------------
# Ancestors, references, stubs, dates, body text
# --------------------------------------------------------------------------------------------


def _sorted_ancestors(entries: Any) -> list[dict[str, Any]]:
    """Ancestor objects nearest first. The export lists them farthest first, but `distance` is
    what defines the order; without it on every entry, the export's order is reversed."""
    if not isinstance(entries, list):
        return []
    usable = [e for e in entries if isinstance(e, dict) and _as_na_id(e.get("naId")) is not None]
    distances = [_as_int(e.get("distance")) for e in usable]
    if usable and all(d is not None for d in distances):
        ordered = [e for _, e in sorted(zip(distances, range(len(usable)), strict=True))]
        result = [usable[i] for i in ordered]
    else:
        result = list(reversed(usable))
    seen: set[int] = set()
    unique = []
    for entry in result:
        na_id = _as_na_id(entry.get("naId"))
        if na_id is not None and na_id not in seen:
            seen.add(na_id)
            unique.append(entry)
    return unique


def _reference_type(list_key: str, entry: Mapping[str, Any], holder_type: str) -> str | None:
    given = entry.get("authorityType")
    if given in schema.AUTHORITY_TYPES:
        return str(given)
    if list_key in _TERM_LISTS:
        return holder_type if holder_type in schema.AUTHORITY_TYPES else None
    return _IMPLIED_REFERENCE_TYPE.get(list_key)


def _references(
    record: Mapping[str, Any], holder_na_id: int, holder_type: str
) -> list[tuple[Reference, Mapping[str, Any]]]:
    """Every reference entry with a usable naId, with the entry it came from."""
    found: list[tuple[Reference, Mapping[str, Any]]] = []
    seen: set[tuple[str, int]] = set()
    for list_key, rel in schema.REFERENCE_LISTS.items():
        entries = record.get(list_key)
        if not isinstance(entries, list):
            continue
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            na_id = _as_na_id(entry.get("naId"))
            if na_id is None or (rel.value, na_id) in seen:
                continue
            if list_key == "organizationNames" and na_id == holder_na_id:
                continue  # the organization's current name shares its naId: not a reference
            seen.add((rel.value, na_id))
            heading = _text(entry.get("heading")) or _text(entry.get("name"))
            reference = Reference(
                rel.value, na_id, heading, _reference_type(list_key, entry, holder_type)
            )
            found.append((reference, entry))
    return found


def _date_value(value: Any) -> str | None:
    if isinstance(value, dict):
        logical = value.get("logicalDate")
        return logical if isinstance(logical, str) and logical.strip() else None
    return value if isinstance(value, str) and value.strip() else None


def _authority_stub(reference: Reference, entry: Mapping[str, Any]) -> StubRecord | None:
    if reference.authority_type is None:
        return None
    props: dict[str, Any] = {
        "naId": reference.na_id,
        "recordType": RecordKind.AUTHORITY.value,
        "authorityType": reference.authority_type,
        "source": schema.source_url(reference.na_id),
    }
    if reference.heading is not None:
        props["heading"] = reference.heading
    name = _text(entry.get("name"))
    if name is not None and reference.authority_type == "person":
        props["name"] = name
    # Dates that creators carry about the authority (person: the table's names; organization:
    # its establish/abolish dates, which a full organization record keeps per name).
    for key in ("birthDate", "deathDate", "establishDate", "abolishDate"):
        logical = _date_value(entry.get(key))
        if logical is not None:
            props[f"logicalDate_{key}"] = logical
    return StubRecord(reference.na_id, reference.authority_type, props, reference.heading, None)


def _ancestor_stub(entry: Mapping[str, Any], farther: list[int]) -> StubRecord | None:
    na_id = _as_na_id(entry.get("naId"))
    level = entry.get("levelOfDescription")
    if na_id is None or level not in schema.DESCRIPTION_TYPES:
        return None
    props: dict[str, Any] = {
        "naId": na_id,
        "recordType": RecordKind.DESCRIPTION.value,
        "levelOfDescription": str(level),
        "source": schema.source_url(na_id),
    }
    title = _text(entry.get("title"))
    if title is not None:
        props["title"] = title
    for key in ("inclusiveStartDate", "inclusiveEndDate", "coverageStartDate", "coverageEndDate"):
        logical = _date_value(entry.get(key))
        if logical is not None:
            props[f"logicalDate_{key}"] = logical
    number = _as_int(entry.get("recordGroupNumber"))
    if number is not None:
        props["recordGroupNumber"] = number
    identifier = _scalar(entry.get("collectionIdentifier"))
    if identifier is not None:
        props["collectionIdentifier"] = identifier
    for name in CREATOR_FIELDS:
        value = _extract(entry, name, _spec_for(name))
        if value is not None:
            props[name] = value
    if farther:
        props["ancestors"] = list(farther)
    references = tuple(r for r, _ in _references(entry, na_id, str(level)) if r.rel == "creator")
    return StubRecord(
        na_id, str(level), props, title, farther[0] if farther else None, references=references
    )


def _format_date(value: Any) -> str | None:
    """Short text for one date object: full date, year-month, or year (with "ca.")."""
    if isinstance(value, str):
        return value.strip() or None
    if not isinstance(value, dict):
        return None
    year = _as_int(value.get("year"))
    month = _as_int(value.get("month"))
    day = _as_int(value.get("day"))
    if year is None:
        text = _date_value(value)
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
    return _date_value(value) or ""


def _date_objects(values: Any) -> list[Any]:
    if not isinstance(values, list):
        return []
    return [v for v in values if isinstance(v, dict | str) and _date_value(v)]


def _date_range(record: Mapping[str, Any], node_type: str) -> str | None:
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


def _joined(texts: Iterable[Any]) -> str:
    return "\n\n".join(t.strip() for t in texts if isinstance(t, str) and t.strip())


def _body_text(record: Mapping[str, Any], node_type: str, transcription: Any) -> str | None:
    if node_type in ("item", "fileUnit"):
        objects = record.get("digitalObjects") or []
        candidates = [
            _joined(o.get("extractedText") for o in objects if isinstance(o, dict)),
            (_text(record.get("scopeAndContentNote")) or "").strip(),
            _joined(t.get("contribution") for t in transcription or [] if isinstance(t, dict)),
        ]
        # Longest wins: OCR, a cataloguer's note and a volunteer transcription describe the
        # same pages, and the longest carries the most searchable text. Ties keep this order.
        best = max(candidates, key=len)
        return best or None
    field_name = BODY_TEXT_FIELD.get(node_type)
    if field_name is None:
        return None
    text = _text(record.get(field_name))
    return text.strip() if text else None


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


def _unwrap(obj: Any) -> tuple[Mapping[str, Any], Any]:
    """(record object, record_transcription) from any of the three line shapes."""
    if not isinstance(obj, dict):
        raise _Reject(NO_RECORD_REASON)
    if "record" in obj:
        record = obj["record"]
        if not isinstance(record, dict):
            raise _Reject(f"no record object: 'record' is {_describe(record)}, expected object")
        return record, obj.get("record_transcription")
    source = obj.get("_source")
    if isinstance(source, dict) and isinstance(source.get("record"), dict):
        return source["record"], source.get("record_transcription")
    if "naId" in obj and any(
        k in obj for k in ("recordType", "levelOfDescription", "authorityType")
    ):
        return obj, None  # a bare record object (Arke kept no wrapper)
    raise _Reject(NO_RECORD_REASON)


def parse_record(
    record: Mapping[str, Any],
    transcription: Any = None,
    *,
    file_name: str = "",
    line_num: int = 0,
) -> ParsedRecord:
    """Flatten one record object. Raises ValueError with the reject reason for a bad record."""
    try:
        return _parse_record(record, transcription, file_name, line_num)
    except _Reject as exc:
        raise ValueError(str(exc)) from None


def _parse_record(
    record: Mapping[str, Any], transcription: Any, file_name: str, line_num: int
) -> ParsedRecord:
    raw_id = record.get("naId")
    if raw_id is None:
        raise _Reject("missing naId")
    na_id = _as_na_id(raw_id)
    if na_id is None:
        raise _Reject(f"wrong type: naId is {_describe(raw_id)}, expected integer")
    kind, node_type = _record_type(record)
    _validate_shapes(record)
    if transcription is not None and not isinstance(transcription, list):
        raise _Reject(
            f"wrong type: record_transcription is {_describe(transcription)}, expected list"
        )

    properties: dict[str, Any] = {}
    for name, spec in FIELDS_BY_TYPE[node_type].items():
        if name in COMPUTED_FIELDS:
            continue
        value = _extract(record, name, spec)
        if value is not None:
            properties[name] = value
    properties["naId"] = na_id
    properties["recordType"] = kind
    properties["levelOfDescription" if kind == "description" else "authorityType"] = node_type
    properties["source"] = schema.source_url(na_id)

    stubs: dict[int, StubRecord] = {}
    parent_na_id: int | None = None
    parent_title: str | None = None
    if kind == RecordKind.DESCRIPTION:
        ancestors = [a for a in _sorted_ancestors(record.get("ancestors")) if a is not None]
        ids = [_as_na_id(a.get("naId")) for a in ancestors]
        chain = [i for i in ids if i is not None and i != na_id]
        if chain:
            properties["ancestors"] = chain
            parent = ancestors[ids.index(chain[0])]
            parent_na_id = chain[0]
            parent_title = _text(parent.get("title"))
        for position, entry in enumerate(ancestors):
            stub = _ancestor_stub(entry, [i for i in ids[position + 1 :] if i is not None])
            if stub is None or stub.na_id == na_id:
                continue
            stubs.setdefault(stub.na_id, stub)
            for creator in entry.get("creators") or []:
                _add_authority_stubs(stubs, creator, stub.na_id, stub.node_type, "creators")

    found = _references(record, na_id, node_type)
    for reference, reference_entry in found:
        if reference.rel == schema.Rel.ORGANIZATION_NAME or reference.na_id == na_id:
            continue
        authority = _authority_stub(reference, reference_entry)
        if authority is not None:
            _merge_stub(stubs, authority)

    aliases: list[int] = []
    if node_type == "organization":
        for entry in record.get("organizationNames") or []:
            alias = _as_na_id(entry.get("naId")) if isinstance(entry, dict) else None
            if alias is not None and alias != na_id and alias not in aliases:
                aliases.append(alias)

    title_key = "title" if kind == RecordKind.DESCRIPTION else "heading"
    title = _text(record.get(title_key))
    if title is None and kind == RecordKind.AUTHORITY:
        title = _text(record.get("name"))
    return ParsedRecord(
        na_id=na_id,
        node_type=node_type,
        record_kind=kind,
        properties=properties,
        body_text=_body_text(record, node_type, transcription),
        title=title,
        parent_na_id=parent_na_id,
        parent_title=parent_title,
        date_range=_date_range(record, node_type),
        references=tuple(reference for reference, _ in found),
        stubs=tuple(stubs.values()),
        org_name_aliases=tuple(aliases),
        completeness=len(properties),
        file_name=file_name,
        line_num=line_num,
    )


def _add_authority_stubs(
    stubs: dict[int, StubRecord], entry: Any, holder: int, holder_type: str, list_key: str
) -> None:
    if not isinstance(entry, dict):
        return
    na_id = _as_na_id(entry.get("naId"))
    if na_id is None or na_id == holder:
        return
    heading = _text(entry.get("heading")) or _text(entry.get("name"))
    rel = schema.REFERENCE_LISTS[list_key].value
    reference = Reference(rel, na_id, heading, _reference_type(list_key, entry, holder_type))
    stub = _authority_stub(reference, entry)
    if stub is not None:
        _merge_stub(stubs, stub)


def _merge_stub(stubs: dict[int, StubRecord], stub: StubRecord) -> None:
    """One stub per naId; a later sighting only adds properties the first one lacked."""
    known = stubs.get(stub.na_id)
    if known is None:
        stubs[stub.na_id] = stub
        return
    if known.node_type != stub.node_type:
        return
    missing = {k: v for k, v in stub.properties.items() if k not in known.properties}
    if missing:
        stubs[stub.na_id] = StubRecord(
            known.na_id,
            known.node_type,
            {**known.properties, **missing},
            known.title or stub.title,
            known.parent_na_id,
            known.references,
        )


# --------------------------------------------------------------------------------------------
# Lines and files
# --------------------------------------------------------------------------------------------


def _raw(text: str) -> str:
    return text[:RAW_LIMIT]


def parse_line(line: str | bytes, file_name: str, line_num: int) -> ParsedRecord | Rejected:
    """One line of any supported shape -> a ParsedRecord, or a Rejected naming what is wrong.

    Never raises for bad content.
    """
    if isinstance(line, bytes | bytearray):
        try:
            text = bytes(line).decode("utf-8")
        except UnicodeDecodeError as exc:
            shown = bytes(line).decode("utf-8", errors="replace")
            return Rejected(file_name, line_num, f"invalid UTF-8 at byte {exc.start}", _raw(shown))
    else:
        text = line
    text = text.removeprefix("\ufeff")  # a byte-order mark on a file's first line
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return Rejected(
            file_name, line_num, f"malformed JSON: {exc.msg} (col {exc.colno})", _raw(text)
        )
    except RecursionError:
        return Rejected(file_name, line_num, "malformed JSON: nested too deeply", _raw(text))
    try:
        record, transcription = _unwrap(obj)
        return _parse_record(record, transcription, file_name, line_num)
    except _Reject as exc:
        return Rejected(file_name, line_num, str(exc), _raw(text))
    except Exception as exc:  # a shape nobody foresaw must cost one line, never the run
        reason = f"parser error: {type(exc).__name__}: {exc}"
        return Rejected(file_name, line_num, reason, _raw(text))


def _iter_lines(
    lines: Iterable[bytes], name: str, damage: Callable[[BaseException], str]
) -> Iterator[ParsedRecord | Rejected]:
    """Parse a stream of lines; damage to the stream itself ends it with one Rejected."""
    line_num = 0
    seen = False
    try:
        for raw in lines:
            line_num += 1
            body = raw.rstrip(b"\r\n")
            if not body.strip():
                continue  # blank lines carry nothing and are not errors
            seen = True
            yield parse_line(body, name, line_num)
    except (EOFError, OSError, zlib.error, zipfile.BadZipFile) as exc:
        yield Rejected(name, line_num + 1, damage(exc), "")
        return
    if not seen:
        yield Rejected(name, 0, "empty file", "")


def _gzip_damage(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return f"truncated gzip stream: {exc}"
    return f"corrupt gzip stream: {exc}"


def _zip_damage(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return f"truncated zip archive: {exc}"
    return f"corrupt zip member: {exc}"


def _is_record_member(member: str) -> bool:
    lower = member.lower()
    base = lower.rsplit("/", 1)[-1]
    return (
        lower.endswith((".jsonl", ".json"))
        and not base.startswith(".")
        and not lower.startswith("__macosx/")
    )


def iter_file(path: Path, *, display_name: str | None = None) -> Iterator[ParsedRecord | Rejected]:
    """Stream one input file (`.jsonl`, `.json`, `.jsonl.gz`/`.gz`, `.zip`), line by line.

    Never reads a whole file into memory and never raises for bad content: each bad line, an
    empty file, and a truncated or corrupt compressed stream each become a `Rejected`.
    """
    name = display_name or path.name
    lower = path.name.lower()
    try:
        if path.stat().st_size == 0:
            yield Rejected(name, 0, "empty file", "")
            return
        if lower.endswith(".zip"):
            yield from _iter_zip(path, name)
        elif lower.endswith(".gz"):
            with gzip.open(path, "rb") as stream:
                yield from _iter_lines(stream, name, _gzip_damage)
        else:
            with path.open("rb") as stream:
                yield from _iter_lines(stream, name, lambda exc: f"unreadable file: {exc}")
    except OSError as exc:
        yield Rejected(name, 0, f"unreadable file: {exc}", "")


def _iter_zip(path: Path, name: str) -> Iterator[ParsedRecord | Rejected]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        # No central directory: the archive was cut short. Salvage the members that are whole
        # by reading local headers front to back.
        yield from _iter_zip_salvage(path, name)
        return
    with archive:
        members = [
            info
            for info in archive.infolist()
            if not info.is_dir() and _is_record_member(info.filename)
        ]
        if not members:
            yield Rejected(name, 0, "empty file: archive has no .jsonl or .json member", "")
            return
        for info in members:
            member_name = f"{name}!{info.filename}"
            try:
                with archive.open(info) as stream:
                    yield from _iter_lines(stream, member_name, _zip_damage)
            except (zipfile.BadZipFile, zlib.error, NotImplementedError, OSError) as exc:
                yield Rejected(member_name, 0, f"corrupt zip member: {exc}", "")


def _split_lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    pending = b""
    for chunk in chunks:
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line + b"\n"
    if pending:
        yield pending


_LOCAL_HEADER: Final = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE: Final = 0x04034B50
_READ_SIZE: Final = 1 << 16


def _member_chunks(stream: IO[bytes], method: int, size: int) -> Iterator[bytes]:
    """Decompressed bytes of one member, leaving `stream` just after its data."""
    if method == zipfile.ZIP_STORED:
        remaining = size
        while remaining:
            block = stream.read(min(remaining, _READ_SIZE))
            if not block:
                raise EOFError("member data ends early")
            remaining -= len(block)
            yield block
        return
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    while not inflater.eof:
        block = stream.read(_READ_SIZE)
        if not block:
            raise EOFError("member data ends early")
        out = inflater.decompress(block)
        if out:
            yield out
    if inflater.unused_data:
        stream.seek(-len(inflater.unused_data), io.SEEK_CUR)


def _iter_zip_salvage(path: Path, name: str) -> Iterator[ParsedRecord | Rejected]:
    with path.open("rb") as stream:
        any_member = False
        while True:
            header = stream.read(_LOCAL_HEADER.size)
            if len(header) < _LOCAL_HEADER.size:
                break
            fields = _LOCAL_HEADER.unpack(header)
            signature, _version, flags, method = fields[0], fields[1], fields[2], fields[3]
            compressed_size, name_length, extra_length = fields[7], fields[9], fields[10]
            if signature != _LOCAL_SIGNATURE:
                break  # the central directory (or garbage): no more local entries
            encoding = "utf-8" if flags & 0x800 else "cp437"
            member = stream.read(name_length).decode(encoding, errors="replace")
            stream.read(extra_length)
            member_name = f"{name}!{member}"
            stored_unknown_size = method == zipfile.ZIP_STORED and flags & 0x08
            if method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or stored_unknown_size:
                yield Rejected(
                    member_name,
                    0,
                    f"truncated zip archive: cannot salvage a member with method {method}",
                    "",
                )
                return
            chunks = _member_chunks(stream, method, compressed_size)
            if _is_record_member(member) and not member.endswith("/"):
                any_member = True
                damaged = False
                for result in _iter_lines(_split_lines(chunks), member_name, _zip_damage):
                    damaged = damaged or (
                        isinstance(result, Rejected)
                        and result.reason.startswith("truncated zip archive")
                    )
                    yield result
                if damaged:
                    return
            else:
                try:
                    for _ in chunks:
                        pass
                except (EOFError, zlib.error) as exc:
                    yield Rejected(member_name, 0, _zip_damage(exc), "")
                    return
            if flags & 0x08:
                # Data descriptor: optional signature, CRC, sizes (zip64 sizes not supported).
                descriptor = stream.read(4)
                stream.read(12 if descriptor == b"PK\x07\x08" else 8)
        if not any_member:
            yield Rejected(name, 0, "truncated zip archive: no readable member", "")
            return
        yield Rejected(name, 0, "truncated zip archive: central directory missing", "")
