"""The text_embeddings asset: vectors into Neo4j for the chunks whose text or model changed,
taken from the per-file chunk_embeddings parts."""

from typing import Any

import dagster as dg

from graph_assets.common import (
    RECORDS_TOUCHED,
    STARTS_BACKGROUND_WORK,
    neo4j_writer_asset,
    timed,
)
from graph_assets.file_stages import CHUNK_EMBEDDINGS
from graph_assets.graph_nodes import graph_nodes
from graph_assets.partitions import is_full_rebuild
from nara_kg.build import embeddings as build_embeddings
from nara_kg.graph import indexes
from resources import EmbeddingModel, Neo4jResource, PipelinePaths


@neo4j_writer_asset(
    kinds={"python", "neo4j", "pytorch"},
    deps=[graph_nodes, CHUNK_EMBEDDINGS],
    op_tags=STARTS_BACKGROUND_WORK,
    description=(
        "Vectors in `textEmbedding` for every chunk whose text or model changed since its last "
        "embedding: taken from the per-file chunk_embeddings parts; the few no part holds "
        "(chosen stubs, whose titles many files share) are encoded here. An existing vector "
        "index takes each page as it lands; a new one (and the full-text index) is created "
        "after the writes and populated by Neo4j while the steps after this one run "
        "(vector_index waits for it). After a change set that graph_nodes applied, only its "
        "records' chunks are read. Core: nara_kg.build.embeddings.sync_embeddings."
    ),
)
def text_embeddings(
    context: dg.AssetExecutionContext,
    neo4j: Neo4jResource,
    embedding_model: EmbeddingModel,
    paths: PipelinePaths,
) -> dg.MaterializeResult:
    embedder = embedding_model.get_embedder()
    driver, database = neo4j.get_driver(), neo4j.database
    metadata: dict[str, Any] = {}
    with timed(metadata):
        # Populating a new index from the whole graph costs Neo4j more than indexing each page
        # as it lands (15k vectors: 10.8-11.1 s against 8.0-8.9 s, writes included), but it
        # runs in the background, on the core the next steps leave idle, instead of in this
        # step.
        index_existed = indexes.drop_vector_index_of_other_width(
            driver, database, embedder.dimension
        )
        result = build_embeddings.sync_embeddings(
            driver,
            database,
            embedder,
            paths.layout,
            full=is_full_rebuild(context),
            log=context.log.info,
        )
        # The width was checked before the writes: only a missing index is created here.
        indexes.create_vector_index(driver, database, embedder.dimension)
        indexes.start_fulltext_index(driver, database)
    return dg.MaterializeResult(
        metadata={
            **metadata,
            RECORDS_TOUCHED: result.records_touched,
            "scope": result.scope,
            "embedded": result.embedded,
            "from_file_parts": result.from_parts,
            "encoded_here": result.encoded,
            "model_key": result.model_key,
            "index_populated_after_writes": not index_existed,
            "encoding_seconds": dg.MetadataValue.float(round(result.seconds_encoding, 3)),
            "chunks_per_second": dg.MetadataValue.float(round(result.chunks_per_second, 1)),
        }
    )
