"""The record_selection asset: one row per naId across every parsed file, the organization
alias table and the rejects table of all files (graph-wide, once over every partition)."""

from typing import Any

import dagster as dg

from graph_assets.common import (
    GRAPH_AUTOMATION,
    GRAPH_GROUP,
    OWNERS,
    RECORDS_TOUCHED,
    counts_table,
    table,
    timed,
)
from graph_assets.file_stages import CHUNKS, PARSED_RECORDS
from graph_assets.partitions import is_full_rebuild
from nara_kg.ingest.inputs import SKIPPED_FILE
from nara_kg.ingest.stages.record_selection import select_live_records
from resources import PipelinePaths


@dg.asset(
    group_name=GRAPH_GROUP,
    kinds={"python", "parquet"},
    owners=OWNERS,
    # After the chunks too: its checks cover the chunks the graph will be built from.
    deps=[PARSED_RECORDS, CHUNKS],
    automation_condition=GRAPH_AUTOMATION,
    description=(
        "Graph-wide: one row per naId across every parsed file (full beats stub, most complete "
        "copy wins, ties to the first file and line); the alias table of nested organization "
        "names; the rejects table of all files. Files gone from the input lose their parts "
        "here, so their records leave the graph. Reads only the files whose parsed part "
        "changed since its last complete run (every file on a full rebuild). Core: "
        "nara_kg.ingest.stages.record_selection.select_live_records."
    ),
)
def record_selection(
    context: dg.AssetExecutionContext, paths: PipelinePaths
) -> dg.MaterializeResult:
    layout = paths.layout
    metadata: dict[str, Any] = {}
    with timed(metadata):
        result = select_live_records(
            paths.data_path,
            layout,
            follow_external_links=paths.follow_external_links,
            full=is_full_rebuild(context),
            log=context.log.info,
        )
    if result.rejected:
        context.log.warning(
            f"{result.rejected} of {result.lines} lines rejected ({result.reject_share:.2%}); "
            f"see {layout.rejects}"
        )
    changes, update = result.changes, result.update
    read = len(update.files_read) if update else 0
    return dg.MaterializeResult(
        metadata={
            **metadata,
            # Parsed parts the reduce read (the changed files'; every file's when whole) and
            # those it did not open.
            "files_read": read,
            "files_not_read": len(result.per_file) - read,
            "selection_mode": "whole" if update is None or update.whole else "changes",
            "rows_read": update.rows_read if update else 0,
            "naids_decided": update.na_ids_decided if update else 0,
            # Rows of the selection store compared to decide them: a naId's stubs (one per
            # file naming it) are read only when no full record of it exists.
            "candidate_rows_compared": update.candidates_compared if update else 0,
            RECORDS_TOUCHED: changes.records_read if changes else 0,
            "records_added": len(changes.added) if changes else 0,
            "records_changed": len(changes.changed) if changes else 0,
            "records_removed": len(changes.removed) if changes else 0,
            "files_changed": len(changes.files) if changes else 0,
            "changes_relative_to_last": bool(changes and changes.base),
            "files": len(result.per_file),
            "files_not_parsed_yet": len(result.files_pending),
            "files_skipped": result.reject_reasons.get(SKIPPED_FILE, 0),
            "files_removed": result.parts_removed,
            "records": result.records,
            "records_chosen": result.chosen_records,
            "stubs_chosen": result.chosen_stubs,
            "lines": result.lines,
            "lines_rejected": result.rejected,
            "reject_share": dg.MetadataValue.float(round(result.reject_share, 6)),
            "records_by_type": counts_table(result.by_type),
            "reject_reasons": counts_table(result.reject_reasons, key="reason"),
            "duplicates": table(
                [
                    {
                        **d,
                        "dropped": ", ".join(d["dropped"]),
                        "dropped_completeness": ", ".join(map(str, d["dropped_completeness"])),
                    }
                    for d in result.duplicates
                ]
            ),
            "duplicate_naids": len(result.duplicates),
            "organization_name_aliases": result.aliases,
            "per_file": table(result.per_file, limit=100),
            "not_parsed_yet": table([{"file": rel} for rel in result.files_pending]),
            "rejects_path": dg.MetadataValue.path(str(layout.rejects)),
        }
    )
