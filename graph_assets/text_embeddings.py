"""The text_embeddings asset: vectors into Neo4j for the chunks whose text or model changed,
taken from the per-file chunk_embeddings parts."""

from typing import Any

import dagster as dg

from graph_assets.common import (
    neo4j_writer_asset,
    timed,
)
from graph_assets.file_stages import CHUNK_EMBEDDINGS
from graph_assets.graph_nodes import graph_nodes
from nara_kg.build import embeddings as build_embeddings
from nara_kg.graph import indexes
from resources import EmbeddingModel, Neo4jResource, PipelinePaths


@neo4j_writer_asset(
    kinds={"python", "neo4j", "pytorch"},
    deps=[graph_nodes, CHUNK_EMBEDDINGS],
    description=(
        "Vectors in `textEmbedding` for every chunk whose text or model changed since its last "
        "embedding: taken from the per-file chunk_embeddings parts; the few no part holds "
        "(chosen stubs, whose titles many files share) are encoded here. The vector index "
        "exists before the first write, so that it grows with the writes. Core: "
        "nara_kg.build.embeddings.embed_pending."
    ),
)
def text_embeddings(
    context: dg.AssetExecutionContext,
    neo4j: Neo4jResource,
    embedding_model: EmbeddingModel,
    paths: PipelinePaths,
) -> dg.MaterializeResult:
    embedder = embedding_model.get_embedder()
    metadata: dict[str, Any] = {}
    with timed(metadata):
        # Indexing each page as it lands cost less than populating the index from the whole
        # graph afterwards (15k vectors: 8.0-8.9 s against 10.8-11.1 s, writes included).
        indexes.ensure_vector_index(
            neo4j.get_driver(), neo4j.database, embedder.dimension, log=context.log.info
        )
        result = build_embeddings.embed_pending(
            neo4j.get_driver(),
            neo4j.database,
            embedder,
            layout=paths.layout,
            log=context.log.info,
        )
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "embedded": result.embedded,
            "from_file_parts": result.from_parts,
            "encoded_here": result.encoded,
            "model_key": result.model_key,
            "encoding_seconds": dg.MetadataValue.float(round(result.seconds_encoding, 3)),
            "chunks_per_second": dg.MetadataValue.float(round(result.chunks_per_second, 1)),
        }
    )
