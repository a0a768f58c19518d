"""Jobs: the full rebuild, the incremental rebuild, and the evaluation.

Every asset skips the work its inputs did not change (files by content hash, nodes and
relationships by difference, embeddings by text hash), so the two rebuild jobs converge to the
same graph; the full rebuild also re-parses every file and re-evaluates retrieval.
"""

import dagster as dg

from graph_assets import ALL_ASSETS
from graph_assets.evaluation import retrieval_evaluation

KG_FULL_REBUILD = "kg_full_rebuild"
KG_INCREMENTAL = "kg_incremental"
KG_EVALUATION = "kg_evaluation"

kg_full_rebuild = dg.define_asset_job(
    KG_FULL_REBUILD,
    selection=dg.AssetSelection.assets(*ALL_ASSETS),
    description="Every asset, from the input files to the retrieval evaluation.",
    tags={"nara_kg/rebuild": "full"},
)
kg_incremental = dg.define_asset_job(
    KG_INCREMENTAL,
    selection=dg.AssetSelection.assets(*ALL_ASSETS)
    - dg.AssetSelection.assets(retrieval_evaluation),
    description=(
        "What changed: new or changed files are parsed, changed chunks re-embedded, and nodes, "
        "relationships and communities rewritten by difference; records gone from the input "
        "leave the graph. Requested by the input-file sensor."
    ),
    tags={"nara_kg/rebuild": "incremental"},
)
kg_evaluation = dg.define_asset_job(
    KG_EVALUATION,
    selection=dg.AssetSelection.assets(retrieval_evaluation),
    description="Re-run the retrieval evaluation over the current graph.",
)

defs = dg.Definitions(jobs=[kg_full_rebuild, kg_incremental, kg_evaluation])
