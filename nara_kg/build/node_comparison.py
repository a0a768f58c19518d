"""The chunk nodes' row hashes before graph_nodes' whole path writes, held on disk.

The whole path streams every chosen chunk and asks, for each, whether the graph holds it with
the same row hash; the nodes no chunk asked for are then deleted. A dict of every chunk node
(3.1 million at 10^6 records, about 600 MB) grew with the graph, so the hashes go to a table
of a scratch SQLite file (:mod:`nara_kg.build.mention_comparison` says why SQLite), keyed by
chunkId; the chunks' questions take their rows out of it a batch at a time, and what is left
at the end is what the input lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Final

from nara_kg.ingest.sqlite_store import SqliteStore, open_scratch

#: Rows inserted, and keys taken out, at once.
BATCH_ROWS: Final = 20_000
#: Keys in one statement (below SQLite's limit of bound variables).
_KEYS_PER_STATEMENT: Final = 900
_SCHEMA: Final = """
CREATE TABLE staging (chunk TEXT, hash TEXT);
CREATE TABLE existing (chunk TEXT PRIMARY KEY, hash TEXT) WITHOUT ROWID;
"""


class ExistingHashes(SqliteStore):
    """chunkId -> row hash of the chunk nodes, at `path` (made fresh, deleted on close). Fill it
    with :meth:`fill`, then :meth:`take` the chunks the input has; :meth:`left` is the rest."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = open_scratch(path, _SCHEMA)

    def fill(self, rows: Iterable[tuple[str, str | None]]) -> int:
        """Every (chunkId, row hash) of the graph's chunk nodes, in any order; how many (a later
        row of a chunk replaces an earlier one, as in a dict)."""
        added = 0
        batch: list[tuple[str, str | None]] = []
        with self.transaction():
            for row in rows:
                batch.append(row)
                if len(batch) >= BATCH_ROWS:
                    self.db.executemany("INSERT INTO staging VALUES (?, ?)", batch)
                    added, batch = added + len(batch), []
            self.db.executemany("INSERT INTO staging VALUES (?, ?)", batch)
            self.db.execute(
                "INSERT OR REPLACE INTO existing SELECT chunk, hash FROM staging "
                "ORDER BY chunk, rowid"
            )
            self.db.execute("DROP TABLE staging")
        return added + len(batch)

    def take(self, chunk_ids: Sequence[str]) -> dict[str, str | None]:
        """The row hashes of those of `chunk_ids` the graph holds, taken out of the store."""
        found: dict[str, str | None] = {}
        with self.transaction():
            for start in range(0, len(chunk_ids), _KEYS_PER_STATEMENT):
                keys = chunk_ids[start : start + _KEYS_PER_STATEMENT]
                marks = ",".join("?" * len(keys))
                found.update(
                    self.db.execute(
                        f"DELETE FROM existing WHERE chunk IN ({marks}) RETURNING chunk, hash",
                        list(keys),
                    )
                )
        return found

    def left(self) -> Iterator[list[str]]:
        """The chunkIds never taken, in order, a batch at a time."""
        cursor = self.db.execute("SELECT chunk FROM existing ORDER BY chunk")
        while batch := cursor.fetchmany(BATCH_ROWS):
            yield [chunk for (chunk,) in batch]

    def close(self) -> None:
        self.db.close()
        self.path.unlink(missing_ok=True)
