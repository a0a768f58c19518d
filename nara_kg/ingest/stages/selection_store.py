"""The selection's state between runs (`layout.selection_state`): every file's candidate rows,
the chosen row per naId and the alias table, so that a run reduces only the naIds that the
changed files hold.

Per live file: its signature (the parsed part's identity, size and modification time), its
path (ties between files go to the first in path order), how many lines it rejected and a
digest of its chosen rows. Per parsed row: the keys the choice is made by (stub or full,
completeness, file, row) and where it came from; per full organization record, the aliases it
lists. Then the choice: one row per chosen naId, and alias -> organization.

Why SQLite (the standard library's `sqlite3`): a changed file's candidates are replaced in one
transaction, and the other holders of a naId (or of an alias) are found through an index
without reading the other files; nothing of it is held in Python memory beyond one batch of
naIds. The state is marked complete only after every table of the selection was written from
it: a run killed in between leaves it incomplete, and the next run reduces every file again.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nara_kg.ingest.sqlite_store import SqliteStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (file_id TEXT PRIMARY KEY, rel_path TEXT NOT NULL,
  signature TEXT NOT NULL, rejected INTEGER NOT NULL, chosen TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS candidates (na_id INTEGER NOT NULL, file_id TEXT NOT NULL,
  row INTEGER NOT NULL, is_stub INTEGER NOT NULL, completeness INTEGER NOT NULL,
  file_name TEXT, line_num INTEGER, org INTEGER NOT NULL);
DROP INDEX IF EXISTS candidates_by_na_id;
CREATE INDEX IF NOT EXISTS candidates_by_kind ON candidates (na_id, is_stub);
CREATE INDEX IF NOT EXISTS candidates_by_file ON candidates (file_id);
CREATE TABLE IF NOT EXISTS org_aliases (alias INTEGER NOT NULL, na_id INTEGER NOT NULL,
  file_id TEXT NOT NULL, row INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS org_aliases_by_alias ON org_aliases (alias);
CREATE INDEX IF NOT EXISTS org_aliases_by_file ON org_aliases (file_id);
CREATE TABLE IF NOT EXISTS chosen (na_id INTEGER PRIMARY KEY, file_id TEXT NOT NULL,
  row INTEGER NOT NULL, is_stub INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS chosen_by_file ON chosen (file_id, row);
CREATE TABLE IF NOT EXISTS aliases (alias INTEGER PRIMARY KEY, na_id INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS dups (na_id INTEGER PRIMARY KEY);
"""
_TABLES = ("files", "candidates", "org_aliases", "chosen", "aliases", "dups")

#: naIds per batch (below SQLite's limit on bound parameters).
BATCH = 5_000


def chosen_digest(rows: Iterable[int]) -> str:
    """A digest of a file's chosen rows (equal exactly when the rows are)."""
    return hashlib.sha256(",".join(map(str, sorted(rows))).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Candidate:
    """One parsed row, with what the choice of its naId's row is made by."""

    na_id: int
    file_id: str
    row: int
    is_stub: bool
    completeness: int
    file_name: str
    line_num: int
    #: A full organization record (its aliases resolve to it).
    org: bool


def batches(keys: Iterable[int]) -> Iterator[list[int]]:
    ordered = sorted(set(keys))
    for start in range(0, len(ordered), BATCH):
        yield ordered[start : start + BATCH]


class SelectionStore(SqliteStore):
    """The state at `path` (created on first use; one that cannot be read starts empty)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = self._open(path)
        except sqlite3.DatabaseError:
            path.unlink(missing_ok=True)
            self.db = self._open(path)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, isolation_level=None)
        db.executescript(SCHEMA)
        db.execute("SELECT count(*) FROM files").fetchone()
        return db

    # ------------------------------------------------------------------------ state
    def complete(self) -> bool:
        return self.meta("complete") == "1"

    def mark(self, complete: bool) -> None:
        self.set_meta("complete", "1" if complete else "0")

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def clear(self) -> None:
        for table in _TABLES:
            self.db.execute(f"DELETE FROM {table}")

    # ------------------------------------------------------------------------ files
    def files(self) -> dict[str, tuple[str, int, str]]:
        """file_id -> (signature, lines rejected, chosen digest), one row per file."""
        return {
            f: (str(s), int(r), str(c))
            for f, s, r, c in self.db.execute(
                "SELECT file_id, signature, rejected, chosen FROM files"
            )
        }

    def put_file(self, file_id: str, rel_path: str, signature: str, rejected: int) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, "
            "COALESCE((SELECT chosen FROM files WHERE file_id = ?), ''))",
            (file_id, rel_path, signature, rejected, file_id),
        )

    def set_chosen_digest(self, file_id: str) -> None:
        self.db.execute(
            "UPDATE files SET chosen = ? WHERE file_id = ?",
            (chosen_digest(self.chosen_rows(file_id)), file_id),
        )

    def drop_file(self, file_id: str) -> tuple[set[int], set[int]]:
        """Forget a file's candidates and aliases: (its naIds, the aliases it listed)."""
        na_ids = {
            int(r[0])
            for r in self.db.execute("SELECT na_id FROM candidates WHERE file_id = ?", (file_id,))
        }
        aliases = {
            int(r[0])
            for r in self.db.execute("SELECT alias FROM org_aliases WHERE file_id = ?", (file_id,))
        }
        self.db.execute("DELETE FROM candidates WHERE file_id = ?", (file_id,))
        self.db.execute("DELETE FROM org_aliases WHERE file_id = ?", (file_id,))
        self.db.execute("DELETE FROM files WHERE file_id = ?", (file_id,))
        return na_ids, aliases

    def put_candidates(
        self, candidates: Sequence[Candidate], aliases: Sequence[tuple[int, int, str, int]]
    ) -> None:
        """Candidates, and (alias, organization naId, file_id, row) of full organizations."""
        self.db.executemany(
            "INSERT INTO candidates VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    c.na_id,
                    c.file_id,
                    c.row,
                    int(c.is_stub),
                    c.completeness,
                    c.file_name,
                    c.line_num,
                    int(c.org),
                )
                for c in candidates
            ],
        )
        self.db.executemany("INSERT INTO org_aliases VALUES (?, ?, ?, ?)", aliases)

    # ------------------------------------------------------------------------ choosing
    def candidate_na_ids(self) -> Iterator[list[int]]:
        """Every naId some file holds, ascending, a batch at a time."""
        return self._pages("SELECT DISTINCT na_id FROM candidates WHERE na_id > ? ORDER BY na_id")

    def listed_aliases(self) -> Iterator[list[int]]:
        """Every alias a full organization record lists, ascending, a batch at a time."""
        return self._pages("SELECT DISTINCT alias FROM org_aliases WHERE alias > ? ORDER BY alias")

    def _pages(self, query: str) -> Iterator[list[int]]:
        """The keys `query` gives after its parameter, BATCH at a time: each page is read
        whole before the caller writes, so no cursor stays open across the writes."""
        after = -(2**63)
        while page := [int(r[0]) for r in self.db.execute(f"{query} LIMIT {BATCH}", (after,))]:
            yield page
            after = page[-1]

    def full_candidates(self, na_ids: Sequence[int]) -> list[tuple[Any, ...]]:
        """(na_id, file_id, row, completeness, file_name, line_num) of every full record of
        `na_ids`, in the order a full reduce ranks them. The stubs are not read: an authority
        that every file names has a stub in each of them, and a full record beats them all."""
        marks = ",".join("?" * len(na_ids))
        return self.db.execute(
            "SELECT c.na_id, c.file_id, c.row, c.completeness, c.file_name, c.line_num "
            "FROM candidates c JOIN files f ON f.file_id = c.file_id "
            f"WHERE c.na_id IN ({marks}) AND c.is_stub = 0 "
            "ORDER BY c.na_id, c.completeness DESC, f.rel_path, c.row",
            list(na_ids),
        ).fetchall()

    def first_stubs(self, na_ids: Sequence[int]) -> list[tuple[int, str, int]]:
        """(na_id, file_id, row) of the stub a full reduce ranks first, for each of `na_ids`
        that has stubs (meant for the naIds without a full record)."""
        marks = ",".join("?" * len(na_ids))
        return self.db.execute(
            "SELECT na_id, file_id, row FROM (SELECT c.na_id, c.file_id, c.row, row_number() "
            "OVER (PARTITION BY c.na_id ORDER BY c.completeness DESC, f.rel_path, c.row) AS rank "
            "FROM candidates c JOIN files f ON f.file_id = c.file_id "
            f"WHERE c.na_id IN ({marks}) AND c.is_stub = 1) WHERE rank = 1 ORDER BY na_id",
            list(na_ids),
        ).fetchall()

    def alias_owners(self, aliases: Sequence[int]) -> dict[int, int]:
        """alias -> the organization of the first full record (path order, row) listing it."""
        marks = ",".join("?" * len(aliases))
        found: dict[int, int] = {}
        for alias, na_id in self.db.execute(
            "SELECT a.alias, a.na_id FROM org_aliases a JOIN files f ON f.file_id = a.file_id "
            f"WHERE a.alias IN ({marks}) ORDER BY a.alias, f.rel_path, a.row",
            list(aliases),
        ):
            found.setdefault(int(alias), int(na_id))
        return found

    def aliases_of(self, aliases: Sequence[int]) -> dict[int, int]:
        marks = ",".join("?" * len(aliases))
        return dict(
            self.db.execute(f"SELECT alias, na_id FROM aliases WHERE alias IN ({marks})", aliases)
        )

    def set_aliases(self, aliases: Sequence[int], owners: dict[int, int]) -> None:
        marks = ",".join("?" * len(aliases))
        self.db.execute(f"DELETE FROM aliases WHERE alias IN ({marks})", list(aliases))
        self.db.executemany("INSERT INTO aliases VALUES (?, ?)", owners.items())

    def chosen_of(self, na_ids: Sequence[int]) -> dict[int, tuple[str, int, int]]:
        marks = ",".join("?" * len(na_ids))
        return {
            int(n): (str(f), int(r), int(s))
            for n, f, r, s in self.db.execute(
                f"SELECT na_id, file_id, row, is_stub FROM chosen WHERE na_id IN ({marks})",
                list(na_ids),
            )
        }

    def set_chosen(
        self, na_ids: Sequence[int], chosen: dict[int, tuple[str, int, int]], dups: Iterable[int]
    ) -> None:
        marks = ",".join("?" * len(na_ids))
        for table in ("chosen", "dups"):
            self.db.execute(f"DELETE FROM {table} WHERE na_id IN ({marks})", list(na_ids))
        self.db.executemany(
            "INSERT INTO chosen VALUES (?, ?, ?, ?)", [(n, *c) for n, c in chosen.items()]
        )
        self.db.executemany("INSERT INTO dups VALUES (?)", [(n,) for n in dups])

    # ------------------------------------------------------------------------ reading
    def chosen_rows(self, file_id: str) -> list[int]:
        return [
            int(r[0])
            for r in self.db.execute(
                "SELECT row FROM chosen WHERE file_id = ? ORDER BY row", (file_id,)
            )
        ]

    def counts(self) -> tuple[int, int]:
        """(chosen full records, chosen stubs)."""
        found = dict(self.db.execute("SELECT is_stub, count(*) FROM chosen GROUP BY is_stub"))
        return int(found.get(0, 0)), int(found.get(1, 0))

    def all_aliases(self) -> Iterator[tuple[int, int]]:
        yield from self.db.execute("SELECT alias, na_id FROM aliases ORDER BY rowid")

    def duplicated(self) -> list[int]:
        return [int(r[0]) for r in self.db.execute("SELECT na_id FROM dups ORDER BY na_id")]
