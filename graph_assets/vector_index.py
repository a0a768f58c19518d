"""The vector_index asset: the vector and full-text indexes that hybrid search reads."""

from typing import Any

import dagster as dg

from graph_assets.common import (
    WAITS_FOR_BACKGROUND_WORK,
    neo4j_writer_asset,
    table,
    timed,
)
from graph_assets.text_embeddings import text_embeddings
from nara_kg.graph import indexes
from resources import EmbeddingModel, Neo4jResource


@neo4j_writer_asset(
    deps=[text_embeddings],
    op_tags=WAITS_FOR_BACKGROUND_WORK,
    description=(
        "Vector index `texts_from_records` on :recordWithText(textEmbedding), cosine, the "
        "model's dimension, plus a full-text index over the same text for hybrid search; "
        "waits until both are ONLINE (as long as their population keeps moving). Core: "
        "nara_kg.graph.indexes.ensure_vector_index, nara_kg.graph.indexes.ensure_fulltext_index."
    ),
)
def vector_index(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource, embedding_model: EmbeddingModel
) -> dg.MaterializeResult:
    driver = neo4j.get_driver()
    metadata: dict[str, Any] = {}
    with timed(metadata):
        vector = indexes.ensure_vector_index(
            driver, neo4j.database, embedding_model.get_embedder().dimension, log=context.log.info
        )
        fulltext = indexes.ensure_fulltext_index(driver, neo4j.database, log=context.log.info)
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "indexes": table(
                [
                    {
                        k: str(info[k]) if isinstance(info[k], list) else info[k]
                        for k in ("name", "type", "state", "labelsOrTypes", "properties")
                    }
                    for info in (vector, fulltext)
                ]
            ),
            "vector_dimensions": embedding_model.get_embedder().dimension,
        }
    )
