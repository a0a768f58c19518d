"""The graph_nodes asset: one Neo4j node per chunk of a chosen record, written by difference."""

from typing import Any

import dagster as dg

from graph_assets.common import (
    RECORDS_TOUCHED,
    counts_table,
    neo4j_writer_asset,
    timed,
)
from graph_assets.file_stages import CHUNKS
from graph_assets.partitions import is_full_rebuild
from graph_assets.record_selection import record_selection
from nara_kg.build import nodes as build_nodes
from resources import Neo4jResource, PipelinePaths


@neo4j_writer_asset(
    deps=[record_selection, CHUNKS],
    description=(
        "One node per chunk of a chosen record, labelled Chunk + its record type (+ "
        "recordWithText when its text is embedded) with the record's flattened properties; "
        "chunkId unique, naId indexed. Only new or changed chunks are written (UNWIND + "
        "MERGE); chunks gone from the input are deleted. After a change set from "
        "record_selection, only its records are read and written, and graph_counts are the "
        "last run's plus the difference (graph_counts_from). "
        "Core: nara_kg.build.nodes.sync_nodes."
    ),
)
def graph_nodes(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource, paths: PipelinePaths
) -> dg.MaterializeResult:
    driver = neo4j.get_driver()
    metadata: dict[str, Any] = {}
    with timed(metadata):
        result = build_nodes.sync_nodes(
            driver,
            neo4j.database,
            paths.layout,
            rewrite_all=is_full_rebuild(context),
            log=context.log.info,
        )
    return dg.MaterializeResult(
        metadata={
            **metadata,
            RECORDS_TOUCHED: result.records_touched,
            "chunks_desired": result.desired,
            "nodes_written": result.written,
            "nodes_unchanged": result.unchanged,
            "existing_state_from": result.existing_from,
            "nodes_deleted": result.deleted,
            "records_written": result.records_written,
            "records_removed": result.records_removed,
            "written_by_type": counts_table(result.written_by_type),
            "graph_counts": counts_table(result.counts, key="type.measure"),
            "graph_counts_from": result.counts_from,
        }
    )
