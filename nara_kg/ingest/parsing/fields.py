"""The field tables: which node properties each record type gets, and where each is read from.

A data table: seed 000's table ("Перечень атрибутов") encoded as one dict constant per type
(where fields live in the real JSON is documented in `shared/data/nara/STRUCTURE.md`), plus the
key sets that say which JSON shapes are valid. Decisions that the seed and the data leave open:

* Seed typos are fixed consistently: `url_online_resources` is `url_onlineResources`; the table
  row `specificRecordsTypes` is the type `specificRecordsType`; `findingAidtype_findingAids`
  reads `findingAidType` or `findingAidtype` (both spellings exist in secondary sources).
* Every description type also gets the creators fields, `ancestors` and `source`; a
  recordGroup or collection reads `referenceUnits[]` at top level and falls back to
  `physicalOccurrences[].referenceUnits[]`.
"""

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


def _fields(*names: str) -> dict[str, FieldSpec]:
    return {name: spec_for(name) for name in names}


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
    *TITLE_DATE_FIELDS,
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
    *TITLE_DATE_FIELDS,
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

#: The field holding each type's body text (items and fileUnits: see `parse.body_text`).
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
TERM_LISTS: Final[frozenset[str]] = frozenset({"broaderTerms", "narrowerTerms", "relatedTerms"})
#: Reference lists that imply the referenced authority's type.
IMPLIED_REFERENCE_TYPE: Final[dict[str, str]] = {
    "jurisdictions": "geographicPlaceName",
    "organizationNames": "organization",
    "organizationalReferences": "organization",
    "personalReferences": "person",
}
