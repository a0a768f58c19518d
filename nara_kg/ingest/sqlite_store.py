"""What the project's SQLite stores share: a connection in autocommit mode, with transactions
taken explicitly (`BEGIN IMMEDIATE`, so that a second writer waits instead of failing half-way),
and closing as a context manager."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Self


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
