"""GraphRAG half: Leiden communities and their reports."""

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
from graph_assets.graph import (
    GRAPH_AUTOMATION,
    authority_relationships,
    includes_relationships,
    text_embeddings,
)
from nara_kg.build import communities as build_communities
from nara_kg.generation import generate as report_generation
from resources import EmbeddingModel, LLMResource, Neo4jResource, PipelinePaths


@dg.asset(
    group_name=GROUP,
    kinds=GRAPH_KINDS | {"gds"},
    owners=OWNERS,
    deps=[includes_relationships, authority_relationships],
    retry_policy=NEO4J_RETRY,
    pool=NEO4J_WRITES_POOL,
    automation_condition=GRAPH_AUTOMATION,
    description=(
        "Hierarchical Leiden (GDS, through the graphdatascience client) on an undirected "
        "projection of first chunks with Includes + authority relationships; fixed randomSeed "
        "and concurrency 1, so the same graph gives the same communities. Level 0 = finest. "
        "(:Community {id: '<level>-<communityId>', level, size}); members -[:IN_COMMUNITY]-> "
        "their finest community, each community -[:IN_COMMUNITY]-> its parent. Singletons get "
        "no Community node; components are clustered separately by construction."
    ),
)
def graph_communities(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource
) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    with timed(metadata):
        result = build_communities.detect_communities(
            neo4j.get_driver(), neo4j.database, neo4j.get_gds()
        )
    context.log.info(
        f"{sum(result.communities_per_level.values())} communities over {result.levels} levels "
        f"(projection: {result.nodes} nodes, {result.relationships} relationships)"
    )
    return dg.MaterializeResult(
        metadata={
            **metadata,
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
            "level_0_size_distribution": counts_table(result.size_distribution, key="size"),
            "records_in_a_community": result.members_with_community,
            "membership_added": result.write["added"],
            "membership_removed": result.write["removed"],
        }
    )


REPORT_TOKEN_BUDGET = 1_200


@dg.asset(
    group_name=GROUP,
    kinds={"python", "neo4j", "llm"},
    owners=OWNERS,
    deps=[graph_communities, text_embeddings],
    retry_policy=NEO4J_RETRY,
    pool=NEO4J_WRITES_POOL,
    automation_condition=GRAPH_AUTOMATION,
    description=(
        "One report per community, finest level first (GraphRAG): members' titles, excerpts "
        "and relationships ranked by degree within a token budget; an over-budget community "
        "uses its sub-communities' reports, largest first; a community with the same members "
        "as its only sub-community takes that report. JSON {title, summary, rating, "
        "rating_explanation, findings} on the Community node, with an embedding of title + "
        "summary (vector index community_summaries). Generations are cached by prompt + model "
        "+ parameters: an unchanged community is never regenerated."
    ),
)
def community_reports(
    context: dg.AssetExecutionContext,
    neo4j: Neo4jResource,
    llm: LLMResource,
    embedding_model: EmbeddingModel,
    paths: PipelinePaths,
) -> dg.MaterializeResult:
    from nara_kg.generation.llm import GenerationCache, describe

    generator = llm.get_llm()
    paths.llm_cache_path.parent.mkdir(parents=True, exist_ok=True)
    metadata: dict[str, Any] = {}
    with GenerationCache(paths.llm_cache_path) as cache, timed(metadata):
        result = report_generation.generate_community_reports(
            neo4j.get_driver(),
            neo4j.database,
            generator,
            cache,
            embedding_model.get_embedder(),
            token_budget=REPORT_TOKEN_BUDGET,
            log=context.log.info,
        )
    context.log.info(
        f"{result.communities} reports: {result.generated} generated, {result.cached} cached, "
        f"{result.copied_from_sub_community} copied from an identical sub-community"
    )
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "generator": describe(generator),
            "communities": result.communities,
            "generated": result.generated,
            "cached": result.cached,
            "copied_from_sub_community": result.copied_from_sub_community,
            "used_sub_reports": result.used_sub_reports,
            "truncated_contexts": result.truncated,
            "summaries_embedded": result.summaries_embedded,
            "summaries_encoded": result.summaries_encoded,
            "reports_per_level": counts_table(
                {str(level): n for level, n in sorted(result.per_level.items())}, key="level"
            ),
            "preview": table(result.preview),
        }
    )
