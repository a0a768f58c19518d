"""Data-quality checks (Great Expectations suites and graph checks) as Dagster asset checks.

Check names and which ones block downstream assets: :mod:`quality.names`. The reject-share
limit: run config `max_reject_share` of that check, else NARA_KG_MAX_REJECT_SHARE read when the
check runs, else 1% (:mod:`quality.config`). The checks need only the project's resources
(`paths`, `neo4j`, `embedding_model`).
"""

import dagster as dg

from quality.checks import ALL_CHECKS, FILE_CHECKS, GRAPH_CHECKS, community_report_check

#: What callers that materialize assets in process include (e.g. `nara-kg build`).
ASSET_CHECKS = ALL_CHECKS

defs = dg.Definitions(asset_checks=ALL_CHECKS)

__all__ = [
    "ALL_CHECKS",
    "ASSET_CHECKS",
    "FILE_CHECKS",
    "GRAPH_CHECKS",
    "community_report_check",
    "defs",
]
