"""The field tables of the authority types (geographic place name, organization, person,
specific records type, topical subject): which node properties each gets."""

from __future__ import annotations

from typing import Final

from nara_kg.ingest.parsing.field_specs import FieldSpec, spec_table

_AUTHORITY_COMMON: Final[tuple[str, ...]] = (
    "naId",
    "heading",
    "recordType",
    "authorityType",
    "source",
)

GEOGRAPHIC_PLACE_NAME_FIELDS: Final[dict[str, FieldSpec]] = spec_table(
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

ORGANIZATION_FIELDS: Final[dict[str, FieldSpec]] = spec_table(
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

PERSON_FIELDS: Final[dict[str, FieldSpec]] = spec_table(
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
SPECIFIC_RECORDS_TYPE_FIELDS: Final[dict[str, FieldSpec]] = spec_table(
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

TOPICAL_SUBJECT_FIELDS: Final[dict[str, FieldSpec]] = spec_table(
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
