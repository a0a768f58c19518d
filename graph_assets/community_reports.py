"""The community_reports asset: one GraphRAG report per community, with an embedding of its
summary."""

from typing import Any

import dagster as dg

from graph_assets.common import (
    RECORDS_TOUCHED,
    counts_table,
    neo4j_writer_asset,
    table,
    timed,
)
from graph_assets.graph_communities import graph_communities
from graph_assets.partitions import is_full_rebuild
from graph_assets.text_embeddings import text_embeddings
from nara_kg.generation import generate as report_generation
from nara_kg.generation.report_order import TREE_GROUP_MEMBERS
from nara_kg.ingest.stages.common import read_json
from resources import EmbeddingModel, LLMResource, Neo4jResource, PipelinePaths

#: Most tokens of context (members, excerpts, relationships) in one community's report prompt.
REPORT_TOKEN_BUDGET = 1_200


@neo4j_writer_asset(
    kinds={"python", "neo4j", "llm"},
    deps=[graph_communities, text_embeddings],
    description=(
        "One report per community, finest level first (GraphRAG), one group of whole "
        f"community trees at a time (at most {TREE_GROUP_MEMBERS:,} records unless one tree "
        "holds more; each group's reports written when it is done, and its rows let go of): "
        "members' titles, excerpts and relationships ranked by degree within a token "
        "budget; an over-budget community uses its sub-communities' reports, largest first; "
        "a community with the same members "
        "as its only sub-community takes that report; a community whose inputs (members, "
        "relationships, mentions, sub-reports, generator, code) are as its node recorded keeps "
        "its report (unchanged_inputs), except in the full rebuild; when the digest of every "
        "report's sources (graph_communities' projection and row digests, the communities, "
        "the generator) is as the last run left it, no community is read (reports_skipped); "
        "otherwise only the communities holding a record whose row or edges changed since its "
        "last complete run (graph_communities queues them), those with other members, and "
        "their parents are looked at (communities_in_scope, scoped_by_change), with the mention "
        "totals of their sub-communities outside the run taken from the report scope's store, "
        "and so the rows and relationships of their members that are not queued "
        "(members_in_scope: all; records_touched: those read from the graph; "
        "member_texts_read: of those, the ones whose rows changed, read with their text; "
        "member_ids_composed: communities whose members are their sub-communities' together, "
        "so not asked of the graph). "
        "JSON {title, summary, rating, rating_explanation, findings} on the Community node, "
        "with an embedding of title + "
        "summary (vector index community_summaries). Generations are cached by prompt + model "
        "+ parameters: an unchanged community is never regenerated. A model's reply whose JSON "
        "does not parse is repaired (json-repair) or, failing that, replaced by the extractive "
        "report (reports_repaired, reports_replaced). Core: "
        "nara_kg.generation.generate.generate_community_reports."
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
            token_counts_path=paths.layout.report_token_counts,
            force=is_full_rebuild(context),
            state_path=paths.layout.report_state,
            leiden_state_path=paths.layout.leiden_state,
            scope_path=paths.layout.report_scope,
        )
    leiden = read_json(paths.layout.leiden_state) or {}
    last_leiden = leiden.get("last_run", {})
    if result.skipped:
        context.log.info("the sources of every report are unchanged: no context rebuilt")
    context.log.info(
        f"{result.communities} reports: {result.generated} generated, {result.cached} cached, "
        f"{result.copied_from_sub_community} copied from an identical sub-community"
    )
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "generator": describe(generator),
            "communities": result.communities,
            "reports_skipped": result.skipped,
            "leiden_skipped": bool(last_leiden.get("leiden_skipped", False)),
            "seeded": bool(last_leiden.get("seeded", False)),
            "projection_digest": str(leiden.get("input", "")),
            "communities_changed": int(last_leiden.get("communities_changed", 0)),
            "contexts_rebuilt": result.generated + result.cached,
            "communities_in_scope": result.communities_in_scope,
            "scoped_by_change": result.scoped,
            "all_communities_because": result.whole_because,
            "reports_regenerated": result.generated,
            RECORDS_TOUCHED: result.records_touched,
            "member_texts_read": result.member_texts_read,
            "members_in_scope": result.members_in_scope,
            "member_ids_composed": result.member_ids_composed,
            "generated": result.generated,
            "cached": result.cached,
            "copied_from_sub_community": result.copied_from_sub_community,
            "unchanged_inputs": result.unchanged_inputs,
            "used_sub_reports": result.used_sub_reports,
            "truncated_contexts": result.truncated,
            "summaries_embedded": result.summaries_embedded,
            "summaries_encoded": result.summaries_encoded,
            "summaries_encoded_early": result.summaries_encoded_early,
            "token_counts_reused": result.token_counts_reused,
            "token_counts_new": result.token_counts_new,
            "reports_repaired": result.reports_repaired,
            "reports_replaced": result.reports_replaced,
            "reports_per_level": counts_table(
                {str(level): n for level, n in sorted(result.per_level.items())}, key="level"
            ),
            "preview": table(result.preview),
        }
    )
