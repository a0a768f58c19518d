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
hand: an added or deleted node or relationship changes the count) it reads the graph
back. While a write is under way the graph's revision says so and the table is gone, so a
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
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from neo4j import Driver

from nara_kg.graph.batches import batched, read_all, write_one
from nara_kg.ingest.layout import WorkLayout, temporary_sibling
from nara_kg.ingest.stages.common import PARQUET_DAMAGE, read_json, write_json
from nara_kg.model.schema import Label, Prop, SyncProp

REVISION = f"""
MATCH (s:{Label.SYNC_STATE} {{{SyncProp.CONCERN}: $concern}})
RETURN s.{SyncProp.REVISION} AS revision
"""

SET_REVISION = f"""
MERGE (s:{Label.SYNC_STATE} {{{SyncProp.CONCERN}: $concern}})
SET s.{SyncProp.REVISION} = $revision, s.{SyncProp.OWNER} = $owner
"""

#: Whether a work folder other than `$owner` wrote any concern last (or one written before
#: sync-state nodes named their writer).
FOREIGN_OWNER = f"""
RETURN EXISTS {{
  MATCH (s:{Label.SYNC_STATE})
  WHERE s.{SyncProp.OWNER} IS NULL OR s.{SyncProp.OWNER} <> $owner
}} AS foreign
"""

#: Marks a write under way (a revision no snapshot has).
WRITING_PREFIX = "writing:"


#: Every writer's revision (it changes when a write starts and when it ends) and the counts of
#: nodes and relationships (a hand edit that adds or deletes one changes them), read in constant
#: time: each count is a subquery of its own so that the planner answers it from the count store.
GRAPH_SIGNATURE = f"""
CALL () {{
  MATCH (s:{Label.SYNC_STATE})
  RETURN collect([s.{SyncProp.CONCERN}, s.{SyncProp.REVISION}]) AS revisions
}}
CALL () {{ MATCH ()-[r]->() RETURN count(r) AS relationships }}
CALL () {{ MATCH (n) RETURN count(n) AS nodes }}
RETURN revisions, relationships, nodes
"""


#: Of the given chunk ids, those no Chunk node has (looked up through the chunkId constraint).
MISSING_CHUNKS = f"""
UNWIND $ids AS id
WITH id WHERE NOT EXISTS {{ MATCH (:{Label.CHUNK} {{{Prop.CHUNK_ID}: id}}) }}
RETURN collect(id) AS missing
"""
#: Chunk ids asked per :data:`MISSING_CHUNKS` query: a large graph's millions of ends would be
#: one parameter held whole in the server's heap.
_ENDS_PER_QUERY = 50_000


def graph_signature(driver: Driver, database: str) -> tuple[Any, ...]:
    """:data:`GRAPH_SIGNATURE` as a hashable value, equal while no writer wrote and nothing was
    added or deleted by hand (what caches of graph reads are keyed by)."""
    row = read_all(driver, database, GRAPH_SIGNATURE)[0]
    revisions = tuple(sorted((str(c), str(r)) for c, r in row["revisions"]))
    return revisions, int(row["relationships"]), int(row["nodes"])


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
    owner = work_folder_id(layout)
    return bool(read_all(driver, database, FOREIGN_OWNER, owner=owner)[0]["foreign"])


def graph_revision(driver: Driver, database: str, concern: str) -> str | None:
    rows = read_all(driver, database, REVISION, concern=concern)
    return str(rows[0]["revision"]) if rows and rows[0]["revision"] is not None else None


def graph_count(driver: Driver, database: str, count_statement: str) -> int:
    """The count a concern's `count_statement` returns (as ``n``)."""
    return int(read_all(driver, database, count_statement)[0]["n"])


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

    def trusted(self) -> pa.Table | None:
        """The table of the concern's last complete write, if the graph still holds it (less
        the relationships of nodes deleted since, see the module's notes)."""
        stored = read_json(self.layout.sync_revision(self.concern))
        path = self.layout.sync_snapshot(self.concern)
        if stored is None or not path.exists():
            return None
        if written_by_another(self.driver, self.database, self.layout):
            return None
        if graph_revision(self.driver, self.database, self.concern) != stored.get("revision"):
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
            found.extend(
                read_all(self.driver, self.database, MISSING_CHUNKS, ids=ids)[0]["missing"]
            )
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

    def commit(self, written: pa.Table) -> None:
        """After the last write: `written` (the desired set, now the graph's) is what the next
        run may take for the graph."""
        revision = uuid.uuid4().hex
        self._set_revision(revision)
        count = graph_count(self.driver, self.database, self.count_statement)
        if count != written.num_rows:
            # The graph does not hold the set just written (a write that found its nodes gone:
            # another build deleted them meanwhile). No snapshot: the next run reads it back.
            return
        path = self.layout.sync_snapshot(self.concern)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = temporary_sibling(path)
        pq.write_table(written, tmp, compression="zstd", write_page_checksum=True)
        tmp.replace(path)
        payload: dict[str, Any] = {"revision": revision, "count": count, "rows": written.num_rows}
        write_json(self.layout.sync_revision(self.concern), payload)

    def _set_revision(self, revision: str) -> None:
        write_one(
            self.driver,
            self.database,
            SET_REVISION,
            concern=self.concern,
            revision=revision,
            owner=work_folder_id(self.layout),
        )
