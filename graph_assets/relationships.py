"""The relationship assets, each synchronized with Neo4j by difference: next_relationships
(chunk to next chunk of a record), includes_relationships (the record hierarchy) and
authority_relationships (authority records to the records that cite them)."""

from typing import Any

import dagster as dg

from graph_assets.common import (
    RECORDS_TOUCHED,
    neo4j_writer_asset,
    table,
    timed,
)
from graph_assets.graph_nodes import graph_nodes
from graph_assets.partitions import is_full_rebuild
from nara_kg.build import relationships as build_relationships
from nara_kg.build.edge_sync import SyncResult
from resources import Neo4jResource, PipelinePaths


def _sync_metadata(results: list[SyncResult], metadata: dict[str, Any]) -> dict[str, Any]:
    return {
        **metadata,
        # The types of one step read the same records: the most any type touched.
        RECORDS_TOUCHED: max((r.records_touched for r in results), default=0),
        "relationships": sum(r.desired for r in results),
        "added": sum(r.added for r in results),
        "removed": sum(r.removed for r in results),
        "existing_state_from": ", ".join(sorted({r.existing_from for r in results})),
        "by_type": table(
            [
                {"type": r.relationship, "total": r.desired, "added": r.added, "removed": r.removed}
                for r in results
            ]
        ),
    }


@neo4j_writer_asset(
    deps=[graph_nodes],
    description=(
        "`Next`: chunk k -> chunk k+1 of the same record. "
        "Core: nara_kg.build.relationships.sync_next."
    ),
)
def next_relationships(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource, paths: PipelinePaths
) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    with timed(metadata):
        result = build_relationships.sync_next(
            neo4j.get_driver(),
            neo4j.database,
            paths.layout,
            trust_snapshot=not is_full_rebuild(context),
        )
    return dg.MaterializeResult(metadata=_sync_metadata([result], metadata))


@neo4j_writer_asset(
    deps=[graph_nodes],
    description=(
        "`Includes`: the first chunk of a record's nearest ancestor (by `distance`) -> the "
        "record's first chunk; ancestors known only from `ancestors[]` are stub nodes. "
        "Core: nara_kg.build.relationships.sync_includes."
    ),
)
def includes_relationships(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource, paths: PipelinePaths
) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    with timed(metadata):
        result, cycles = build_relationships.sync_includes(
            neo4j.get_driver(),
            neo4j.database,
            paths.layout,
            trust_snapshot=not is_full_rebuild(context),
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


@neo4j_writer_asset(
    deps=[graph_nodes],
    description=(
        "The eleven naId-authority relationship types (broaderTerm, contributor, creator, "
        "subject, donor, narrowerTerm, organizationalReference, relatedTerm, jurisdiction, "
        "organizationName, personalReference), authority first chunk -> record first chunk; a "
        "creator naId that is a nested organizationNames[] entry resolves to its organization. "
        "Core: nara_kg.build.relationships.sync_authorities."
    ),
)
def authority_relationships(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource, paths: PipelinePaths
) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    with timed(metadata):
        results = build_relationships.sync_authorities(
            neo4j.get_driver(),
            neo4j.database,
            paths.layout,
            trust_snapshot=not is_full_rebuild(context),
        )
    return dg.MaterializeResult(metadata=_sync_metadata(results, metadata))
