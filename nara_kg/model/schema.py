"""The graph vocabulary, defined once: labels, relationship types, property names, index names.

Every Cypher statement that needs a label or relationship type takes it from the allow-lists in
this module (see :func:`checked_label` and :func:`checked_relationship`), so nothing that comes
from data can ever be interpolated into a query.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class DescriptionLevel(StrEnum):
    """`levelOfDescription` values of description records; each is also a node label."""

    ITEM = "item"
    FILE_UNIT = "fileUnit"
    SERIES = "series"
    RECORD_GROUP = "recordGroup"
    COLLECTION = "collection"


class AuthorityType(StrEnum):
    """`authorityType` values of authority records; each is also a node label."""

    PERSON = "person"
    ORGANIZATION = "organization"
    GEOGRAPHIC_PLACE_NAME = "geographicPlaceName"
    SPECIFIC_RECORDS_TYPE = "specificRecordsType"
    TOPICAL_SUBJECT = "topicalSubject"


class RecordKind(StrEnum):
    """`recordType` of a NARA record."""

    DESCRIPTION = "description"
    AUTHORITY = "authority"


#: The ten record types, in the order of the seed's attribute table. Each is a node label.
RECORD_TYPES: Final[tuple[str, ...]] = tuple(
    [level.value for level in DescriptionLevel] + [kind.value for kind in AuthorityType]
)
DESCRIPTION_TYPES: Final[frozenset[str]] = frozenset(level.value for level in DescriptionLevel)
AUTHORITY_TYPES: Final[frozenset[str]] = frozenset(kind.value for kind in AuthorityType)


class Label(StrEnum):
    """Labels that are not record types."""

    #: Every node of the knowledge graph (one per chunk) carries it; it owns the chunkId
    #: constraint and the naId index, so every lookup by naId is index-backed.
    CHUNK = "Chunk"
    #: Nodes whose `text` was embedded (the seed's label, kept verbatim).
    RECORD_WITH_TEXT = "recordWithText"
    COMMUNITY = "Community"
    #: An entity the LLM extracted from chunk text that no authority record stands for
    #: (entity_extraction; properties in `EntityProp`).
    ENTITY = "Entity"
    #: One per by-difference writer: the revision of its last complete write, so that the
    #: writer's own record of what it wrote may stand in for reading the graph back
    #: (:mod:`nara_kg.build.sync_state`; properties in `SyncProp`).
    SYNC_STATE = "SyncState"


class Rel(StrEnum):
    """Relationship types.

    Two casings, on purpose. The types of the original NARA graph design (seed 000: `Next`,
    `Includes`, and the authority types, each named after the reference list it comes from,
    `creator`, `subject`, ...) keep that design's spelling, so Cypher written against it runs
    unchanged. The types this platform adds (`IN_COMMUNITY`, `MENTIONED_IN`, `RELATED`) follow
    Neo4j's UPPER_SNAKE_CASE convention. A relationship type is stored with every relationship,
    so renaming one would rewrite every graph already built and change its fingerprint.
    """

    NEXT = "Next"
    INCLUDES = "Includes"
    IN_COMMUNITY = "IN_COMMUNITY"
    #: An authority named in a chunk's text: the authority's first chunk -> the chunk
    #: (entity_mentions; properties in `MentionProp`).
    MENTIONED_IN = "MENTIONED_IN"
    #: Two extracted entities (Entity nodes or authorities' first chunks) the LLM found related
    #: in some chunk (entity_extraction; properties in `EntityProp`).
    RELATED = "RELATED"
    # Authority relationships: one type per reference list, from the authority's first chunk to
    # the first chunk of the record that holds the reference.
    BROADER_TERM = "broaderTerm"
    CONTRIBUTOR = "contributor"
    CREATOR = "creator"
    SUBJECT = "subject"
    DONOR = "donor"
    NARROWER_TERM = "narrowerTerm"
    ORGANIZATIONAL_REFERENCE = "organizationalReference"
    RELATED_TERM = "relatedTerm"
    JURISDICTION = "jurisdiction"
    ORGANIZATION_NAME = "organizationName"
    PERSONAL_REFERENCE = "personalReference"


#: Reference list in a record (JSON key) -> relationship type it produces.
REFERENCE_LISTS: Final[dict[str, Rel]] = {
    "broaderTerms": Rel.BROADER_TERM,
    "contributors": Rel.CONTRIBUTOR,
    "creators": Rel.CREATOR,
    "subjects": Rel.SUBJECT,
    "donors": Rel.DONOR,
    "narrowerTerms": Rel.NARROWER_TERM,
    "organizationalReferences": Rel.ORGANIZATIONAL_REFERENCE,
    "relatedTerms": Rel.RELATED_TERM,
    "jurisdictions": Rel.JURISDICTION,
    "organizationNames": Rel.ORGANIZATION_NAME,
    "personalReferences": Rel.PERSONAL_REFERENCE,
}
AUTHORITY_RELATIONSHIPS: Final[tuple[Rel, ...]] = tuple(REFERENCE_LISTS.values())


class Prop:
    """Property names shared by every node (seed 000 plus the platform's own)."""

    NA_ID: Final = "naId"
    CHUNK_ID: Final = "chunkId"
    CHUNK_SEQ_ID: Final = "chunkSeqId"
    TEXT: Final = "text"
    SOURCE: Final = "source"
    FILE_NAME: Final = "file_name"
    LINE_NUM: Final = "line_num"
    TITLE: Final = "title"
    HEADING: Final = "heading"
    RECORD_TYPE: Final = "recordType"
    LEVEL_OF_DESCRIPTION: Final = "levelOfDescription"
    AUTHORITY_TYPE: Final = "authorityType"
    ANCESTORS: Final = "ancestors"
    # Platform properties (not in the seed table).
    NODE_TYPE: Final = "nodeType"  # the record-type label, as a property for easy grouping
    IS_STUB: Final = "isStub"  # built from a reference or an ancestor entry, not a full record
    TEXT_HASH: Final = "textHash"  # sha256 of the embedded text
    EMBEDDING: Final = "textEmbedding"
    EMBEDDING_KEY: Final = "embeddingKey"  # hash of text + model: re-embed only when it changes
    CHUNK_COUNT: Final = "chunkCount"
    ROW_HASH: Final = "rowHash"  # hash of the node's row: rewrite the node only when it changes
    # Catalog codes, flattened from the record as the parser names them.
    LOCAL_IDENTIFIER: Final = "localIdentifier"  # e.g. "210-CMB"
    VARIANT_CONTROL_NUMBERS: Final = "number_variantControlNumbers"  # e.g. ["NWDNS-210-CMB"]
    INCLUSIVE_START_DATE: Final = "logicalDate_inclusiveStartDate"  # ISO, compares as text
    # What a result card shows beside the title (flattened as the parser names them).
    DIGITAL_OBJECT_URLS: Final = "objectUrl_digitalObjects"
    ACCESS_RESTRICTION: Final = "status_accessRestriction"
    USE_RESTRICTION: Final = "status_useRestriction"
    SPECIFIC_USE_RESTRICTIONS: Final = "specificUseRestrictions_useRestriction"
    REFERENCE_UNITS: Final = "name_referenceUnits"  # the holding archive(s)

    # The dates a file unit's title states ("Volume 740, June 6 - June 7, 1944"), parsed by
    # ingest.parsing.title_dates for a record with no catalog dates of its own; the names say
    # where they came from. ISO, like the catalog's logicalDate_* properties.
    TITLE_START_DATE: Final = "logicalDate_titleStartDate"
    TITLE_END_DATE: Final = "logicalDate_titleEndDate"


#: Between a chunk's search header (title, parent, dates) and its body text.
HEADER_BODY_SEPARATOR: Final = "\n\n"


class MentionProp:
    """Properties of MENTIONED_IN relationships."""

    COUNT: Final = "count"  # occurrences of the authority in the chunk
    SURFACE: Final = "surface"  # the spelling used most, as written in the text
    #: Set to :data:`LLM_SOURCE` on the mentions entity_extraction writes; absent on the
    #: linker's, so each asset reads and deletes only its own.
    SOURCE: Final = "source"


#: `MentionProp.SOURCE` of LLM-extracted mentions.
LLM_SOURCE: Final = "llm"


class EntityProp:
    """Properties of Entity nodes and RELATED relationships (entity_extraction)."""

    ID: Final = "entityId"  # "<type>:<normalized name>"
    NAME: Final = "name"
    TYPE: Final = "entityType"
    DESCRIPTION: Final = "description"
    WEIGHT: Final = "weight"  # RELATED: summed relationship strengths over chunks


class CommunityProp:
    """Property names of Community nodes: Leiden's hierarchy, then the report written on it."""

    ID: Final = "id"  # "<level>-<communityId>"
    LEVEL: Final = "level"  # 0 = finest
    SIZE: Final = "size"  # number of member records
    MEMBER_HASH: Final = "memberHash"  # hash of the members' naIds
    # The report: GraphRAG's JSON fields, each a property of its own, and the JSON whole.
    TITLE: Final = "title"
    SUMMARY: Final = "summary"
    RATING: Final = "rating"
    RATING_EXPLANATION: Final = "rating_explanation"
    FINDINGS: Final = "findings"  # JSON list of {summary, explanation}
    REPORT: Final = "report"
    REPORT_GENERATED_BY: Final = "reportGeneratedBy"  # "extractive" or "<backend>:<model>"
    REPORT_CONTEXT_KEY: Final = "reportContextKey"  # hash of the generator and its context
    #: Hash of everything the report's context is built from (members, relationships, mention
    #: totals, sub-reports, budget, generator, code): equal on the next run, the report stands.
    REPORT_INPUT_KEY: Final = "reportInputKey"
    #: Whether the context used sub-community reports / was cut at the token budget.
    REPORT_USED_SUB_REPORTS: Final = "reportUsedSubReports"
    REPORT_TRUNCATED: Final = "reportTruncated"
    #: JSON list of the members of highest degree when the report was made (naId, title,
    #: nodeType, source, degree): what a global answer's provenance shows, without a query.
    TOP_MEMBERS: Final = "topMembers"
    SUMMARY_EMBEDDING: Final = "summaryEmbedding"  # of title + summary
    SUMMARY_EMBEDDING_KEY: Final = "summaryEmbeddingKey"  # model key + report context key


class SyncProp:
    """Properties of SyncState nodes."""

    CONCERN: Final = "concern"  # what the writer keeps equal to its desired set, e.g. "nodes"
    #: A fresh id after each complete write; "writing:<id>" while one is under way.
    REVISION: Final = "revision"
    #: The id of the work folder whose build wrote it last (one Neo4j can serve two exports).
    OWNER: Final = "owner"


class Index:
    """Names of the indexes and constraints the platform creates."""

    #: Seed 000's vector index over recordWithText.textEmbedding.
    VECTOR: Final = "texts_from_records"
    FULLTEXT: Final = "texts_fulltext"
    #: Vector index over Community.summaryEmbedding (global search).
    SUMMARY: Final = "community_summaries"
    CHUNK_ID_CONSTRAINT: Final = "chunk_chunkId_unique"
    NA_ID: Final = "chunk_naId"
    #: Records by the day they begin ("series that begin on March 18, 1942").
    INCLUSIVE_START_DATE: Final = "chunk_inclusive_start_date"
    COMMUNITY_ID_CONSTRAINT: Final = "community_id_unique"
    ENTITY_ID_CONSTRAINT: Final = "entity_id_unique"


#: The GDS in-memory graph that Leiden runs on (projected and dropped by each run).
GDS_PROJECTION: Final = "nara_kg_communities"

CATALOG_URL: Final = "https://catalog.archives.gov/id/{naId}"

_ALLOWED_LABELS: Final[frozenset[str]] = frozenset(RECORD_TYPES) | {label.value for label in Label}
_ALLOWED_RELATIONSHIPS: Final[frozenset[str]] = frozenset(rel.value for rel in Rel)


def source_url(na_id: int) -> str:
    return CATALOG_URL.format(naId=na_id)


def chunk_id(na_id: int, seq: int) -> str:
    """Stable across rebuilds: a chunk is named by its record and position."""
    return f"{na_id}-{seq}"


def checked_label(name: str) -> str:
    """Return `name` if it is one of the project's labels; the only way a label reaches Cypher."""
    if name not in _ALLOWED_LABELS:
        raise ValueError(f"label {name!r} is not in the allow-list")
    return name


def checked_relationship(name: str) -> str:
    """Return `name` if it is one of the project's relationship types."""
    if name not in _ALLOWED_RELATIONSHIPS:
        raise ValueError(f"relationship type {name!r} is not in the allow-list")
    return name
