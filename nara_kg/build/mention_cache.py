"""Each chunk's mentions as the last whole linking found them, keyed by what they follow from
(:func:`nara_kg.build.mentions.link_mentions`): read one chunk at a time by its id, so that a run
holds none of it in memory.

A whole run reads the cache it finds and writes a new one beside it (`<name>.building`), which
replaces the old one when the run is through; a run killed part way leaves the old one. A
damaged or missing cache reads as empty: every chunk is linked again.

Why SQLite: a keyed point read per chunk from a file of millions of rows, a sorted bulk load of
the new one, and the same store the mention index and the label ledger use.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from nara_kg.ingest.sqlite_store import SqliteStore

#: A chunk's cached linking: (key, mentions JSON, ambiguous JSON). Mentions are
#: [[authority naId, authority type, surface, count], ...]; ambiguous forms are
#: [[surface, [candidate naIds], count], ...].
CachedChunk = tuple[str, str, str]

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS chunks (
  chunk TEXT PRIMARY KEY, key TEXT NOT NULL, mentions TEXT NOT NULL, ambiguous TEXT NOT NULL
) WITHOUT ROWID;
"""
_ROWS_PER_INSERT: Final = 20_000
#: Files an earlier version kept the cache in, beside this one: removed once a new cache is in
#: place, since nothing reads them (the whole `mentions.parquet` was read into memory).
SUPERSEDED: Final = ("mentions.parquet",)


class MentionCache(SqliteStore):
    """The cache at `path`: :meth:`get` reads the one found there, :meth:`put` fills the next,
    :meth:`finish` puts the next in its place (see the module's notes)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.building = path.with_name(f"{path.name}.building")
        self.building.unlink(missing_ok=True)
        self._old = _open_readonly(path)
        self.db = sqlite3.connect(self.building, isolation_level=None)
        self.db.executescript(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE;"
            + _SCHEMA
            + "CREATE TEMP TABLE staging (chunk TEXT, key TEXT, mentions TEXT, ambiguous TEXT);"
        )
        self.db.execute("BEGIN")
        self._pending: list[tuple[str, str, str, str]] = []

    def get(self, chunk: str) -> CachedChunk | None:
        if self._old is None:
            return None
        try:
            row = self._old.execute(
                "SELECT key, mentions, ambiguous FROM chunks WHERE chunk = ?", (chunk,)
            ).fetchone()
        except sqlite3.DatabaseError:  # damaged part way: the rest is linked again
            self._old.close()
            self._old = None
            return None
        return None if row is None else (row[0], row[1], row[2])

    def put(self, chunk: str, cached: CachedChunk) -> None:
        self._pending.append((chunk, *cached))
        if len(self._pending) >= _ROWS_PER_INSERT:
            self._flush()

    def _flush(self) -> None:
        self.db.executemany("INSERT INTO staging VALUES (?, ?, ?, ?)", self._pending)
        self._pending = []

    def finish(self) -> None:
        """The new cache in place of the old (a chunk put twice keeps its last row)."""
        self._flush()
        self.db.execute("INSERT OR REPLACE INTO chunks SELECT * FROM staging ORDER BY chunk, rowid")
        self.db.execute("DROP TABLE staging")
        self.db.execute("COMMIT")
        self._close_connections()
        self.building.replace(self.path)
        for name in SUPERSEDED:
            self.path.with_name(name).unlink(missing_ok=True)

    def _close_connections(self) -> None:
        if self._old is not None:
            self._old.close()
            self._old = None
        self.db.close()

    def close(self) -> None:
        """Without :meth:`finish`: the next cache is dropped, the old one stays."""
        self._close_connections()
        self.building.unlink(missing_ok=True)


def _open_readonly(path: Path) -> sqlite3.Connection | None:
    if not path.exists():
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.execute("SELECT count(*) FROM chunks WHERE chunk = ''").fetchone()
    except sqlite3.DatabaseError:
        return None
    return db


def cached_chunks(path: Path) -> Iterator[tuple[str, CachedChunk]]:
    """Every chunk of the cache at `path`, in chunk id order (none when there is no cache)."""
    db = _open_readonly(path)
    if db is None:
        return
    try:
        for chunk, key, mentions, ambiguous in db.execute(
            "SELECT chunk, key, mentions, ambiguous FROM chunks ORDER BY chunk"
        ):
            yield chunk, (key, mentions, ambiguous)
    finally:
        db.close()
