"""The knowledge-graph assets, from raw JSONL to the evaluation of retrieval."""

import dagster as dg

from graph_assets.communities import community_reports, graph_communities
from graph_assets.evaluation import retrieval_evaluation
from graph_assets.files import chunks, parsed_records, raw_jsonl
from graph_assets.graph import (
    authority_relationships,
    graph_nodes,
    includes_relationships,
    next_relationships,
    text_embeddings,
    vector_index,
)

KNOWLEDGE_GRAPH_ASSETS = [
    raw_jsonl,
    parsed_records,
    chunks,
    graph_nodes,
    text_embeddings,
    vector_index,
    next_relationships,
    includes_relationships,
    authority_relationships,
]
GRAPHRAG_ASSETS = [graph_communities, community_reports]
ALL_ASSETS = [*KNOWLEDGE_GRAPH_ASSETS, *GRAPHRAG_ASSETS, retrieval_evaluation]

defs = dg.Definitions(assets=ALL_ASSETS)
