"""The knowledge-graph assets, from raw JSONL to the evaluation of retrieval.

Each module is named after the asset it defines, so an asset's name in the Dagster UI is its
module here. Per-file stages (one partition per input file): :mod:`graph_assets.file_stages`
(the op of raw_jsonl, parsed_records, chunks and chunk_embeddings). Graph-wide stages (once,
downstream of every partition): :mod:`graph_assets.record_selection`,
:mod:`graph_assets.graph_nodes`, :mod:`graph_assets.text_embeddings`,
:mod:`graph_assets.vector_index`, :mod:`graph_assets.relationships` (next, includes and
authority relationships), :mod:`graph_assets.entity_mentions`,
:mod:`graph_assets.entity_extraction` (off without an LLM),
:mod:`graph_assets.graph_communities`,
:mod:`graph_assets.community_reports` and :mod:`graph_assets.retrieval_evaluation`. Shared
settings and metadata helpers: :mod:`graph_assets.common`; the partitions:
:mod:`graph_assets.partitions`. Each asset's description names the core function it calls.
"""

import datetime as dt
import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg

from graph_assets.community_reports import community_reports
from graph_assets.entity_extraction import entity_extraction
from graph_assets.entity_mentions import entity_mentions
from graph_assets.file_stages import FILE_ASSETS, FILE_SPECS, file_stages
from graph_assets.graph_communities import graph_communities
from graph_assets.graph_nodes import graph_nodes
from graph_assets.partitions import input_files
from graph_assets.record_selection import record_selection
from graph_assets.relationships import (
    authority_relationships,
    includes_relationships,
    next_relationships,
)
from graph_assets.retrieval_evaluation import retrieval_evaluation
from graph_assets.text_embeddings import text_embeddings
from graph_assets.vector_index import vector_index

GRAPH_WIDE_ASSETS = [
    record_selection,
    graph_nodes,
    text_embeddings,
    vector_index,
    next_relationships,
    includes_relationships,
    authority_relationships,
    entity_mentions,
    entity_extraction,
    graph_communities,
    community_reports,
]
ALL_ASSETS = [*FILE_ASSETS, *GRAPH_WIDE_ASSETS, retrieval_evaluation]

#: The metadata key of the UI's "Source code" link (what `dg.with_source_code_references` sets).
CODE_REFERENCES = "dagster/code_references"

#: How long after the nightly rebuild starts the graph-wide assets must be fresh.
REBUILD_WINDOW = dt.timedelta(hours=6)


def _nightly_freshness(cron: str, timezone: str) -> dg.FreshnessPolicy:
    """Fresh when materialized since the last scheduled rebuild, within the rebuild window."""
    minute, hour, *rest = cron.split()
    try:
        deadline_hour = (int(hour) + int(REBUILD_WINDOW.total_seconds() // 3600)) % 24
        deadline = " ".join([minute, str(deadline_hour), *rest])
    except ValueError:  # a cron without a fixed hour: the deadline is the schedule itself
        deadline = cron
    return dg.FreshnessPolicy.cron(
        deadline_cron=deadline, lower_bound_delta=REBUILD_WINDOW, timezone=timezone
    )


def code_reference(asset: dg.AssetsDefinition) -> dg.LocalFileCodeReference:
    """Where an asset's own function is: behind the project's wrapper (`failure_on_project_error`
    in graph_assets/common.py). `dg.with_source_code_references` takes the wrapper's file with the
    wrapped function's line (`inspect.getsourcelines` unwraps, `inspect.getsourcefile` does not),
    so the UI's link opened common.py."""
    compute: Any = asset.op.compute_fn
    fn = inspect.unwrap(getattr(compute, "decorated_fn", compute))
    source = inspect.getsourcefile(fn)
    if source is None:
        raise ValueError(f"no source file for the function of {asset.key.to_user_string()}")
    return dg.LocalFileCodeReference(
        file_path=str(Path(source).resolve()), line_number=inspect.getsourcelines(fn)[1]
    )


def _with_code_references(assets: Sequence[dg.AssetsDefinition]) -> list[dg.AssetsDefinition]:
    def referenced(asset: dg.AssetsDefinition) -> dg.AssetsDefinition:
        reference = dg.CodeReferencesMetadataValue(code_references=[code_reference(asset)])
        return asset.map_asset_specs(
            lambda spec: spec.replace_attributes(
                metadata={**spec.metadata, CODE_REFERENCES: reference}
            )
        )

    return [referenced(asset) for asset in assets]


def build_defs(cron: str, timezone: str) -> dg.Definitions:
    """The assets with code references, and freshness policies on the graph-wide ones that
    follow the nightly schedule (built when the code location loads, with its settings)."""
    policy = _nightly_freshness(cron, timezone)
    graph_wide = {asset.key for asset in GRAPH_WIDE_ASSETS}
    assets = dg.map_asset_specs(
        lambda spec: (
            spec.replace_attributes(freshness_policy=policy) if spec.key in graph_wide else spec
        ),
        ALL_ASSETS,
    )
    automation = dg.AutomationConditionSensorDefinition(
        "kg_graph_automation",
        target=dg.AssetSelection.assets(*GRAPH_WIDE_ASSETS),
        description=(
            "Runs the graph-wide assets once the file partitions they read have been updated "
            "and none is still running (each asset's AutomationCondition.eager())."
        ),
    )
    return dg.Definitions(assets=_with_code_references(assets), sensors=[automation])


__all__ = [
    "ALL_ASSETS",
    "FILE_ASSETS",
    "FILE_SPECS",
    "GRAPH_WIDE_ASSETS",
    "authority_relationships",
    "build_defs",
    "community_reports",
    "entity_extraction",
    "entity_mentions",
    "file_stages",
    "graph_communities",
    "graph_nodes",
    "includes_relationships",
    "input_files",
    "next_relationships",
    "record_selection",
    "retrieval_evaluation",
    "text_embeddings",
    "vector_index",
]
