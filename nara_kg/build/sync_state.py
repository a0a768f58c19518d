"""What a by-difference writer last wrote, kept beside the work files, and whether the graph
still holds exactly that.

A writer (chunk nodes, one relationship type, the linker's mentions) makes the graph equal a
desired set by difference. Finding the difference by reading the whole of its part of the graph
back would cost a full read every run, however little had changed, so each complete write leaves

* in the graph, a ``(:SyncState {concern, revision})`` node with a fresh revision, and
* in the work dir, the set it wrote (a Parquet table) with that revision and the count the
  graph then had (nodes, or relationships of the type: the count store answers in O(1)).

The next run takes the table for the graph's state when the revision and the count still
match; otherwise (another database, a run that died part way, the graph wiped or edited by
hand: an added or deleted node or relationship changes the count) it reads the graph as
before. While a write is under way the graph's revision says so and the table is gone, so a
run that dies part way is never trusted.

One Neo4j can serve two exports, each built from its own work folder. Every sync-state node
names the work folder that wrote it last (`SyncProp.OWNER`, an id kept in the folder): while
any was written by another folder, none of this folder's snapshots is trusted and each writer
reads the graph back (and the graph then converges to this folder's export). A write that
the graph does not hold in full when it commits (its count differs from the rows written:
another build deleted its nodes meanwhile) leaves no snapshot either.

One change to the count is expected rather than suspect: the chunk writer deletes the nodes of
records that shrank or went away, and their relationships go with them. A set whose rows name
their end nodes (`endpoint_columns`) drops the rows whose ends the graph no longer has; when
what is left accounts for the count, it is still trusted. Reading every relationship back for
that cost more than the rest of the run's relationship writing.

A writer that applies a change set (:mod:`nara_kg.ingest.stages.changes`) writes no snapshot:
rewriting the whole set for a few changed rows would cost what the change set saves. It records
the change set's generation and the graph's count instead; the next run applies the next change
set when the revision, the count (less the relationships the node writer deleted with its nodes,
:func:`record_node_deletions`) and the generation all still match, and otherwise compares whole.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from neo4j import Driver

from nara_kg.graph import sync_state as marks
from nara_kg.graph.batches import batched
from nara_kg.graph.sync_state import graph_count
from nara_kg.ingest.layout import WorkLayout, temporary_sibling
from nara_kg.ingest.stages.common import PARQUET_DAMAGE, read_json, write_json

#: Marks a write under way (a revision no snapshot has).
WRITING_PREFIX = "writing:"
#: Chunk ids asked per missing-chunks query: a large graph's millions of ends would be one
#: parameter held whole in the server's heap.
_ENDS_PER_QUERY = 50_000
#: The node writer's record of the relationships its deletions took with them.
NODE_DELETIONS = "node-deletions"
#: The key of a writer's own counts in its stored state.
_TALLIES = "tallies"


def work_folder_id(layout: WorkLayout) -> str:
    """The id of the work folder (made on first use and kept in it)."""
    stored = read_json(layout.work_folder_id)
    if stored is not None and isinstance(stored.get("id"), str):
        return str(stored["id"])
    identity = uuid.uuid4().hex
    write_json(layout.work_folder_id, {"id": identity})
    return identity


def written_by_another(driver: Driver, database: str, layout: WorkLayout) -> bool:
    """Whether the graph's sync state was last written (for any concern) by another work
    folder: a second export built against the same Neo4j. None of this folder's snapshots is
    then taken for the graph."""
    return marks.written_by_other_owner(driver, database, work_folder_id(layout))


def record_node_deletions(
    layout: WorkLayout, generation: str | None, by_type: Mapping[str, int]
) -> None:
    """What the node writer's deletions of `generation` took along: relationships per type."""
    write_json(
        layout.sync_revision(NODE_DELETIONS),
        {"generation": generation, "by_type": dict(by_type)},
    )


def _deleted_along(layout: WorkLayout, generation: str, rel_types: tuple[str, ...]) -> int:
    stored = read_json(layout.sync_revision(NODE_DELETIONS)) or {}
    if stored.get("generation") != generation:
        return 0
    by_type = stored.get("by_type") or {}
    return sum(int(by_type.get(t, 0)) for t in rel_types)


@dataclass(frozen=True)
class SyncedSet:
    """One writer's concern in one graph and work dir: whether its last complete write may be
    taken for the graph (`trusted`), and the two marks around a write (`begin`, `commit`)."""

    driver: Driver
    database: str
    layout: WorkLayout
    concern: str
    #: Returns the graph's count of the concern's nodes or relationships as ``n``.
    count_statement: str
    #: The snapshot's columns holding the chunkIds of a relationship's two ends (none for a set
    #: of nodes): rows whose end the graph deleted since are dropped, not the whole table.
    endpoint_columns: tuple[str, ...] = ()
    #: The relationship types the count covers (the node writer's deletions lower it).
    rel_types: tuple[str, ...] = ()

    def generation(self, generation_now: str | None) -> str | None:
        """The change-set generation of the concern's last complete write, when the graph
        still holds that write: same owner, same revision, and the same count less what the
        node writer's deletions of `generation_now` took along. None otherwise."""
        stored = read_json(self.layout.sync_revision(self.concern))
        if stored is None or stored.get("generation") is None:
            return None
        if written_by_another(self.driver, self.database, self.layout):
            return None
        if marks.graph_revision(self.driver, self.database, self.concern) != stored.get("revision"):
            return None
        count = graph_count(self.driver, self.database, self.count_statement)
        written = int(stored.get("count", -1))
        if count == written:
            return str(stored["generation"])
        if generation_now is None or stored["generation"] == generation_now or not self.rel_types:
            return None
        along = _deleted_along(self.layout, generation_now, self.rel_types)
        return str(stored["generation"]) if count == written - along else None

    def trusted(self) -> pa.Table | None:
        """The table of the concern's last complete write, if the graph still holds it (less
        the relationships of nodes deleted since, see the module's notes)."""
        stored = read_json(self.layout.sync_revision(self.concern))
        path = self.layout.sync_snapshot(self.concern)
        if stored is None or not path.exists():
            return None
        if written_by_another(self.driver, self.database, self.layout):
            return None
        if marks.graph_revision(self.driver, self.database, self.concern) != stored.get("revision"):
            return None
        count = graph_count(self.driver, self.database, self.count_statement)
        written = stored.get("count")
        if not self.endpoint_columns or written is None or count > written:
            return self._snapshot(path) if count == written else None
        table = self._snapshot(path)
        if table is None:
            return None
        if count == written:
            return table
        kept = self._without_deleted_ends(table)
        return kept if written - (table.num_rows - kept.num_rows) == count else None

    @staticmethod
    def _snapshot(path: Path) -> pa.Table | None:
        """The snapshot, or None when it is damaged (the graph is then read back)."""
        try:
            return pq.read_table(path, page_checksum_verification=True)
        except PARQUET_DAMAGE:
            return None

    def _without_deleted_ends(self, table: pa.Table) -> pa.Table:
        ends = pc.unique(
            pa.concat_arrays([table[name].combine_chunks() for name in self.endpoint_columns])
        )
        found: list[str] = []
        for ids in batched(ends.to_pylist(), _ENDS_PER_QUERY):
            found.extend(marks.missing_chunks(self.driver, self.database, ids))
        missing = pa.array(found, type=ends.type)
        if len(missing) == 0:
            return table
        gone = [pc.is_in(table[name], value_set=missing) for name in self.endpoint_columns]
        return table.filter(pc.invert(functools.reduce(pc.or_, gone)))

    def begin(self) -> None:
        """Before the first write: neither the graph's revision nor the work dir's table may be
        trusted until :meth:`commit`."""
        self.layout.sync_revision(self.concern).unlink(missing_ok=True)
        self.layout.sync_snapshot(self.concern).unlink(missing_ok=True)
        self._set_revision(f"{WRITING_PREFIX}{uuid.uuid4().hex}")

    def tallies(self) -> dict[str, int] | None:
        """The counts the last complete write left with its state (:meth:`commit_changes`,
        :meth:`commit_snapshot`), if any; as trusted as the write itself."""
        stored = read_json(self.layout.sync_revision(self.concern)) or {}
        tallies = stored.get(_TALLIES)
        return {str(k): int(v) for k, v in tallies.items()} if isinstance(tallies, dict) else None

    def commit_changes(
        self, generation: str | None, tallies: Mapping[str, int] | None = None
    ) -> None:
        """After the last write of a change set: the graph's count and `generation`, no
        snapshot (see the module's notes); `tallies`, the writer's own counts of what the graph
        now holds, go with them."""
        revision = uuid.uuid4().hex
        self._set_revision(revision)
        count = graph_count(self.driver, self.database, self.count_statement)
        payload: dict[str, Any] = {
            "revision": revision,
            "count": count,
            "generation": generation,
            # Applied a change set (rather than compared whole): what the vector writer asks
            # of the node writer before it trusts that only the changed records lack vectors.
            "scoped": True,
        }
        if tallies is not None:
            payload[_TALLIES] = dict(tallies)
        write_json(self.layout.sync_revision(self.concern), payload)

    def advance(self, generation: str, tallies: Mapping[str, int] | None = None) -> None:
        """After an empty change set, checked by :meth:`generation`: the last complete write
        (its snapshot too) equals the selection `generation` as well; nothing is written to
        the graph. `tallies`, when given, replace the stored ones."""
        stored = read_json(self.layout.sync_revision(self.concern))
        if stored is None:
            return
        payload = {**stored, "generation": generation, "scoped": True}
        if tallies is not None:
            payload[_TALLIES] = dict(tallies)
        write_json(self.layout.sync_revision(self.concern), payload)

    def commit(self, written: pa.Table, generation: str | None = None) -> None:
        """After the last write: `written` (the desired set, now the graph's) is what the next
        run may take for the graph; `generation` is the change set it is equal to."""
        with self.snapshot_writer(written.schema) as snapshot:
            snapshot.add_table(written)
        self.commit_snapshot(snapshot, generation)

    def snapshot_writer(self, schema: pa.Schema) -> SnapshotWriter:
        """A snapshot written as the desired set streams by, for :meth:`commit_snapshot`."""
        path = self.layout.sync_snapshot(self.concern)
        path.parent.mkdir(parents=True, exist_ok=True)
        return SnapshotWriter(temporary_sibling(path), schema)

    def commit_snapshot(
        self,
        written: SnapshotWriter,
        generation: str | None = None,
        tallies: Mapping[str, int] | None = None,
    ) -> None:
        """:meth:`commit` of a snapshot written by a (closed) :meth:`snapshot_writer`, with
        the writer's `tallies` as in :meth:`commit_changes`."""
        revision = uuid.uuid4().hex
        self._set_revision(revision)
        count = graph_count(self.driver, self.database, self.count_statement)
        if count != written.rows:
            # The graph does not hold the set just written (a write that found its nodes gone:
            # another build deleted them meanwhile). No snapshot: the next run reads it back.
            written.path.unlink(missing_ok=True)
            return
        written.path.replace(self.layout.sync_snapshot(self.concern))
        payload: dict[str, Any] = {
            "revision": revision,
            "count": count,
            "rows": written.rows,
            "generation": generation,
        }
        if tallies is not None:
            payload[_TALLIES] = dict(tallies)
        write_json(self.layout.sync_revision(self.concern), payload)

    def _set_revision(self, revision: str) -> None:
        marks.set_revision(
            self.driver, self.database, self.concern, revision, work_folder_id(self.layout)
        )


def applied_changes(layout: WorkLayout, concern: str, generation: str) -> bool:
    """Whether `concern`'s last complete write applied the change set `generation`."""
    stored = read_json(layout.sync_revision(concern)) or {}
    return stored.get("generation") == generation and bool(stored.get("scoped"))


class SnapshotWriter:
    """A writer's desired set, written to a temporary Parquet file a row group at a time as it
    streams by, so that the set is never held whole."""

    def __init__(self, path: Path, schema: pa.Schema, rows_per_group: int = 100_000) -> None:
        self.path, self.schema, self.rows = path, schema, 0
        self._writer = pq.ParquetWriter(path, schema, compression="zstd", write_page_checksum=True)
        self._columns: list[list[Any]] = [[] for _ in schema.names]
        self._rows_per_group = rows_per_group

    def add(self, *values: Any) -> None:
        for column, value in zip(self._columns, values, strict=True):
            column.append(value)
        if len(self._columns[0]) >= self._rows_per_group:
            self._flush()

    def add_table(self, table: pa.Table) -> None:
        self._flush()
        self._writer.write_table(table)
        self.rows += table.num_rows

    def _flush(self) -> None:
        if self._columns[0]:
            batch = pa.table(dict(zip(self.schema.names, self._columns, strict=True)), self.schema)
            self._writer.write_table(batch)
            self.rows += batch.num_rows
            self._columns = [[] for _ in self.schema.names]

    def __enter__(self) -> SnapshotWriter:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        self._flush()
        self._writer.close()
        if kind is not None:
            self.path.unlink(missing_ok=True)
