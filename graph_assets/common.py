"""What the knowledge-graph assets share: group, owners, metadata helpers."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import dagster as dg

GROUP = "knowledge_graph"
OWNERS = ["team:data-platform"]
FILE_KINDS = {"python", "parquet"}
GRAPH_KINDS = {"python", "neo4j"}


def md_table(
    rows: Sequence[Mapping[str, Any]], limit: int = 20, max_cell: int = 160
) -> dg.MetadataValue:
    """A Markdown table for the asset page (Dagster renders it; JSON would be unreadable)."""
    rows = list(rows)[:limit]
    if not rows:
        return dg.MetadataValue.md("_(none)_")
    headers = list(rows[0].keys())

    def cell(value: Any) -> str:
        text = " ".join(str(value).split()).replace("|", "\\|")
        return text if len(text) <= max_cell else text[: max_cell - 1] + "…"

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(row.get(h, "")) for h in headers) + " |" for row in rows]
    return dg.MetadataValue.md("\n".join(lines))


def counts_table(counts: Mapping[str, int], key: str = "type") -> dg.MetadataValue:
    return md_table([{key: k, "count": v} for k, v in sorted(counts.items())], limit=100)


@contextmanager
def timed(metadata: dict[str, Any], key: str = "seconds") -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        metadata[key] = dg.MetadataValue.float(round(time.perf_counter() - started, 3))


def materialization_metadata(result: dg.ExecuteInProcessResult) -> dict[str, dict[str, Any]]:
    """asset key -> its materialization metadata (plain values), from an in-process run."""
    found: dict[str, dict[str, Any]] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        found[materialization.asset_key.to_user_string()] = {
            key: value.value for key, value in materialization.metadata.items()
        }
    return found
