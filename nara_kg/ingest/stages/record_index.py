"""The chosen records, indexed on disk by the keys the graph writers look them up by.

One row per chosen naId (its file, its row there, a digest of its chunks, its chunk count and
parent), the references each record holds, and the organization-name aliases. record_selection
replaces the rows of the files whose parts changed, in one transaction; the writers read the
rows of the records a change set names, their children (by parent) and the records citing them
(by cited naId).

Why SQLite (the standard library's `sqlite3`) rather than Parquet row groups: the writers'
reads are point and range lookups on three different keys (naId, parent, cited naId) and the
updates replace one file's rows at a time; a B-tree answers each lookup in O(log N) without
reading the rest of the table, and a transaction keeps the index whole when a run is killed.
Parquet serves a scan by file, but a lookup by parent or cited naId would read every row group.
Nothing of the index is held in Python memory beyond the rows a lookup returns.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from nara_kg.ingest.sqlite_store import SqliteStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (file_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
  na_id INTEGER PRIMARY KEY, file_id TEXT NOT NULL, row INTEGER NOT NULL,
  digest TEXT NOT NULL, node_type TEXT NOT NULL, chunk_count INTEGER NOT NULL,
  parent INTEGER
);
CREATE INDEX IF NOT EXISTS records_by_file ON records (file_id);
CREATE INDEX IF NOT EXISTS records_by_parent ON records (parent);
CREATE TABLE IF NOT EXISTS refs (
  na_id INTEGER NOT NULL, rel TEXT NOT NULL, target INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS refs_by_record ON refs (na_id);
CREATE INDEX IF NOT EXISTS refs_by_target ON refs (target);
CREATE TABLE IF NOT EXISTS aliases (alias INTEGER PRIMARY KEY, na_id INTEGER NOT NULL);
"""

#: What this connection dropped and put since its last :meth:`RecordIndex.differences`: kept
#: in temporary tables (on disk), so that a change of every record is not held in Python.
_CHANGE_LOG = """
CREATE TEMP TABLE IF NOT EXISTS dropped (
  na_id INTEGER PRIMARY KEY, file_id TEXT NOT NULL, digest TEXT NOT NULL, parent INTEGER
);
CREATE TEMP TABLE IF NOT EXISTS put (
  na_id INTEGER PRIMARY KEY, file_id TEXT NOT NULL, digest TEXT NOT NULL
);
"""

#: Keys per `IN (...)` lookup (SQLite's default limit on bound parameters is 32,766).
KEYS_PER_QUERY = 10_000


@dataclass(frozen=True)
class RecordDifferences:
    """The records put and dropped since the last reading, compared by naId."""

    added: tuple[int, ...]
    #: Put with another digest or from another file (its file_name property moved).
    changed: tuple[int, ...]
    removed: tuple[int, ...]
    #: (naId, the parent it had) of the changed and removed records that had one, changed first.
    old_parents: tuple[tuple[int, int], ...]
    #: Records put (the rows read to compute this).
    put: int


@dataclass(frozen=True, slots=True)
class IndexedRecord:
    """One chosen record as the index holds it."""

    na_id: int
    file_id: str
    row: int
    digest: str
    node_type: str
    chunk_count: int
    parent: int | None
    #: (relationship type, cited naId) of every reference the record holds.
    references: tuple[tuple[str, int], ...] = ()


def _chunks(keys: Iterable[int], size: int = KEYS_PER_QUERY) -> Iterator[list[int]]:
    batch: list[int] = []
    for key in keys:
        batch.append(key)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class RecordIndex(SqliteStore):
    """The index at `path` (created on first use)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.executescript(SCHEMA)
        self.db.execute("PRAGMA temp_store = FILE")
        self.db.executescript(_CHANGE_LOG)

    # ----------------------------------------------------------------------------- meta
    def generation(self) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return None if row is None else str(row[0])

    def set_generation(self, generation: str) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('generation', ?)", (generation,)
        )

    def clear_generation(self) -> None:
        self.db.execute("DELETE FROM meta WHERE key = 'generation'")

    # ---------------------------------------------------------------------------- files
    def fingerprints(self) -> dict[str, str]:
        """file_id -> fingerprint of every indexed file (one row per file, not per record)."""
        return dict(self.db.execute("SELECT file_id, fingerprint FROM files"))

    def set_file(self, file_id: str, fingerprint: str) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO files (file_id, fingerprint) VALUES (?, ?)",
            (file_id, fingerprint),
        )

    def drop_file(self, file_id: str) -> int:
        """Remove a file and its records (kept in the change log); how many it had."""
        self.db.execute(
            "INSERT OR REPLACE INTO temp.dropped "
            "SELECT na_id, file_id, digest, parent FROM records WHERE file_id = ?",
            (file_id,),
        )
        self.db.execute(
            "DELETE FROM refs WHERE na_id IN (SELECT na_id FROM records WHERE file_id = ?)",
            (file_id,),
        )
        dropped = self.db.execute("DELETE FROM records WHERE file_id = ?", (file_id,)).rowcount
        self.db.execute("DELETE FROM files WHERE file_id = ?", (file_id,))
        return int(dropped)

    # -------------------------------------------------------------------------- records
    def put(self, records: Sequence[IndexedRecord]) -> None:
        for batch in _chunks(r.na_id for r in records):
            marks = ",".join("?" * len(batch))
            self.db.execute(f"DELETE FROM refs WHERE na_id IN ({marks})", batch)
        self.db.executemany(
            "INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (r.na_id, r.file_id, r.row, r.digest, r.node_type, r.chunk_count, r.parent)
                for r in records
            ],
        )
        self.db.executemany(
            "INSERT OR REPLACE INTO temp.put VALUES (?, ?, ?)",
            [(r.na_id, r.file_id, r.digest) for r in records],
        )
        self.db.executemany(
            "INSERT INTO refs VALUES (?, ?, ?)",
            [(r.na_id, rel, target) for r in records for rel, target in r.references],
        )

    def differences(self) -> RecordDifferences:
        """The records put and dropped since the last call (or since opening), compared: the
        comparison runs in SQLite, whatever the number of records; the log starts afresh."""
        db = self.db

        def column(query: str) -> tuple[int, ...]:
            return tuple(int(row[0]) for row in db.execute(query))

        added = column(
            "SELECT p.na_id FROM temp.put AS p WHERE NOT EXISTS "
            "(SELECT 1 FROM temp.dropped AS d WHERE d.na_id = p.na_id) ORDER BY p.na_id"
        )
        changed = column(
            "SELECT p.na_id FROM temp.put AS p JOIN temp.dropped AS d ON d.na_id = p.na_id "
            "WHERE p.digest <> d.digest OR p.file_id <> d.file_id ORDER BY p.na_id"
        )
        removed = column(
            "SELECT d.na_id FROM temp.dropped AS d WHERE NOT EXISTS "
            "(SELECT 1 FROM temp.put AS p WHERE p.na_id = d.na_id) ORDER BY d.na_id"
        )
        # The parents the changed and removed records had: one join, not a lookup per batch.
        parents: dict[int, int] = dict(
            db.execute(
                "SELECT d.na_id, d.parent FROM temp.dropped AS d "
                "LEFT JOIN temp.put AS p ON p.na_id = d.na_id WHERE d.parent IS NOT NULL "
                "AND (p.na_id IS NULL OR p.digest <> d.digest OR p.file_id <> d.file_id)"
            )
        )
        put = int(db.execute("SELECT count(*) FROM temp.put").fetchone()[0])
        db.execute("DELETE FROM temp.put")
        db.execute("DELETE FROM temp.dropped")
        return RecordDifferences(
            added=added,
            changed=changed,
            removed=removed,
            old_parents=tuple(
                (na_id, parents[na_id]) for na_id in [*changed, *removed] if na_id in parents
            ),
            put=put,
        )

    def _rows(
        self,
        condition: str,
        params: Sequence[object],
        *,
        where: bool = True,
        references: bool = True,
    ) -> list[IndexedRecord]:
        """The records `condition` selects (a WHERE clause, or with `where` False what may
        follow the table's name: an ORDER BY, a LIMIT); without `references`, their
        references are not read (left empty)."""
        rows = self.db.execute(
            "SELECT na_id, file_id, row, digest, node_type, chunk_count, parent FROM records "
            + ("WHERE " if where else "")
            + condition,
            params,
        ).fetchall()
        refs: dict[int, list[tuple[str, int]]] = {}
        for batch in _chunks(r[0] for r in rows) if references else ():
            marks = ",".join("?" * len(batch))
            for na_id, rel, target in self.db.execute(
                f"SELECT na_id, rel, target FROM refs WHERE na_id IN ({marks}) ORDER BY rowid",
                batch,
            ):
                refs.setdefault(na_id, []).append((rel, target))
        return [
            IndexedRecord(
                na_id=int(na_id),
                file_id=str(file_id),
                row=int(row),
                digest=str(digest),
                node_type=str(node_type),
                chunk_count=int(chunk_count),
                parent=None if parent is None else int(parent),
                references=tuple(refs.get(na_id, ())),
            )
            for na_id, file_id, row, digest, node_type, chunk_count, parent in rows
        ]

    def batches(
        self, size: int = KEYS_PER_QUERY, *, references: bool = True
    ) -> Iterator[list[IndexedRecord]]:
        """Every chosen record with its references (unless `references` is False), in naId
        order, `size` records at a time: a walk over the whole index that never holds it."""
        after: int | None = None
        while True:
            batch = self._rows(
                ("" if after is None else "na_id > ? ") + "ORDER BY na_id LIMIT ?",
                (size,) if after is None else (after, size),
                where=after is not None,
                references=references,
            )
            if not batch:
                return
            yield batch
            after = batch[-1].na_id

    def records_of_file(self, file_id: str) -> list[IndexedRecord]:
        return self._rows("file_id = ?", (file_id,))

    def records_of_types(self, node_types: Iterable[str]) -> list[IndexedRecord]:
        """The chosen records of the given node types (the authorities, for the linker)."""
        types = sorted(set(node_types))
        return self._rows(f"node_type IN ({','.join('?' * len(types))})", types) if types else []

    def records(self, na_ids: Iterable[int]) -> dict[int, IndexedRecord]:
        """The chosen records among `na_ids` (absent ones are not chosen)."""
        found: dict[int, IndexedRecord] = {}
        for batch in _chunks(sorted(set(na_ids))):
            for record in self._rows(f"na_id IN ({','.join('?' * len(batch))})", batch):
                found[record.na_id] = record
        return found

    def _first_column(self, query: str, keys: Iterable[int]) -> set[int]:
        """The first column of `query` over every key: its `{marks}` are a batch's
        placeholders."""
        found: set[int] = set()
        for batch in _chunks(sorted(set(keys))):
            marks = ",".join("?" * len(batch))
            found.update(row[0] for row in self.db.execute(query.format(marks=marks), batch))
        return found

    def present(self, na_ids: Iterable[int]) -> set[int]:
        """Which of `na_ids` are chosen records."""
        return self._first_column("SELECT na_id FROM records WHERE na_id IN ({marks})", na_ids)

    def count(self) -> int:
        """How many records the index holds (the chosen ones)."""
        return int(self.db.execute("SELECT count(*) FROM records").fetchone()[0])

    def cycle_links(self) -> dict[int, int]:
        """child -> parent of the records on an ancestor cycle, and only those: of the parent
        links between chosen records (a self-parent is no link), those left once records that
        no link names as parent are taken away, again and again. Each record has one parent, so
        what is left is the cycles (a few records), while the work stays in SQLite, whatever
        the number of records."""
        db = self.db
        db.execute("DROP TABLE IF EXISTS temp.cycle_links")
        db.execute(
            "CREATE TEMP TABLE cycle_links AS SELECT child.na_id AS na_id, child.parent AS parent "
            "FROM records AS child JOIN records AS up ON up.na_id = child.parent "
            "WHERE child.parent <> child.na_id"
        )
        db.execute("CREATE INDEX temp.cycle_links_by_parent ON cycle_links (parent)")
        try:
            while db.execute(
                "DELETE FROM temp.cycle_links WHERE NOT EXISTS "
                "(SELECT 1 FROM temp.cycle_links AS below WHERE below.parent = cycle_links.na_id)"
            ).rowcount:
                pass
            return {
                int(a): int(b) for a, b in db.execute("SELECT na_id, parent FROM temp.cycle_links")
            }
        finally:
            db.execute("DROP TABLE temp.cycle_links")

    def children(self, parents: Iterable[int]) -> set[int]:
        """The chosen records whose parent is one of `parents`."""
        return self._first_column("SELECT na_id FROM records WHERE parent IN ({marks})", parents)

    def citing(self, targets: Iterable[int]) -> set[int]:
        """The chosen records holding a reference to one of `targets`."""
        return self._first_column(
            "SELECT DISTINCT na_id FROM refs WHERE target IN ({marks})", targets
        )

    # -------------------------------------------------------------------------- aliases
    def aliases(self, alias_ids: Iterable[int]) -> dict[int, int]:
        """alias naId -> its organization, for the given aliases that have one."""
        found: dict[int, int] = {}
        for batch in _chunks(sorted(set(alias_ids))):
            marks = ",".join("?" * len(batch))
            found.update(
                self.db.execute(f"SELECT alias, na_id FROM aliases WHERE alias IN ({marks})", batch)
            )
        return found

    def aliases_of(self, organizations: Iterable[int]) -> set[int]:
        """The alias naIds that resolve to one of `organizations`."""
        return self._first_column(
            "SELECT alias FROM aliases WHERE na_id IN ({marks})", organizations
        )

    def replace_aliases(self, aliases: Iterable[tuple[int, int]]) -> list[int]:
        """Make the alias table equal `aliases`; returns the aliases added, removed or moved."""
        self.db.execute(
            "CREATE TEMP TABLE IF NOT EXISTS new_aliases (alias INTEGER PRIMARY KEY, na_id INTEGER)"
        )
        self.db.execute("DELETE FROM new_aliases")
        self.db.executemany("INSERT OR REPLACE INTO new_aliases VALUES (?, ?)", aliases)
        changed = [
            row[0]
            for row in self.db.execute(
                "SELECT a.alias FROM aliases a LEFT JOIN new_aliases n ON a.alias = n.alias "
                "WHERE n.na_id IS NULL OR n.na_id <> a.na_id "
                "UNION SELECT n.alias FROM new_aliases n LEFT JOIN aliases a ON a.alias = n.alias "
                "WHERE a.na_id IS NULL"
            )
        ]
        self.db.execute("DELETE FROM aliases")
        self.db.execute("INSERT INTO aliases SELECT alias, na_id FROM new_aliases")
        self.db.execute("DELETE FROM new_aliases")
        return sorted(changed)
