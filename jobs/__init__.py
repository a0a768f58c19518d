"""Jobs: the full rebuild and the evaluation."""

import dagster as dg

from graph_assets import ALL_ASSETS
from graph_assets.evaluation import retrieval_evaluation

KG_FULL_REBUILD = "kg_full_rebuild"
KG_EVALUATION = "kg_evaluation"

kg_full_rebuild = dg.define_asset_job(
    KG_FULL_REBUILD,
    selection=dg.AssetSelection.assets(*ALL_ASSETS),
    description="Every asset, from the input files to the retrieval evaluation.",
)
kg_evaluation = dg.define_asset_job(
    KG_EVALUATION,
    selection=dg.AssetSelection.assets(retrieval_evaluation),
    description="Re-run the retrieval evaluation over the current graph.",
)

defs = dg.Definitions(jobs=[kg_full_rebuild, kg_evaluation])
