"""Graph stages: nodes, embeddings, indexes and relationships in Neo4j (written by difference)."""

from typing import Any

import dagster as dg

from graph_assets.common import GRAPH_KINDS, GROUP, OWNERS, counts_table, md_table, timed
from graph_assets.files import chunks
from nara_kg import loading
from nara_kg.graph import indexes, nodes
from nara_kg.graph.relationships import SyncResult
from resources import EmbeddingModel, Neo4jResource, PipelinePaths

#: Steps that talk to Neo4j retry on transient failures; their writes are idempotent.
NEO4J_RETRY = dg.RetryPolicy(max_retries=2, delay=5, backoff=dg.Backoff.EXPONENTIAL)


@dg.asset(
    group_name=GROUP,
    kinds=GRAPH_KINDS,
    owners=OWNERS,
    deps=[chunks],
    retry_policy=NEO4J_RETRY,
    description=(
        "One node per chunk, labelled Chunk + its record type (+ recordWithText when its text "
        "is embedded), seed 000's properties; chunkId unique, naId indexed. Only new or changed "
        "chunks are written (UNWIND + MERGE); chunks gone from the input are deleted."
    ),
)
def graph_nodes(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource, paths: PipelinePaths
) -> dg.MaterializeResult:
    driver = neo4j.get_driver()
    metadata: dict[str, Any] = {}
    with timed(metadata):
        result = loading.sync_nodes(driver, neo4j.database, paths.layout, log=context.log.info)
    counts = nodes.node_counts(driver, neo4j.database)
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "chunks_desired": result.desired,
            "nodes_written": result.written,
            "nodes_unchanged": result.unchanged,
            "nodes_deleted": result.deleted,
            "records_written": result.records_written,
            "records_removed": result.records_removed,
            "written_by_type": counts_table(result.written_by_type),
            "graph_counts": counts_table(counts, key="type.measure"),
        }
    )


@dg.asset(
    group_name=GROUP,
    kinds={"python", "neo4j", "pytorch"},
    owners=OWNERS,
    deps=[graph_nodes],
    retry_policy=NEO4J_RETRY,
    description=(
        "sentence-transformers vectors (default all-MiniLM-L6-v2, offline) in `textEmbedding`; "
        "only chunks whose text or model changed since their last embedding are encoded."
    ),
)
def text_embeddings(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource, embedding_model: EmbeddingModel
) -> dg.MaterializeResult:
    embedder = embedding_model.get_embedder()
    metadata: dict[str, Any] = {}
    with timed(metadata):
        result = loading.embed_pending(
            neo4j.get_driver(), neo4j.database, embedder, log=context.log.info
        )
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "embedded": result.embedded,
            "model_key": result.model_key,
            "dimension": result.dimension,
            "encoding_seconds": dg.MetadataValue.float(round(result.seconds_encoding, 3)),
            "chunks_per_second": dg.MetadataValue.float(round(result.chunks_per_second, 1)),
        }
    )


@dg.asset(
    group_name=GROUP,
    kinds=GRAPH_KINDS,
    owners=OWNERS,
    deps=[text_embeddings],
    retry_policy=NEO4J_RETRY,
    description=(
        "Vector index `texts_from_records` on :recordWithText(textEmbedding), cosine, the "
        "model's dimension, plus a full-text index over the same text for hybrid search; "
        "waits until both are ONLINE."
    ),
)
def vector_index(neo4j: Neo4jResource, embedding_model: EmbeddingModel) -> dg.MaterializeResult:
    driver = neo4j.get_driver()
    metadata: dict[str, Any] = {}
    with timed(metadata):
        vector = indexes.ensure_vector_index(
            driver, neo4j.database, embedding_model.get_embedder().dimension
        )
        fulltext = indexes.ensure_fulltext_index(driver, neo4j.database)
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "indexes": md_table(
                [
                    {k: info[k] for k in ("name", "type", "state", "labelsOrTypes", "properties")}
                    for info in (vector, fulltext)
                ]
            ),
            "vector_dimensions": embedding_model.get_embedder().dimension,
        }
    )


def _sync_metadata(results: list[SyncResult], metadata: dict[str, Any]) -> dict[str, Any]:
    return {
        **metadata,
        "relationships": sum(r.desired for r in results),
        "added": sum(r.added for r in results),
        "removed": sum(r.removed for r in results),
        "by_type": md_table(
            [
                {"type": r.relationship, "total": r.desired, "added": r.added, "removed": r.removed}
                for r in results
            ]
        ),
    }


@dg.asset(
    group_name=GROUP,
    kinds=GRAPH_KINDS,
    owners=OWNERS,
    deps=[graph_nodes],
    retry_policy=NEO4J_RETRY,
    description="`Next`: chunk k -> chunk k+1 of the same record.",
)
def next_relationships(neo4j: Neo4jResource, paths: PipelinePaths) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    with timed(metadata):
        result = loading.sync_next(neo4j.get_driver(), neo4j.database, paths.layout)
    return dg.MaterializeResult(metadata=_sync_metadata([result], metadata))


@dg.asset(
    group_name=GROUP,
    kinds=GRAPH_KINDS,
    owners=OWNERS,
    deps=[graph_nodes],
    retry_policy=NEO4J_RETRY,
    description=(
        "`Includes`: the first chunk of a record's nearest ancestor (by `distance`) -> the "
        "record's first chunk; ancestors known only from `ancestors[]` are stub nodes."
    ),
)
def includes_relationships(neo4j: Neo4jResource, paths: PipelinePaths) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    with timed(metadata):
        result = loading.sync_includes(neo4j.get_driver(), neo4j.database, paths.layout)
    return dg.MaterializeResult(metadata=_sync_metadata([result], metadata))


@dg.asset(
    group_name=GROUP,
    kinds=GRAPH_KINDS,
    owners=OWNERS,
    deps=[graph_nodes],
    retry_policy=NEO4J_RETRY,
    description=(
        "The eleven naId-authority relationship types (broaderTerm, contributor, creator, "
        "subject, donor, narrowerTerm, organizationalReference, relatedTerm, jurisdiction, "
        "organizationName, personalReference), authority first chunk -> record first chunk; a "
        "creator naId that is a nested organizationNames[] entry resolves to its organization."
    ),
)
def authority_relationships(neo4j: Neo4jResource, paths: PipelinePaths) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    with timed(metadata):
        results = loading.sync_authorities(neo4j.get_driver(), neo4j.database, paths.layout)
    return dg.MaterializeResult(metadata=_sync_metadata(results, metadata))
