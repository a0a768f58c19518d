"""What each partition of the per-file assets shows in the UI: its own file's figures and
previews, never the run's totals (those go on the run's log and, in a run without
partitions, on its one partition-less materialization)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dagster as dg

from graph_assets.common import counts_table, table
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.parsed_records import FileParseResult


def _seconds(value: float) -> dg.MetadataValue:
    return dg.MetadataValue.float(round(value, 3))


def raw_file_metadata(row: Mapping[str, Any], seconds: float) -> dict[str, Any]:
    return {
        "file": row["file"],
        "bytes": row["bytes"],
        "sha256": row["sha256"],
        "seconds": _seconds(seconds),
    }


def parsed_file_metadata(
    row: Mapping[str, Any],
    parsed: FileParseResult | None,
    seconds: float,
    *,
    layout: WorkLayout,
    file_id: str,
    max_body_chars: int,
) -> dict[str, Any]:
    lines, rejected = row["lines"], row["rejected"]
    cut = [
        {"naId": na_id, "line": line, "characters": length}
        for na_id, line, length in (parsed.cut if parsed else [])
    ]
    return {
        "file": row["file"],
        "parsed_now": row["parsed"],
        "lines": lines,
        "lines_reused": row["lines_reused"],
        "records": row["records"],
        "stubs": row["stubs"],
        "lines_rejected": rejected,
        "reject_share": dg.MetadataValue.float(round(rejected / lines if lines else 0.0, 6)),
        "records_by_type": counts_table(parsed.by_type if parsed else {}),
        "reject_reasons": counts_table(parsed.reject_reasons if parsed else {}, key="reason"),
        "records_body_cut": len(cut),
        "body_cut": table(cut),
        "max_body_chars": max_body_chars,
        "parquet_part": dg.MetadataValue.path(str(layout.parsed_part(file_id))),
        "seconds": _seconds(seconds),
    }


def chunk_file_metadata(
    row: Mapping[str, Any],
    stats: Mapping[str, Any] | None,
    preview: list[dict[str, Any]],
    seconds: float,
    *,
    layout: WorkLayout,
    file_id: str,
    token_limit: int,
) -> dict[str, Any]:
    stats = stats or {}
    return {
        "file": row["file"],
        "chunked_now": row["chunked"],
        "records": row["records"],
        "stubs": row["stubs"],
        "records_reused": row["records_reused"],
        "chunks": row["chunks"],
        "embedded_chunks": stats.get("embedded_chunks", 0),
        "multi_chunk_records": stats.get("multi_chunk_records", 0),
        "title_only_records": stats.get("title_only_records", 0),
        "max_tokens_seen": row["max_tokens"],
        "model_token_limit": token_limit,
        "records_by_type": counts_table(stats.get("by_type") or {}),
        "preview": table(preview),
        "parquet_part": dg.MetadataValue.path(str(layout.chunk_part(file_id))),
        "seconds": _seconds(seconds),
    }


def embedding_file_metadata(
    row: Mapping[str, Any],
    seconds: float,
    *,
    layout: WorkLayout,
    file_id: str,
    model_key: str,
) -> dict[str, Any]:
    return {
        "file": row["file"],
        "chunks": row["chunks"],
        "encoded": row["encoded"],
        "reused": row["reused"],
        "encoding_seconds": _seconds(row["encoding_seconds"]),
        "chunks_per_second": dg.MetadataValue.float(row["chunks_per_second"]),
        "model_key": model_key,
        "parquet_part": dg.MetadataValue.path(str(layout.vector_part(file_id))),
        "seconds": _seconds(seconds),
    }


#: Per-file flags and the file counts they add up to over a run.
_FILE_FLAGS = {
    "parsed_now": ("files_parsed", "files_skipped_unchanged"),
    "chunked_now": ("files_chunked", "files_reused_unchanged"),
}
#: Figures that are not sums over files.
_MAXIMA = ("max_tokens_seen", "model_token_limit", "max_body_chars")


def run_totals(per_file: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The totals of one asset over the partitions a build materialized (plain values, as
    :func:`graph_assets.common.plain_metadata` gives them): sums of the files' figures, the
    number of files, shares and rates recomputed from the sums."""
    totals: dict[str, Any] = {"files": len(per_file)}
    texts: dict[str, set[str]] = {}
    for metadata in per_file:
        for key, value in metadata.items():
            if key in _FILE_FLAGS:
                done, kept = _FILE_FLAGS[key]
                totals[done] = totals.get(done, 0) + (1 if value else 0)
                totals[kept] = totals.get(kept, 0) + (0 if value else 1)
            elif key in _MAXIMA:
                totals[key] = max(totals.get(key, 0), value)
            elif isinstance(value, bool) or key in ("reject_share", "chunks_per_second"):
                continue
            elif isinstance(value, int | float):
                totals[key] = totals.get(key, 0) + value
            elif isinstance(value, list):
                totals[key] = [*totals.get(key, []), *value]
            else:
                texts.setdefault(key, set()).add(str(value))
    # A text all files share (the model key) stands for the run; one that differs per file
    # (its name, its hash) would pass one file's value off as the run's.
    totals.update({key: next(iter(values)) for key, values in texts.items() if len(values) == 1})
    if "lines" in totals:
        lines = totals["lines"]
        totals["reject_share"] = round(totals.get("lines_rejected", 0) / lines, 6) if lines else 0.0
    if totals.get("encoding_seconds"):
        totals["chunks_per_second"] = round(totals["encoded"] / totals["encoding_seconds"], 1)
    return totals
