"""The pipeline's Parquet tables, defined once: column names and pyarrow schemas.

Every table under the work directory (see :mod:`nara_kg.ingest.layout`) is described here, and
code that reads or writes one names its columns through :class:`Col`. Column names are not node
property names: a chunk's `props` column holds the node properties as JSON
(:class:`nara_kg.model.schema.Prop` names those), even where a column and a property share a
spelling.
"""

from __future__ import annotations

from typing import Final

import pyarrow as pa


class Col:
    """Column names of the Parquet tables (one spelling per meaning, across tables)."""

    # Parsed records parts (`<file>.records.parquet`); rejects share FILE_NAME and LINE_NUM.
    NA_ID: Final = "naId"
    NODE_TYPE: Final = "nodeType"
    RECORD_KIND: Final = "recordKind"
    IS_STUB: Final = "isStub"
    FILE_NAME: Final = "file_name"
    LINE_NUM: Final = "line_num"
    TITLE: Final = "title"
    PARENT_NA_ID: Final = "parentNaId"
    PARENT_TITLE: Final = "parentTitle"
    DATE_RANGE: Final = "dateRange"
    BODY_TEXT: Final = "bodyText"
    COMPLETENESS: Final = "completeness"
    SOURCE: Final = "source"
    PROPERTIES: Final = "properties"
    REFERENCES: Final = "references"
    ALIASES: Final = "aliases"
    # Rejects (per-file parts and the graph-wide table).
    REASON: Final = "reason"
    RAW: Final = "raw"
    # The parsed index (`selection/files.parquet`): one row per live file.
    FILE_ID: Final = "file_id"
    REL_PATH: Final = "rel_path"
    SHA256: Final = "sha256"
    LINES: Final = "lines"
    RECORDS: Final = "records"
    STUBS: Final = "stubs"
    REJECTED: Final = "rejected"
    BY_TYPE: Final = "by_type"
    REJECT_REASONS: Final = "reject_reasons"
    # The selection (`selection/chosen.parquet`): (part index, row index) of each chosen row.
    PART: Final = "part"
    ROW: Final = "row"
    # The alias table (`selection/aliases.parquet`): alias naId -> the organization's NA_ID.
    ALIAS: Final = "alias"
    # Chunk parts (`<file>.chunks.parquet`); they also carry NA_ID, NODE_TYPE, IS_STUB,
    # PARENT_NA_ID and REFERENCES.
    CHUNK_ID: Final = "chunkId"
    CHUNK_SEQ_ID: Final = "chunkSeqId"
    RECORD_ROW: Final = "recordRow"
    EMBED: Final = "embed"
    TEXT: Final = "text"
    TEXT_HASH: Final = "textHash"
    TOKENS: Final = "tokens"
    PROPS: Final = "props"
    ROW_HASH: Final = "rowHash"
    CHUNK_COUNT: Final = "chunkCount"
    # Vector parts (`<file>.vectors.parquet`): CHUNK_ID, TEXT_HASH and the vector.
    VECTOR: Final = "vector"


#: One row per record or stub of one input file.
RECORD_SCHEMA: Final = pa.schema(
    [
        pa.field(Col.NA_ID, pa.int64(), nullable=False),
        pa.field(Col.NODE_TYPE, pa.string(), nullable=False),
        pa.field(Col.RECORD_KIND, pa.string()),
        pa.field(Col.IS_STUB, pa.bool_(), nullable=False),
        pa.field(Col.FILE_NAME, pa.string(), nullable=False),
        pa.field(Col.LINE_NUM, pa.int64(), nullable=False),
        pa.field(Col.TITLE, pa.string()),
        pa.field(Col.PARENT_NA_ID, pa.int64()),
        pa.field(Col.PARENT_TITLE, pa.string()),
        pa.field(Col.DATE_RANGE, pa.string()),
        pa.field(Col.BODY_TEXT, pa.large_string()),
        pa.field(Col.COMPLETENESS, pa.int32(), nullable=False),
        pa.field(Col.SOURCE, pa.string()),
        pa.field(Col.PROPERTIES, pa.large_string(), nullable=False),
        #: JSON list of [relationship, naId, heading, authorityType].
        pa.field(Col.REFERENCES, pa.string(), nullable=False),
        pa.field(Col.ALIASES, pa.list_(pa.int64())),
    ]
)

#: One row per rejected line (or unreadable file, with line 0).
REJECT_SCHEMA: Final = pa.schema(
    [
        pa.field(Col.FILE_NAME, pa.string(), nullable=False),
        pa.field(Col.LINE_NUM, pa.int64(), nullable=False),
        pa.field(Col.REASON, pa.string(), nullable=False),
        pa.field(Col.RAW, pa.string()),
    ]
)

#: One row per live file, in selection order (a part's index in the selection is its row here).
PARSED_INDEX_SCHEMA: Final = pa.schema(
    [
        (Col.FILE_ID, pa.string()),
        (Col.REL_PATH, pa.string()),
        (Col.SHA256, pa.string()),
        (Col.LINES, pa.int64()),
        (Col.RECORDS, pa.int64()),
        (Col.STUBS, pa.int64()),
        (Col.REJECTED, pa.int64()),
        #: JSON objects: node type -> records, reject category -> lines.
        (Col.BY_TYPE, pa.string()),
        (Col.REJECT_REASONS, pa.string()),
    ]
)

#: The row chosen for each naId: its part's index in the parsed index, and its row there.
SELECTION_SCHEMA: Final = pa.schema([(Col.PART, pa.int32()), (Col.ROW, pa.int64())])

#: organizationNames[] naId -> the organization's own naId.
ALIAS_SCHEMA: Final = pa.schema([(Col.ALIAS, pa.int64()), (Col.NA_ID, pa.int64())])

#: One row per chunk of every record and stub of one input file.
CHUNK_SCHEMA: Final = pa.schema(
    [
        pa.field(Col.CHUNK_ID, pa.string(), nullable=False),
        pa.field(Col.NA_ID, pa.int64(), nullable=False),
        pa.field(Col.CHUNK_SEQ_ID, pa.int32(), nullable=False),
        #: The record's row in its file's parsed part: the selection chooses rows.
        pa.field(Col.RECORD_ROW, pa.int64(), nullable=False),
        pa.field(Col.NODE_TYPE, pa.string(), nullable=False),
        pa.field(Col.IS_STUB, pa.bool_(), nullable=False),
        pa.field(Col.EMBED, pa.bool_(), nullable=False),
        pa.field(Col.TEXT, pa.large_string(), nullable=False),
        pa.field(Col.TEXT_HASH, pa.string(), nullable=False),
        pa.field(Col.TOKENS, pa.int32(), nullable=False),
        #: JSON of every node property; the graph writer sends it as is.
        pa.field(Col.PROPS, pa.large_string(), nullable=False),
        pa.field(Col.ROW_HASH, pa.string(), nullable=False),
        # Relationship inputs, on the first chunk of each record only.
        pa.field(Col.CHUNK_COUNT, pa.int32()),
        pa.field(Col.PARENT_NA_ID, pa.int64()),
        pa.field(Col.REFERENCES, pa.string()),
    ]
)

#: Schema metadata key of a vector part: the embedding model's key (a part made with another
#: model is not reused).
MODEL_KEY_METADATA: Final = b"model_key"


def vector_schema(dimension: int, model_key: str) -> pa.Schema:
    """One row per embeddable chunk of one input file: its vector under `model_key`."""
    return pa.schema(
        [
            pa.field(Col.CHUNK_ID, pa.string(), nullable=False),
            pa.field(Col.TEXT_HASH, pa.string(), nullable=False),
            pa.field(Col.VECTOR, pa.list_(pa.float32(), dimension), nullable=False),
        ],
        metadata={MODEL_KEY_METADATA: model_key.encode()},
    )
