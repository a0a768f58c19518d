"""The entity_extraction asset: entities and relations an LLM extracts from chunk text, resolved
against the authority file; off (writes nothing) when no LLM is configured."""

from typing import Any

import dagster as dg

from graph_assets.common import counts_table, neo4j_writer_asset, timed
from graph_assets.entity_mentions import entity_mentions
from resources import EmbeddingModel, LLMResource, Neo4jResource, PipelinePaths


@neo4j_writer_asset(
    kinds={"python", "neo4j", "llm"},
    deps=[entity_mentions],
    description=(
        "LLM extraction (GraphRAG prompt with gleaning) of entities (person, organization, geo, "
        "event, topic) and relations from description chunks; each entity resolved against the "
        "authority file (exact name, normalized surface form, then heading embedding "
        "similarity), else an `Entity` node keyed by normalized name and type. Writes "
        "`RELATED {description, weight}` and `MENTIONED_IN {source: 'llm'}` by difference; "
        "completions cached by prompt + model. Off by default: with the extractive backend it "
        "writes nothing. Core: nara_kg.build.extraction.extract_entities."
    ),
)
def entity_extraction(
    context: dg.AssetExecutionContext,
    neo4j: Neo4jResource,
    llm: LLMResource,
    embedding_model: EmbeddingModel,
    paths: PipelinePaths,
) -> dg.MaterializeResult:
    from nara_kg.build import extraction
    from nara_kg.generation.llm import GenerationCache, is_extractive

    generator = llm.get_llm()
    if is_extractive(generator):
        context.log.info(extraction.SKIPPED_NO_LLM)
        return dg.MaterializeResult(metadata={"seconds": 0.0, "skipped": extraction.SKIPPED_NO_LLM})
    paths.llm_cache_path.parent.mkdir(parents=True, exist_ok=True)
    metadata: dict[str, Any] = {}
    embedder = embedding_model.get_embedder()
    with GenerationCache(paths.llm_cache_path) as cache, timed(metadata):
        result = extraction.extract_entities(
            neo4j.get_driver(),
            neo4j.database,
            paths.layout,
            generator,
            cache,
            embedder.encode,
            workers=llm.max_concurrency,
            log=context.log.info,
        )
    sync = result.sync
    context.log.info(
        f"{result.chunks_sent} chunks sent ({result.cached}/{result.completions} completions "
        f"cached); {sum(result.resolved_by_step.values())} resolved to authorities, "
        f"{result.new_entities} new"
    )
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "chunks_sent": result.chunks_sent,
            "completions": result.completions,
            "completions_cached": result.cached,
            "entities_by_type": counts_table(dict(result.entities_by_type)),
            "resolved_by_step": counts_table(dict(result.resolved_by_step)),
            "resolved_to_authorities": sum(result.resolved_by_step.values()),
            "new_entity_mentions": result.new_entities,
            "entity_nodes": sync.entities if sync else 0,
            "relations": result.relations,
            "related_relationships": sync.relations if sync else 0,
            "malformed_lines": result.malformed,
            "written": sync.written if sync else 0,
            "removed": sync.removed if sync else 0,
        }
    )
