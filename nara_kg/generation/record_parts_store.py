"""What community_reports read of each record, kept between its runs, so that after a small
change a coarse community's report is made from the records read before plus the changed ones,
not from every member read from the graph again.

A record's parts (:func:`nara_kg.graph.reports.record_parts`: its member row as the reports keep
it, its degree, the records its relationships point at, the authorities its text names) hold
nothing of another record: a relationship's titles and prominence are taken from its two ends'
parts when a context is made. So a record's kept parts go stale only when the record itself is
one that graph_communities queues for the reports (:mod:`nara_kg.generation.report_scope`: a
changed row, face or edges, or the other end of a changed edge), and a scoped run drops the
parts of every queued record before it reads anything; a run that looks at every community
drops them all. A run stopped half-way leaves its queue (the scope's queue is drained only by
a complete run), so the next run drops the same records again; parts written in between were
read from the graph as it was then.

Why SQLite (the standard library's `sqlite3`): the parts are read by naId in batches, a few
hundred bytes each (a member row keeps its text's header and the start of its body, what the
context shows: :func:`nara_kg.generation.report_rows.kept_member_row`), and one file holds
them without a server, as the scope's own state does.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nara_kg.ingest.sqlite_store import SqliteStore

SCHEMA = "CREATE TABLE IF NOT EXISTS record_parts (na_id INTEGER PRIMARY KEY, parts TEXT NOT NULL)"
#: naIds per `IN (...)` (SQLite's default limit of bound parameters is 32,766).
_KEYS_PER_QUERY = 5_000
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


class RecordPartsStore(SqliteStore):
    """The kept parts at `path`: naId -> parts (JSON)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute(SCHEMA)

    def get_many(self, na_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        found: dict[int, dict[str, Any]] = {}
        for start in range(0, len(na_ids), _KEYS_PER_QUERY):
            batch = [int(n) for n in na_ids[start : start + _KEYS_PER_QUERY]]
            marks = ",".join("?" * len(batch))
            for na_id, parts in self.db.execute(
                f"SELECT na_id, parts FROM record_parts WHERE na_id IN ({marks})", batch
            ):
                found[int(na_id)] = json.loads(parts)
        return found

    def put_many(self, parts: Mapping[int, dict[str, Any]]) -> None:
        with self.transaction():
            self.db.executemany(
                "INSERT OR REPLACE INTO record_parts VALUES (?, ?)",
                [(int(na_id), _ENCODER.encode(value)) for na_id, value in parts.items()],
            )

    def forget(self, na_ids: Iterable[int]) -> int:
        """Drop the parts of these records (their inputs may have changed); how many were kept."""
        with self.transaction():
            before = self.db.total_changes
            self.db.executemany(
                "DELETE FROM record_parts WHERE na_id = ?", [(int(n),) for n in na_ids]
            )
            return self.db.total_changes - before

    def clear(self) -> None:
        with self.transaction():
            self.db.execute("DELETE FROM record_parts")

    def __len__(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM record_parts").fetchone()[0])
