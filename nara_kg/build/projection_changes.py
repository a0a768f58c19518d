"""The records whose projected row graph_communities has to read again: those the graph
writers touched since it last read them.

graph_communities digests each record's row and edges as its projection shows them
(:mod:`nara_kg.graph.communities`); a record's projected row changes only when a writer writes
or deletes its nodes, or adds or removes an edge (Includes, an authority relationship, a
mention) at either end of which it stands. So each writer appends the naIds it is about to
touch here, before it writes them to the graph, and graph_communities reads only those records,
and removes them from the log only once the digests it made from them are committed: a run
killed anywhere between the writers and graph_communities' commit leaves every naId here, and
the next run reads them (again). A naId listed for nothing is only read for nothing. A writer
that cannot say which records it touched (the LLM's mentions, the first-load bulk import) notes
every record (:data:`EVERY_RECORD`), and the next stream is whole.

Why SQLite (the standard library's `sqlite3`): several writers append at once (each in a
`BEGIN IMMEDIATE` transaction, waiting for the others), while graph_communities reads and drains
what was there when it started, by the rows' ascending ids: what is appended meanwhile (another
run's writers) stays for the next run. The log has an id of its own, made with it, which the
digests remember: a log made anew (deleted, another work folder's) does not know what
happened before it, and the next stream is whole.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path

from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.sqlite_store import SqliteStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS touched (id INTEGER PRIMARY KEY AUTOINCREMENT, na_id INTEGER NOT NULL);
"""
_STORE_ID = "store_id"
#: Not a naId: the entry that stands for every record.
EVERY_RECORD = -1
#: Keys per read of the log.
BATCH = 10_000
#: Seconds a writer waits for another's transaction before it fails.
BUSY_TIMEOUT_S = 120.0


class ProjectionChanges(SqliteStore):
    """The log at `path` (created, with a fresh id, on first use)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_S)
        self.db.executescript(SCHEMA)
        self.db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (_STORE_ID, uuid.uuid4().hex))

    def store_id(self) -> str:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (_STORE_ID,)).fetchone()
        return str(row[0])

    def mark(self, na_ids: Iterable[int]) -> int:
        """Append `na_ids` (one transaction); how many."""
        rows = [(int(na_id),) for na_id in na_ids]
        if rows:
            with self.transaction():
                self.db.executemany("INSERT INTO touched (na_id) VALUES (?)", rows)
        return len(rows)

    def high_water(self) -> int:
        """The last entry's id: what a run that starts now reads and drains."""
        row = self.db.execute("SELECT max(id) FROM touched").fetchone()
        return int(row[0] or 0)

    def count(self, up_to: int) -> int:
        """Distinct naIds appended up to entry `up_to`."""
        row = self.db.execute(
            "SELECT count(DISTINCT na_id) FROM touched WHERE id <= ? AND na_id >= 0", (up_to,)
        ).fetchone()
        return int(row[0])

    def every_record(self, up_to: int) -> bool:
        """Whether a writer noted every record (:data:`EVERY_RECORD`) up to entry `up_to`."""
        row = self.db.execute(
            "SELECT 1 FROM touched WHERE id <= ? AND na_id = ? LIMIT 1", (up_to, EVERY_RECORD)
        ).fetchone()
        return row is not None

    def batches(self, up_to: int) -> Iterator[list[int]]:
        """The distinct naIds appended up to entry `up_to`, ascending, in batches."""
        cursor = self.db.execute(
            "SELECT DISTINCT na_id FROM touched WHERE id <= ? AND na_id >= 0 ORDER BY na_id",
            (up_to,),
        )
        while rows := cursor.fetchmany(BATCH):
            yield [int(na_id) for (na_id,) in rows]

    def drain(self, up_to: int) -> None:
        """Remove the entries up to `up_to` (read and committed by graph_communities)."""
        with self.transaction():
            self.db.execute("DELETE FROM touched WHERE id <= ?", (up_to,))


def mark_touched(layout: WorkLayout | None, na_ids: Iterable[int]) -> None:
    """Append `na_ids` to the work folder's log (nothing without a layout: a writer used
    outside the pipeline, whose graph no digests describe)."""
    if layout is None:
        return
    ids = set(na_ids)
    if ids:
        with ProjectionChanges(layout.projection_changes) as log:
            log.mark(sorted(ids))


def mark_every_record(layout: WorkLayout | None) -> None:
    """Note that any record may have changed: graph_communities' next stream is whole."""
    mark_touched(layout, [EVERY_RECORD])


def record_of(chunk: str) -> int:
    """The naId of a chunk id (`<naId>-<seq>`, :func:`nara_kg.model.schema.chunk_id`)."""
    return int(chunk.rsplit("-", 1)[0])


def ends_of(edges: Iterable[tuple[str, str]]) -> set[int]:
    """The naIds at both ends of edges between chunk ids."""
    return {record_of(end) for edge in edges for end in edge[:2]}
