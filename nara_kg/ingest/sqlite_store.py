"""What the project's SQLite stores share: a connection in autocommit mode, with transactions
taken explicitly (`BEGIN IMMEDIATE`, so that a second writer waits instead of failing half-way),
and closing as a context manager."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Self

#: A scratch store's page cache, in KiB (a negative cache_size): what it holds in memory.
SCRATCH_CACHE_KIB: Final = 65_536


def open_scratch(path: Path, schema: str) -> sqlite3.Connection:
    """A fresh scratch database at `path` (an earlier one removed) with `schema`: no journal,
    no syncing and sorts spilled to files, since a scratch file is thrown away when the run
    that made it ends or fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(
        "PRAGMA journal_mode = OFF;\nPRAGMA synchronous = OFF;\nPRAGMA temp_store = FILE;\n"
        f"PRAGMA cache_size = -{SCRATCH_CACHE_KIB};\n" + schema
    )
    return db


class SqliteStore:
    """Base of a store whose connection is `self.db` (opened by the subclass)."""

    db: sqlite3.Connection

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
