"""graph_nodes: make the record and chunk nodes match the chosen chunk rows, by difference."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from neo4j import Driver

from nara_kg.build import node_tallies, sync_state
from nara_kg.build.node_comparison import ExistingHashes
from nara_kg.build.projection_changes import mark_touched, record_of
from nara_kg.graph import nodes as node_cypher
from nara_kg.graph.batches import batched
from nara_kg.graph.communities import COMMUNITY_RELATIONSHIPS
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.changes import ChangeSet, chunks_of_records, plan_for, read_changes
from nara_kg.ingest.stages.chunks import iter_chunks
from nara_kg.ingest.stages.record_index import RecordIndex
from nara_kg.model.progress import Log, quiet
from nara_kg.model.schema import Prop, Rel
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
    #: the graph still holds), "graph" (read back) or "changes" (the change set's records only).
    existing_from: str = "graph"
    #: Records whose chunks were read or written one by one.
    records_touched: int = 0
    #: The chunk nodes per record type (chunks, records, stubs) after the run
    #: (:mod:`nara_kg.build.node_tallies`), and how they were found: "graph" (a read of every
    #: chunk node), "difference" (the last write's counts and this run's change) or "kept"
    #: (nothing written).
    counts: dict[str, int] = field(default_factory=dict)
    counts_from: str = "graph"


#: The graph_nodes writer's concern in :mod:`nara_kg.build.sync_state`.
NODES_CONCERN = "chunk-nodes"
_SNAPSHOT_ID, _SNAPSHOT_HASH = "chunkId", "rowHash"
_SNAPSHOT_SCHEMA = pa.schema([(_SNAPSHOT_ID, pa.string()), (_SNAPSHOT_HASH, pa.string())])
#: Not a row hash: a chunk the graph does not hold.
_ABSENT = object()
#: The relationships graph_communities' projection is made of.
_PROJECTED = (*COMMUNITY_RELATIONSHIPS, Rel.MENTIONED_IN.value)


def _existing(
    driver: Driver, database: str, synced: sync_state.SyncedSet, *, trust_snapshot: bool
) -> tuple[Iterator[tuple[str, str | None]], str]:
    """(chunkId, row hash) of the chunk nodes, and where they come from."""
    table = synced.trusted() if trust_snapshot else None
    if table is not None:
        return _snapshot_rows(table), "snapshot"
    return node_cypher.existing_row_hashes(driver, database), "graph"


def _snapshot_rows(table: pa.Table) -> Iterator[tuple[str, str | None]]:
    for batch in table.to_batches():
        ids, hashes = (batch.column(name).to_pylist() for name in (_SNAPSHOT_ID, _SNAPSHOT_HASH))
        yield from zip(ids, hashes, strict=True)


def sync_nodes(
    driver: Driver,
    database: str,
    layout: WorkLayout,
    *,
    rewrite_all: bool = False,
    log: Log = quiet,
) -> NodeSyncResult:
    """Write the chosen chunks whose row changed (every one with `rewrite_all`, the full
    rebuild) and delete the chunk nodes the input no longer has.

    When the last complete write is the graph's and equals the selection before the current
    change set (:mod:`nara_kg.ingest.stages.changes`), only the change set's records are read
    and written; otherwise every chosen chunk is compared with the nodes' row hashes, taken from
    the last complete write when the graph still holds it (:mod:`nara_kg.build.sync_state`),
    else from the graph; the full rebuild always reads the graph."""
    node_cypher.ensure_node_schema(driver, database)
    synced = sync_state.SyncedSet(driver, database, layout, NODES_CONCERN, node_cypher.CHUNK_COUNT)
    changes = read_changes(layout)
    written_at = None if rewrite_all or changes is None else synced.generation(None)
    plan = plan_for(changes, written_at, full=rewrite_all)
    if plan.mode == "done":
        result = NodeSyncResult(existing_from="changes")
        _keep_counts(driver, database, synced.tallies(), result)
        return result
    if plan.mode == "changes" and plan.changes is not None:
        return _sync_changed(driver, database, layout, synced, plan.changes, log)
    return _sync_whole(driver, database, layout, synced, plan.generation, rewrite_all, log)


#: The chunk-row columns a chunk node is made from.
NODE_COLUMNS = [Col.CHUNK_ID, Col.NODE_TYPE, Col.EMBED, Col.PROPS, Col.ROW_HASH]


def node_properties(row: dict[str, Any]) -> dict[str, Any]:
    """A chunk node's properties from its chunk row (:data:`NODE_COLUMNS`): what every writer of
    chunk nodes (this one, the first-load bulk import) gives the node."""
    props: dict[str, Any] = json.loads(row[Col.PROPS])
    props[Prop.ROW_HASH] = row[Col.ROW_HASH]
    return props


def _node_row(row: dict[str, Any]) -> dict[str, Any]:
    return {"props": node_properties(row), "embed": row[Col.EMBED]}


def _delete_stale(
    driver: Driver,
    database: str,
    layout: WorkLayout,
    stale: list[str],
    generation: str | None,
    result: NodeSyncResult,
    log: Log,
) -> None:
    """Delete `stale` chunk nodes, first recording the relationships they take along (the
    relationship writers' counts drop by those) and, for graph_communities, their records and
    the records at the other end of the projected relationships they take along
    (:mod:`nara_kg.build.projection_changes`)."""
    result.records_removed = sum(1 for chunk_id in stale if chunk_id.endswith("-0"))
    along = node_cypher.relationship_counts(driver, database, stale) if stale else {}
    if stale and layout is not None:
        mark_touched(
            layout,
            {record_of(chunk_id) for chunk_id in stale}
            | node_cypher.neighbour_records(driver, database, stale, _PROJECTED),
        )
    sync_state.record_node_deletions(layout, generation, along)
    if stale:
        result.deleted = node_cypher.delete_chunks(driver, database, stale)
        log(f"deleted {result.deleted} chunk nodes no longer in the input")


def _sync_changed(
    driver: Driver,
    database: str,
    layout: WorkLayout,
    synced: sync_state.SyncedSet,
    changes: ChangeSet,
    log: Log,
) -> NodeSyncResult:
    """The change set's records alone: their chunks written where the row changed, their
    chunk nodes no longer chosen deleted."""
    result = NodeSyncResult(existing_from="changes", records_touched=len(changes.na_ids))
    ids = list(changes.na_ids)
    counts_before = synced.tallies()
    if not ids:
        sync_state.record_node_deletions(layout, changes.generation, {})
        _keep_counts(driver, database, counts_before, result)
        synced.advance(changes.generation, tallies=result.counts)
        return result
    existing = node_cypher.chunks_of_records(driver, database, ids)
    with RecordIndex(layout.record_index) as index:
        chosen = index.records(ids)
    synced.begin()
    desired: set[str] = set()
    desired_counted: list[node_tallies.CountedChunk] = []
    by_type: dict[str, list[dict[str, Any]]] = {}
    for row in chunks_of_records(layout, chosen.values(), NODE_COLUMNS):
        result.desired += 1
        desired.add(row[Col.CHUNK_ID])
        desired_counted.append(_counted_row(row))
        known = existing.get(row[Col.CHUNK_ID])
        if known is not None and known.row_hash == row[Col.ROW_HASH]:
            result.unchanged += 1
            continue
        node = _node_row(row)
        if node["props"][Prop.CHUNK_SEQ_ID] == 0:
            result.records_written += 1
        by_type.setdefault(row[Col.NODE_TYPE], []).append(node)
    mark_touched(
        layout, {int(row["props"][Prop.NA_ID]) for rows in by_type.values() for row in rows}
    )
    for node_type, rows in by_type.items():
        node_cypher.upsert_nodes(driver, database, node_type, rows)
        result.written += len(rows)
        result.written_by_type[node_type] += len(rows)
    stale = sorted(chunk_id for chunk_id in existing if chunk_id not in desired)
    _delete_stale(driver, database, layout, stale, changes.generation, result, log)
    replaced = [_counted_node(chunk) for chunk in existing.values()]
    counts = (
        None
        if counts_before is None
        else node_tallies.apply_difference(counts_before, replaced, desired_counted)
    )
    _settle_counts(driver, database, counts, result)
    synced.commit_changes(changes.generation, tallies=result.counts)
    return result


def _counted_row(row: dict[str, Any]) -> node_tallies.CountedChunk:
    """What the counts see of the node a chunk row makes (:func:`node_properties`)."""
    props = json.loads(row[Col.PROPS])
    return node_tallies.CountedChunk(
        row[Col.NODE_TYPE], int(props[Prop.CHUNK_SEQ_ID]), bool(props.get(Prop.IS_STUB))
    )


def _counted_node(chunk: node_cypher.ExistingChunk) -> node_tallies.CountedChunk:
    return node_tallies.CountedChunk(str(chunk.node_type), int(chunk.seq or 0), chunk.is_stub)


def _settle_counts(
    driver: Driver, database: str, counts: dict[str, int] | None, result: NodeSyncResult
) -> None:
    """`counts` (found by difference) when the count store's nodes per type label agree with
    them, else a read of every chunk node."""
    if counts is not None and node_tallies.agrees_with_labels(
        counts, node_cypher.type_label_counts(driver, database)
    ):
        result.counts, result.counts_from = counts, "difference"
        return
    result.counts, result.counts_from = node_cypher.node_counts(driver, database), "graph"


def _keep_counts(
    driver: Driver, database: str, counts: dict[str, int] | None, result: NodeSyncResult
) -> None:
    """A run that wrote nothing: the last write's counts, checked as in :func:`_settle_counts`."""
    _settle_counts(driver, database, counts, result)
    if result.counts_from == "difference":
        result.counts_from = "kept"


def _sync_whole(
    driver: Driver,
    database: str,
    layout: WorkLayout,
    synced: sync_state.SyncedSet,
    generation: str | None,
    rewrite_all: bool,
    log: Log,
) -> NodeSyncResult:
    """Every chosen chunk compared with the chunk nodes' row hashes, which wait on disk
    (:class:`ExistingHashes`) to be taken out a batch of chunks at a time: those never taken
    are the nodes the input lost."""
    rows, existing_from = _existing(driver, database, synced, trust_snapshot=not rewrite_all)
    result = NodeSyncResult(existing_from=existing_from)
    with ExistingHashes(layout.node_comparison) as existing:
        existing.fill(rows)
        synced.begin()
        with synced.snapshot_writer(_SNAPSHOT_SCHEMA) as snapshot:
            _write_whole(driver, database, layout, existing, snapshot, rewrite_all, result, log)
        stale = [chunk_id for batch in existing.left() for chunk_id in batch]
    _delete_stale(driver, database, layout, stale, generation, result, log)
    result.counts = node_cypher.node_counts(driver, database)
    synced.commit_snapshot(snapshot, generation, tallies=result.counts)
    return result


#: Chunks compared with the stored hashes at once (and the size of a node write batch).
_WHOLE_BATCH = 2_000


def _write_whole(
    driver: Driver,
    database: str,
    layout: WorkLayout,
    existing: ExistingHashes,
    snapshot: sync_state.SnapshotWriter,
    rewrite_all: bool,
    result: NodeSyncResult,
    log: Log,
) -> None:
    pending: dict[str, list[dict[str, Any]]] = {}
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
                mark_touched(layout, {int(row["props"][Prop.NA_ID]) for row in rows})
                landed()
                in_flight = writer.submit(
                    node_cypher.upsert_nodes, driver, database, node_type, rows
                )
                result.written += len(rows)
                result.written_by_type[node_type] += len(rows)

        # Every chosen chunk (its id and row hash) goes to the snapshot as it streams by, and
        # is taken out of `existing`: what is left there at the end are the nodes the input lost.
        for chunk_rows in batched(iter_chunks(layout, NODE_COLUMNS), _WHOLE_BATCH):
            known = existing.take([row[Col.CHUNK_ID] for row in chunk_rows])
            for row in chunk_rows:
                result.desired += 1
                chunk_id = row[Col.CHUNK_ID]
                snapshot.add(chunk_id, row[Col.ROW_HASH])
                result.records_touched += chunk_id.endswith("-0")
                if known.get(chunk_id, _ABSENT) == row[Col.ROW_HASH] and not rewrite_all:
                    result.unchanged += 1
                    continue
                node = _node_row(row)
                if node["props"][Prop.CHUNK_SEQ_ID] == 0:
                    result.records_written += 1
                batch = pending.setdefault(row[Col.NODE_TYPE], [])
                batch.append(node)
                if len(batch) >= _WHOLE_BATCH:
                    flush(row[Col.NODE_TYPE])
                    log(f"wrote {result.written} nodes ({time.monotonic() - started:.1f}s)")
        for node_type in list(pending):
            flush(node_type)
        landed()
