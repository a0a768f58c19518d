"""Graph-wide stages, once over every file: the record selection, then nodes, embeddings,
indexes and relationships in Neo4j (written by difference; core: :mod:`nara_kg.build`)."""

from typing import Any

import dagster as dg

from graph_assets.common import (
    GRAPH_KINDS,
    GROUP,
    NEO4J_RETRY,
    NEO4J_WRITES_POOL,
    OWNERS,
    counts_table,
    table,
    timed,
)
from graph_assets.files import CHUNK_EMBEDDINGS, CHUNKS, PARSED_RECORDS
from graph_assets.partitions import is_full_rebuild
from nara_kg.build import embeddings as build_embeddings
from nara_kg.build import nodes as build_nodes
from nara_kg.build import relationships as build_relationships
from nara_kg.graph import indexes, nodes
from nara_kg.graph.relationships import SyncResult
from nara_kg.ingest import stages as pipeline
from nara_kg.ingest.inputs import SKIPPED_FILE
from resources import EmbeddingModel, Neo4jResource, PipelinePaths

#: Graph-wide steps follow their inputs: once no file partition is in flight and one was
#: updated, they run (through the automation sensor, off until switched on in the UI).
GRAPH_AUTOMATION = dg.AutomationCondition.eager()


@dg.asset(
    group_name=GROUP,
    kinds={"python", "parquet"},
    owners=OWNERS,
    # After the chunks too: its checks cover the chunks the graph will be built from.
    deps=[PARSED_RECORDS, CHUNKS],
    automation_condition=GRAPH_AUTOMATION,
    description=(
        "Graph-wide: one row per naId across every parsed file (full beats stub, most complete "
        "copy wins, ties to the first file and line); the alias table of nested organization "
        "names; the rejects table of all files. Files gone from the input lose their parts "
        "here, so their records leave the graph. Core: nara_kg.ingest.stages.select_live_records."
    ),
)
def record_selection(
    context: dg.AssetExecutionContext, paths: PipelinePaths
) -> dg.MaterializeResult:
    layout = paths.layout
    metadata: dict[str, Any] = {}
    with timed(metadata):
        result = pipeline.select_live_records(
            paths.data_path,
            layout,
            follow_external_links=paths.follow_external_links,
            log=context.log.info,
        )
    if result.rejected:
        context.log.warning(
            f"{result.rejected} of {result.lines} lines rejected ({result.reject_share:.2%}); "
            f"see {layout.rejects}"
        )
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "files": len(result.per_file),
            "files_not_parsed_yet": len(result.files_pending),
            "files_skipped": result.reject_reasons.get(SKIPPED_FILE, 0),
            "files_removed": result.parts_removed,
            "records": result.records,
            "records_chosen": result.chosen_records,
            "stubs_chosen": result.chosen_stubs,
            "lines": result.lines,
            "lines_rejected": result.rejected,
            "reject_share": dg.MetadataValue.float(round(result.reject_share, 6)),
            "records_by_type": counts_table(result.by_type),
            "reject_reasons": counts_table(result.reject_reasons, key="reason"),
            "duplicates": table(
                [
                    {
                        **d,
                        "dropped": ", ".join(d["dropped"]),
                        "dropped_completeness": ", ".join(map(str, d["dropped_completeness"])),
                    }
                    for d in result.duplicates
                ]
            ),
            "duplicate_naids": len(result.duplicates),
            "organization_name_aliases": result.aliases,
            "per_file": table(result.per_file, limit=100),
            "not_parsed_yet": table([{"file": rel} for rel in result.files_pending]),
            "rejects_path": dg.MetadataValue.path(str(layout.rejects)),
        }
    )


@dg.asset(
    group_name=GROUP,
    kinds=GRAPH_KINDS,
    owners=OWNERS,
    deps=[record_selection, CHUNKS],
    retry_policy=NEO4J_RETRY,
    pool=NEO4J_WRITES_POOL,
    automation_condition=GRAPH_AUTOMATION,
    description=(
        "One node per chunk of a chosen record, labelled Chunk + its record type (+ "
        "recordWithText when its text is embedded), seed 000's properties; chunkId unique, "
        "naId indexed. Only new or changed chunks are written (UNWIND + MERGE); chunks gone "
        "from the input are deleted. Core: nara_kg.build.build_nodes.sync_nodes."
    ),
)
def graph_nodes(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource, paths: PipelinePaths
) -> dg.MaterializeResult:
    driver = neo4j.get_driver()
    metadata: dict[str, Any] = {}
    with timed(metadata):
        result = build_nodes.sync_nodes(
            driver,
            neo4j.database,
            paths.layout,
            rewrite_all=is_full_rebuild(context),
            log=context.log.info,
        )
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
    deps=[graph_nodes, CHUNK_EMBEDDINGS],
    retry_policy=NEO4J_RETRY,
    pool=NEO4J_WRITES_POOL,
    automation_condition=GRAPH_AUTOMATION,
    description=(
        "Vectors in `textEmbedding` for every chunk whose text or model changed since its last "
        "embedding: taken from the per-file chunk_embeddings parts; the few no part holds "
        "(chosen stubs, whose titles many files share) are encoded here. Core: "
        "nara_kg.build.build_embeddings.embed_pending."
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


@dg.asset(
    group_name=GROUP,
    kinds=GRAPH_KINDS,
    owners=OWNERS,
    deps=[text_embeddings],
    retry_policy=NEO4J_RETRY,
    pool=NEO4J_WRITES_POOL,
    automation_condition=GRAPH_AUTOMATION,
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


def _sync_metadata(results: list[SyncResult], metadata: dict[str, Any]) -> dict[str, Any]:
    return {
        **metadata,
        "relationships": sum(r.desired for r in results),
        "added": sum(r.added for r in results),
        "removed": sum(r.removed for r in results),
        "by_type": table(
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
    pool=NEO4J_WRITES_POOL,
    automation_condition=GRAPH_AUTOMATION,
    description="`Next`: chunk k -> chunk k+1 of the same record.",
)
def next_relationships(neo4j: Neo4jResource, paths: PipelinePaths) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    with timed(metadata):
        result = build_relationships.sync_next(neo4j.get_driver(), neo4j.database, paths.layout)
    return dg.MaterializeResult(metadata=_sync_metadata([result], metadata))


@dg.asset(
    group_name=GROUP,
    kinds=GRAPH_KINDS,
    owners=OWNERS,
    deps=[graph_nodes],
    retry_policy=NEO4J_RETRY,
    pool=NEO4J_WRITES_POOL,
    automation_condition=GRAPH_AUTOMATION,
    description=(
        "`Includes`: the first chunk of a record's nearest ancestor (by `distance`) -> the "
        "record's first chunk; ancestors known only from `ancestors[]` are stub nodes."
    ),
)
def includes_relationships(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource, paths: PipelinePaths
) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    with timed(metadata):
        result, cycles = build_relationships.sync_includes(
            neo4j.get_driver(), neo4j.database, paths.layout
        )
    for cycle in cycles:
        context.log.warning(
            f"ancestor cycle {' -> '.join(map(str, cycle))} -> {cycle[0]}: naId {cycle[0]} "
            "lost its parent link (the smallest naId of a cycle becomes its root)"
        )
    return dg.MaterializeResult(
        metadata={
            **_sync_metadata([result], metadata),
            "ancestor_cycles_broken": len(cycles),
            "ancestor_cycles": table(
                [{"cycle": " -> ".join(map(str, c)), "root": c[0]} for c in cycles]
            ),
        }
    )


@dg.asset(
    group_name=GROUP,
    kinds=GRAPH_KINDS,
    owners=OWNERS,
    deps=[graph_nodes],
    retry_policy=NEO4J_RETRY,
    pool=NEO4J_WRITES_POOL,
    automation_condition=GRAPH_AUTOMATION,
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
        results = build_relationships.sync_authorities(
            neo4j.get_driver(), neo4j.database, paths.layout
        )
    return dg.MaterializeResult(metadata=_sync_metadata(results, metadata))
