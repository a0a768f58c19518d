"""The graph_communities asset: hierarchical Leiden communities over the record graph (the
GraphRAG half starts here)."""

from collections.abc import Mapping
from typing import Any

import dagster as dg

from graph_assets.common import (
    GRAPH_KINDS,
    RECORDS_TOUCHED,
    neo4j_writer_asset,
    table,
    timed,
)
from graph_assets.entity_extraction import entity_extraction
from graph_assets.entity_mentions import entity_mentions
from graph_assets.partitions import is_full_rebuild
from graph_assets.relationships import authority_relationships, includes_relationships
from nara_kg.build import communities as build_communities
from nara_kg.build.sync_state import written_by_another
from resources import Neo4jResource, PipelinePaths


def _bucket_bound(bucket: str) -> float:
    """The size a bucket ("<= 10", "> 1000") goes up to: buckets sort by it, not as text."""
    number = float(bucket.split()[-1])
    return number + 0.5 if bucket.startswith(">") else number


def size_distribution_rows(distribution: Mapping[str, int]) -> list[dict[str, Any]]:
    """One row per size bucket of the finest communities, smallest sizes first."""
    return [
        {"size": bucket, "count": distribution[bucket]}
        for bucket in sorted(distribution, key=_bucket_bound)
    ]


@neo4j_writer_asset(
    kinds=GRAPH_KINDS | {"gds"},
    deps=[includes_relationships, authority_relationships, entity_mentions, entity_extraction],
    description=(
        "Hierarchical Leiden (GDS, through the graphdatascience client) on an undirected "
        "projection of first chunks with Includes + authority relationships; fixed randomSeed "
        "and concurrency 1, so the same graph gives the same communities. Level 0 = finest. "
        "`(:Community {id: '<level>-<communityId>', level, size})`; members "
        "`-[:IN_COMMUNITY]->` their finest community, each community `-[:IN_COMMUNITY]->` its "
        "parent. Singletons get "
        "no Community node; components are clustered separately by construction. Ids are "
        "canonical (level and the smallest member's naId). The projection's digest "
        "(projection_digest) is a sum of its records' digests: only the records the graph "
        "writers touched since the last run are read again (records_streamed), the whole "
        "projection on the first run, the full rebuild or state that does not match "
        "(whole_stream_because). When it and the graph's communities are as the last run "
        "left them, Leiden is skipped (leiden_skipped). Each record read is "
        "compared with the last stream's, and the records whose report inputs "
        "changed are queued for community_reports (report_records_changed). With "
        "NARA_KG_LEIDEN_SEEDED=1 a changed "
        "projection starts Leiden from the last run's level-0 communities (seeded, GDS "
        "seedProperty), so regions the change did not reach keep their members; off by "
        "default, as seeded communities depend on past builds. The full rebuild neither skips "
        "nor seeds. After a Leiden run, the memberships it found are compared with the "
        "graph's: only the communities whose members changed are read back "
        "(memberships_read) when the graph is as the last run left it, every membership "
        "otherwise; membership_added and membership_removed count what was written. Core: "
        "nara_kg.build.communities.detect_communities."
    ),
)
def graph_communities(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource, paths: PipelinePaths
) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    driver = neo4j.get_driver()
    with timed(metadata):
        result = build_communities.detect_communities(
            driver,
            neo4j.database,
            neo4j.get_gds,
            state_path=paths.layout.leiden_state,
            force=is_full_rebuild(context),
            seed=paths.leiden_seeded,
            report_scope_path=paths.layout.report_scope,
            changes_path=paths.layout.projection_changes,
            written_elsewhere=written_by_another(driver, neo4j.database, paths.layout),
        )
    if not result.leiden_ran:
        context.log.info("projection and communities unchanged since the last run: Leiden skipped")
    elif result.seeded:
        context.log.info(f"Leiden seeded: {result.communities_changed} communities changed")
    context.log.info(
        f"{sum(result.communities_per_level.values())} communities over {result.levels} levels "
        f"(projection: {result.nodes} nodes, {result.relationships} relationships)"
    )
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "leiden_ran": result.leiden_ran,
            "leiden_skipped": not result.leiden_ran,
            "seeded": result.seeded,
            "projection_digest": result.projection_digest,
            "communities_changed": result.communities_changed,
            RECORDS_TOUCHED: result.records_touched,
            "report_records_changed": result.report_records_changed,
            "records_streamed": result.records_streamed,
            "whole_stream_because": result.whole_stream_because or "",
            "projected_nodes": result.nodes,
            "projected_relationships": result.relationships,
            "levels": result.levels,
            "communities": sum(result.communities_per_level.values()),
            "communities_per_level": table(
                [
                    {
                        "level": level,
                        "communities": count,
                        "modularity": round(result.modularities[level], 4)
                        if level < len(result.modularities)
                        else "",
                    }
                    for level, count in result.communities_per_level.items()
                ]
            ),
            "level_0_size_distribution": table(
                size_distribution_rows(result.size_distribution), limit=1_000
            ),
            "records_in_a_community": result.members_with_community,
            "membership_added": result.write["added"],
            "membership_removed": result.write["removed"],
            "memberships_read": result.write["memberships_read"],
        }
    )
