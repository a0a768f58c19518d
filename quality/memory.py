"""What the record_selection checks found in each file, kept between runs (`layout.check_memory`).

A check validates the chosen rows of the files whose signature changed since it last ran and
takes every other file's results from here; its figures are those of the whole selection.

Per suite and file: the file's signature and rows per frame; per expectation (its `position` in
the suite) a tally: elements, unexpected rows, the largest value (column-maximum expectations)
and the first offending rows, each with its order in the file. A uniqueness expectation spans
files, so its values are kept one row per value (`keys`), looked up by value, and the values
held more than once are listed in `dups`.

Why SQLite (the standard library's `sqlite3`): a changed file's rows are replaced in one
transaction (a killed run leaves each file's memory as it was or as this run made it, never half
of one file's), and a value's other holders are found through an index without reading the
other files' values.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nara_kg.ingest.sqlite_store import SqliteStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS suites (suite TEXT PRIMARY KEY, config TEXT NOT NULL,
  outlines TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (suite TEXT NOT NULL, file_id TEXT NOT NULL,
  signature TEXT NOT NULL, rows TEXT NOT NULL, PRIMARY KEY (suite, file_id));
CREATE TABLE IF NOT EXISTS tallies (suite TEXT NOT NULL, file_id TEXT NOT NULL,
  position INTEGER NOT NULL, elements INTEGER, unexpected INTEGER, maximum TEXT,
  sample TEXT NOT NULL, PRIMARY KEY (suite, file_id, position));
CREATE TABLE IF NOT EXISTS keys (suite TEXT NOT NULL, position INTEGER NOT NULL,
  key TEXT NOT NULL, file_id TEXT NOT NULL, pos INTEGER NOT NULL, row TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS keys_by_key ON keys (suite, position, key);
CREATE INDEX IF NOT EXISTS keys_by_file ON keys (suite, file_id);
CREATE TABLE IF NOT EXISTS dups (suite TEXT NOT NULL, position INTEGER NOT NULL,
  key TEXT NOT NULL, PRIMARY KEY (suite, position, key));
"""

#: Values per `IN (...)` lookup (below SQLite's limit on bound parameters).
KEYS_PER_QUERY = 5_000


@dataclass
class Tally:
    """One expectation's result over the rows of one file."""

    elements: int | None = None
    unexpected: int | None = None
    maximum: Any = None
    #: (order within the file, offending row), the first SAMPLE_SIZE in order.
    sample: list[tuple[list[Any], dict[str, Any]]] = field(default_factory=list)


@dataclass
class FileResult:
    """What a suite found in the chosen rows of one file."""

    file_id: str
    rows: dict[str, int] = field(default_factory=dict)
    tallies: dict[int, Tally] = field(default_factory=dict)
    #: position -> (value, order within the file, row shown) of a uniqueness expectation.
    keys: dict[int, list[tuple[str, int, dict[str, Any]]]] = field(default_factory=dict)


class CheckMemory(SqliteStore):
    """The memory at `path` (created on first use; an unreadable one is started again)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(path, isolation_level=None)
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError:
            path.unlink(missing_ok=True)
            self.db = sqlite3.connect(path, isolation_level=None)
            self.db.executescript(SCHEMA)

    # --------------------------------------------------------------------------- reading
    def suite(self, suite: str) -> tuple[str, list[dict[str, Any]]] | None:
        """(config, outlines) the suite was last remembered with; None when never."""
        row = self.db.execute(
            "SELECT config, outlines FROM suites WHERE suite = ?", (suite,)
        ).fetchone()
        return None if row is None else (str(row[0]), json.loads(row[1]))

    def signatures(self, suite: str) -> dict[str, str]:
        return dict(
            self.db.execute("SELECT file_id, signature FROM files WHERE suite = ?", (suite,))
        )

    def rows(self, suite: str, file_ids: Iterable[str]) -> dict[str, dict[str, int]]:
        wanted = set(file_ids)
        return {
            file_id: json.loads(rows)
            for file_id, rows in self.db.execute(
                "SELECT file_id, rows FROM files WHERE suite = ?", (suite,)
            )
            if file_id in wanted
        }

    def tallies(self, suite: str, position: int) -> Iterator[tuple[str, Tally]]:
        """Every file's tally of one expectation (one row per file)."""
        for file_id, elements, unexpected, maximum, sample in self.db.execute(
            "SELECT file_id, elements, unexpected, maximum, sample FROM tallies "
            "WHERE suite = ? AND position = ?",
            (suite, position),
        ):
            yield (
                str(file_id),
                Tally(
                    elements=elements,
                    unexpected=unexpected,
                    maximum=None if maximum is None else json.loads(maximum),
                    sample=[(list(order), row) for order, row in json.loads(sample)],
                ),
            )

    def duplicated(self, suite: str, position: int) -> list[tuple[str, int, dict[str, Any]]]:
        """(file_id, order, row) of every row whose value another row holds too."""
        return [
            (str(file_id), int(pos), json.loads(row))
            for file_id, pos, row in self.db.execute(
                "SELECT k.file_id, k.pos, k.row FROM dups d JOIN keys k ON k.suite = d.suite "
                "AND k.position = d.position AND k.key = d.key "
                "WHERE d.suite = ? AND d.position = ?",
                (suite, position),
            )
        ]

    # --------------------------------------------------------------------------- writing
    def forget(self, suite: str) -> None:
        for table in ("suites", "files", "tallies", "keys", "dups"):
            self.db.execute(f"DELETE FROM {table} WHERE suite = ?", (suite,))

    def replace(
        self,
        suite: str,
        config: str,
        outlines: Sequence[dict[str, Any]],
        signatures: dict[str, str],
        results: Sequence[FileResult],
        dropped: Iterable[str],
    ) -> None:
        """Forget the `dropped` files, remember `results` (with their `signatures`), and
        update the values held more than once. Call inside `transaction()`."""
        touched: dict[int, set[str]] = {}
        for file_id in {*dropped, *(r.file_id for r in results)}:
            for position, key in self.db.execute(
                "SELECT position, key FROM keys WHERE suite = ? AND file_id = ?", (suite, file_id)
            ):
                touched.setdefault(int(position), set()).add(str(key))
            for table in ("files", "tallies", "keys"):
                self.db.execute(
                    f"DELETE FROM {table} WHERE suite = ? AND file_id = ?", (suite, file_id)
                )
        for result in results:
            file_id = result.file_id
            self.db.execute(
                "INSERT INTO files VALUES (?, ?, ?, ?)",
                (suite, file_id, signatures[file_id], json.dumps(result.rows)),
            )
            self.db.executemany(
                "INSERT INTO tallies VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        suite,
                        file_id,
                        position,
                        t.elements,
                        t.unexpected,
                        None if t.maximum is None else json.dumps(t.maximum),
                        json.dumps(t.sample, default=str),
                    )
                    for position, t in result.tallies.items()
                ],
            )
            for position, held in result.keys.items():
                self.db.executemany(
                    "INSERT INTO keys VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (suite, position, key, file_id, pos, json.dumps(row, default=str))
                        for key, pos, row in held
                    ],
                )
                touched.setdefault(position, set()).update(key for key, _, _ in held)
        for position, keys in touched.items():
            self._recount(suite, position, keys)
        self.db.execute(
            "INSERT OR REPLACE INTO suites VALUES (?, ?, ?)",
            (suite, config, json.dumps(list(outlines))),
        )

    def _recount(self, suite: str, position: int, keys: set[str]) -> None:
        """Whether each of `keys` is held more than once now (only these can have changed)."""
        ordered = sorted(keys)
        for start in range(0, len(ordered), KEYS_PER_QUERY):
            batch = ordered[start : start + KEYS_PER_QUERY]
            marks = ",".join("?" * len(batch))
            self.db.execute(
                f"DELETE FROM dups WHERE suite = ? AND position = ? AND key IN ({marks})",
                (suite, position, *batch),
            )
            self.db.execute(
                "INSERT INTO dups SELECT suite, position, key FROM keys "
                f"WHERE suite = ? AND position = ? AND key IN ({marks}) "
                "GROUP BY suite, position, key HAVING COUNT(*) > 1",
                (suite, position, *batch),
            )
