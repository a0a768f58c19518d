"""The linker's desired MENTIONED_IN and the graph's current ones, compared on disk, for the runs
that link every chunk (:func:`nara_kg.build.mention_changes.sync_entity_mentions`' whole path).

Both sets grow with the graph (about three mentions a chunk: millions at 10^6 records), so
neither is held in Python: each is written to a table of a scratch SQLite file as it streams by
(desired rows as the chunks are linked, current rows from the last write's snapshot or from the
graph), sorted into its primary key once complete, and the difference is read back in batches
by a join on that key. The batches to write, to delete and the new snapshot come out in
(authority, chunk) order, as the sorted lists of the in-memory comparison did.

Why SQLite rather than a merge of sorted Parquet files or DuckDB: it is in the standard library
and already holds the project's other on-disk state (:mod:`nara_kg.build.mention_index`,
:mod:`nara_kg.build.label_ledger`), it sorts a staging table into a ``WITHOUT ROWID`` key in
its own temporary files, and its page cache bounds what it holds in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final

from nara_kg.build.projection_changes import record_of
from nara_kg.ingest.sqlite_store import SqliteStore, open_scratch

#: (authority's first chunk, chunk, count, surface): one MENTIONED_IN as written.
MentionRow = tuple[str, str, int, str]

#: Rows inserted at once, and handed back at once (one write batch of the graph's writers).
BATCH_ROWS: Final = 20_000
_SCHEMA: Final = """
CREATE TABLE staging_desired (authority TEXT, chunk TEXT, count INTEGER, surface TEXT);
CREATE TABLE staging_current (authority TEXT, chunk TEXT, count INTEGER, surface TEXT);
CREATE TABLE desired (
  authority TEXT, chunk TEXT, count INTEGER, surface TEXT, PRIMARY KEY (authority, chunk)
) WITHOUT ROWID;
CREATE TABLE current (
  authority TEXT, chunk TEXT, count INTEGER, surface TEXT, PRIMARY KEY (authority, chunk)
) WITHOUT ROWID;
"""
_TABLES: Final = ("desired", "current")


class MentionComparison(SqliteStore):
    """A scratch comparison at `path` (made fresh, deleted on close). Fill the desired set with
    item assignment, as a dict would be filled (the last value of an edge wins), and the current
    set with :meth:`add_current`; then :meth:`seal` and read the difference."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = open_scratch(path, _SCHEMA)
        self.db.execute("BEGIN")
        self._pending: list[MentionRow] = []
        self._sealed = False

    def __setitem__(self, edge: tuple[str, str], value: tuple[int, str]) -> None:
        self._pending.append((edge[0], edge[1], value[0], value[1]))
        if len(self._pending) >= BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self.db.executemany("INSERT INTO staging_desired VALUES (?, ?, ?, ?)", self._pending)
            self._pending = []

    def add_current(self, rows: Iterable[MentionRow]) -> int:
        """The graph's MENTIONED_IN (any order); how many."""
        added = 0
        batch: list[MentionRow] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= BATCH_ROWS:
                self.db.executemany("INSERT INTO staging_current VALUES (?, ?, ?, ?)", batch)
                added, batch = added + len(batch), []
        self.db.executemany("INSERT INTO staging_current VALUES (?, ?, ?, ?)", batch)
        return added + len(batch)

    def seal(self) -> None:
        """Both sets complete: each sorted into its key (a later row of an edge replaces an
        earlier one, as in a dict)."""
        self._flush()
        for table in _TABLES:
            self.db.execute(
                f"INSERT OR REPLACE INTO {table} SELECT authority, chunk, count, surface "
                f"FROM staging_{table} ORDER BY authority, chunk, rowid"
            )
            self.db.execute(f"DROP TABLE staging_{table}")
        self.db.execute("COMMIT")
        self._sealed = True

    def _rows(self, statement: str) -> Iterator[list[tuple]]:
        assert self._sealed, "seal() the comparison before reading it"
        cursor = self.db.execute(statement)
        while batch := cursor.fetchmany(BATCH_ROWS):
            yield batch

    def count(self) -> int:
        """The desired edges (after :meth:`seal`)."""
        return int(self.db.execute("SELECT count(*) FROM desired").fetchone()[0])

    def to_write(self) -> Iterator[list[tuple[str, str, int, str, bool]]]:
        """Desired rows the graph lacks or holds with other properties, and whether each is new
        (no such edge at all), in key order."""
        yield from self._rows(
            "SELECT d.authority, d.chunk, d.count, d.surface, c.authority IS NULL "
            "FROM desired AS d LEFT JOIN current AS c "
            "ON c.authority = d.authority AND c.chunk = d.chunk "
            "WHERE c.authority IS NULL OR c.count IS NOT d.count OR c.surface IS NOT d.surface "
            "ORDER BY d.authority, d.chunk"
        )

    def to_remove(self) -> Iterator[list[tuple[str, str]]]:
        """Current edges the desired set lacks, in key order."""
        yield from self._rows(
            "SELECT c.authority, c.chunk FROM current AS c WHERE NOT EXISTS ("
            "SELECT 1 FROM desired AS d WHERE d.authority = c.authority AND d.chunk = c.chunk) "
            "ORDER BY c.authority, c.chunk"
        )

    def desired(self) -> Iterator[list[MentionRow]]:
        """The desired set, in key order."""
        yield from self._rows(
            "SELECT authority, chunk, count, surface FROM desired ORDER BY authority, chunk"
        )

    def record_pairs(self) -> Iterator[tuple[int, int]]:
        """(record naId, authority naId) of every desired edge (repeated per chunk)."""
        for batch in self._rows("SELECT chunk, authority FROM desired"):
            for chunk, authority in batch:
                yield record_of(chunk), record_of(authority)

    def close(self) -> None:
        self.db.close()
        self.path.unlink(missing_ok=True)
