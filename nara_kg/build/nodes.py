"""graph_nodes: make the record and chunk nodes match the chosen chunk rows, by difference."""

from __future__ import annotations

import json
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from neo4j import Driver

from nara_kg.graph import nodes as node_cypher
from nara_kg.graph import sync_state
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import iter_chunks
from nara_kg.model.progress import Log, quiet
from nara_kg.model.schema import Prop
from nara_kg.model.tables import Col


@dataclass
class NodeSyncResult:
    desired: int = 0
    written: int = 0
    unchanged: int = 0
    deleted: int = 0
    records_written: int = 0
    records_removed: int = 0
    written_by_type: Counter[str] = field(default_factory=Counter)
    #: Where the nodes' current row hashes came from: "snapshot" (the last complete write, which
    #: the graph still holds) or "graph" (read back).
    existing_from: str = "graph"


#: The graph_nodes writer's concern in :mod:`nara_kg.graph.sync_state`.
NODES_CONCERN = "chunk-nodes"
_SNAPSHOT_ID, _SNAPSHOT_HASH = "chunkId", "rowHash"


#: The chunk-row columns a chunk node is made from.
NODE_COLUMNS = [Col.CHUNK_ID, Col.NODE_TYPE, Col.EMBED, Col.PROPS, Col.ROW_HASH]


def node_properties(row: dict[str, Any]) -> dict[str, Any]:
    """A chunk node's properties from its chunk row (:data:`NODE_COLUMNS`): what every writer of
    chunk nodes (this one, the first-load bulk import) gives the node."""
    props: dict[str, Any] = json.loads(row[Col.PROPS])
    props[Prop.ROW_HASH] = row[Col.ROW_HASH]
    return props


def _existing(
    driver: Driver, database: str, synced: sync_state.SyncedSet, *, trust_snapshot: bool
) -> tuple[dict[str, str | None], str]:
    table = synced.trusted() if trust_snapshot else None
    if table is not None:
        ids = table[_SNAPSHOT_ID].to_pylist()
        return dict(zip(ids, table[_SNAPSHOT_HASH].to_pylist(), strict=True)), "snapshot"
    return node_cypher.existing_row_hashes(driver, database), "graph"


def sync_nodes(
    driver: Driver,
    database: str,
    layout: WorkLayout,
    *,
    rewrite_all: bool = False,
    log: Log = quiet,
) -> NodeSyncResult:
    """Write the chosen chunks whose row changed (every one with `rewrite_all`, the full
    rebuild) and delete the chunk nodes the input no longer has. The nodes' current row hashes
    come from the last complete write when the graph still holds it (see
    :mod:`nara_kg.graph.sync_state`), else from the graph; the full rebuild always reads the
    graph."""
    node_cypher.ensure_node_schema(driver, database)
    synced = sync_state.SyncedSet(driver, database, layout, NODES_CONCERN, node_cypher.CHUNK_COUNT)
    existing, existing_from = _existing(driver, database, synced, trust_snapshot=not rewrite_all)
    result = NodeSyncResult(existing_from=existing_from)
    synced.begin()
    #: chunkId -> rowHash of every chosen chunk: after the writes, the graph's nodes.
    desired: dict[str, str | None] = {}
    pending: dict[str, list[dict[str, Any]]] = {}
    flush_at = 2_000
    started = time.monotonic()
    # One batch is written while the next is read and decoded: Python waited on Neo4j for each
    # batch, and Neo4j on Python for the next. At most one write is in flight, and all have
    # landed before the stale nodes are deleted and the snapshot is committed.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="node-writer") as writer:
        in_flight: Future[int] | None = None

        def landed() -> None:
            nonlocal in_flight
            if in_flight is not None:
                in_flight.result()
                in_flight = None

        def flush(node_type: str) -> None:
            nonlocal in_flight
            rows = pending.pop(node_type, [])
            if rows:
                landed()
                in_flight = writer.submit(
                    node_cypher.upsert_nodes, driver, database, node_type, rows
                )
                result.written += len(rows)
                result.written_by_type[node_type] += len(rows)

        for row in iter_chunks(layout, NODE_COLUMNS):
            result.desired += 1
            desired[row[Col.CHUNK_ID]] = row[Col.ROW_HASH]
            if not rewrite_all and existing.get(row[Col.CHUNK_ID]) == row[Col.ROW_HASH]:
                result.unchanged += 1
                continue
            props = node_properties(row)
            if props[Prop.CHUNK_SEQ_ID] == 0:
                result.records_written += 1
            batch = pending.setdefault(row[Col.NODE_TYPE], [])
            batch.append({"props": props, "embed": row[Col.EMBED]})
            if len(batch) >= flush_at:
                flush(row[Col.NODE_TYPE])
                log(f"wrote {result.written} nodes ({time.monotonic() - started:.1f}s)")
        for node_type in list(pending):
            flush(node_type)
        landed()
    stale = [chunk_id for chunk_id in existing if chunk_id not in desired]
    result.records_removed = sum(1 for chunk_id in stale if chunk_id.endswith("-0"))
    if stale:
        result.deleted = node_cypher.delete_chunks(driver, database, stale)
        log(f"deleted {result.deleted} chunk nodes no longer in the input")
    synced.commit(pa.table({_SNAPSHOT_ID: list(desired), _SNAPSHOT_HASH: list(desired.values())}))
    return result
