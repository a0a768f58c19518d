"""The field tables: which node properties each record type gets, and where each is read from.

A data table: seed 000's table ("Перечень атрибутов") encoded as one dict constant per type,
the description types' in :mod:`~nara_kg.ingest.parsing.description_fields` and the authority
types' in :mod:`~nara_kg.ingest.parsing.authority_fields` (where fields live in the real JSON is
documented in `shared/data/nara/STRUCTURE.md`); where each field is read from, and the key sets
that say which JSON shapes are valid, are in :mod:`~nara_kg.ingest.parsing.field_specs`.
Decisions that the seed and the data leave open:

* Seed typos are fixed consistently: `url_online_resources` is `url_onlineResources`; the table
  row `specificRecordsTypes` is the type `specificRecordsType`; `findingAidtype_findingAids`
  reads `findingAidType` or `findingAidtype` (both spellings exist in secondary sources).
* Every description type also gets the creators fields, `ancestors` and `source`; a
  recordGroup or collection reads `referenceUnits[]` at top level and falls back to
  `physicalOccurrences[].referenceUnits[]`; an item, file unit or series also gets
  `name_referenceUnits` (read from there), the holding archive a result card shows.
"""

from __future__ import annotations

from typing import Final

from nara_kg.ingest.parsing.authority_fields import (
    GEOGRAPHIC_PLACE_NAME_FIELDS,
    ORGANIZATION_FIELDS,
    PERSON_FIELDS,
    SPECIFIC_RECORDS_TYPE_FIELDS,
    TOPICAL_SUBJECT_FIELDS,
)
from nara_kg.ingest.parsing.description_fields import (
    COLLECTION_FIELDS,
    CREATOR_FIELDS,
    FILE_UNIT_FIELDS,
    ITEM_FIELDS,
    RECORD_GROUP_FIELDS,
    SERIES_FIELDS,
)
from nara_kg.ingest.parsing.field_specs import (
    BOOL_FIELDS,
    COMPUTED_FIELDS,
    DATE_OBJECTS,
    INT_FIELDS,
    LENIENT_SCALAR_LISTS,
    LIST_CONTAINERS,
    LIST_LEAVES,
    STRICT_LISTS,
    STRICT_OBJECTS,
    STRICT_SCALAR_LISTS,
    TITLE_DATE_FIELDS,
    FieldKind,
    FieldSpec,
    spec_for,
)

__all__ = [
    "BODY_TEXT_FIELD",
    "BOOL_FIELDS",
    "COLLECTION_FIELDS",
    "COMPUTED_FIELDS",
    "CREATOR_FIELDS",
    "DATE_OBJECTS",
    "FIELDS_BY_TYPE",
    "FILE_UNIT_FIELDS",
    "GEOGRAPHIC_PLACE_NAME_FIELDS",
    "IMPLIED_REFERENCE_TYPE",
    "INT_FIELDS",
    "ITEM_FIELDS",
    "LENIENT_SCALAR_LISTS",
    "LIST_CONTAINERS",
    "LIST_LEAVES",
    "ORGANIZATION_FIELDS",
    "PERSON_FIELDS",
    "RECORD_GROUP_FIELDS",
    "SERIES_FIELDS",
    "SPECIFIC_RECORDS_TYPE_FIELDS",
    "STRICT_LISTS",
    "STRICT_OBJECTS",
    "STRICT_SCALAR_LISTS",
    "TERM_LISTS",
    "TITLE_DATE_FIELDS",
    "TOPICAL_SUBJECT_FIELDS",
    "FieldKind",
    "FieldSpec",
    "spec_for",
]

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
