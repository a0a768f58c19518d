"""The label score of entity_mentions kept up to date by the records a change set relinks,
instead of reading every labelled record's MENTIONED_IN again (95,098 labelled records at 10^5).

The score (:func:`nara_kg.linking.labels.score_labels`) is over (record, authority) pairs of
the labelled records: the pairs the labels expect and the pairs MENTIONED_IN holds. Both sets
are kept here, with their counts, so that a change set replaces the pairs of the records whose
chunks it relinked and the score follows with the same figures and samples a whole score gives
(the samples are the first wrong pairs in (record, authority) order, read from the sorted
tables by a range read that stops at the tenth). The ledger belongs to one labels file (by
digest) and to the write generation it was left at, as
:class:`nara_kg.build.mention_index.MentionIndex` does: any other state is rebuilt whole.

Why SQLite: the replaced records are a few keyed deletes and inserts, the counts are kept in
its meta table inside the same transaction, and the samples are range reads of its primary keys.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

from nara_kg.graph.batches import batched
from nara_kg.ingest.sqlite_store import SqliteStore
from nara_kg.linking.labels import LabelScore

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS labelled (record INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS expected (
  record INTEGER, authority INTEGER, PRIMARY KEY (record, authority)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS found (
  record INTEGER, authority INTEGER, PRIMARY KEY (record, authority)
) WITHOUT ROWID;
"""

#: Pairs in both sets, in `found` and in `expected`: the score's counts.
_COUNTS = ("true_positives", "found", "expected")
_GENERATION, _LABELS = "generation", "labels"
_SAMPLE = 10
_BATCH = 5_000


class LabelLedger(SqliteStore):
    """The ledger at `path` (see the module's notes)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(path, isolation_level=None)
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError:  # damaged: it is only a cache of the graph and labels
            path.unlink(missing_ok=True)
            self.db = sqlite3.connect(path, isolation_level=None)
            self.db.executescript(SCHEMA)

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, values: Mapping[str, object]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [(key, str(value)) for key, value in values.items()],
        )

    def matches(self, labels_digest: str, generation: str | None) -> bool:
        """Whether the ledger holds these labels and the pairs of the write at `generation`."""
        return (
            generation is not None
            and self._meta(_LABELS) == labels_digest
            and self._meta(_GENERATION) == generation
        )

    def advance(self, base: str | None, generation: str) -> None:
        """After a write that changed no MENTIONED_IN from `base`: it holds `generation` too."""
        if base is not None and self._meta(_GENERATION) == base:
            with self.transaction():
                self._set_meta({_GENERATION: generation})

    def rebuild(
        self,
        labels_digest: str,
        labels: Iterable[tuple[int, Iterable[int]]],
        found: Iterable[tuple[int, int]],
        generation: str | None,
    ) -> None:
        """Both sets whole, streamed: the label lines (record, authorities; a record may come
        back) and the pairs the graph holds (those of unlabelled records are dropped here)."""
        with self.transaction():
            for table in ("meta", "labelled", "expected", "found"):
                self.db.execute(f"DELETE FROM {table}")
            for lines in batched(labels, _BATCH):
                self.db.executemany(
                    "INSERT OR IGNORE INTO labelled VALUES (?)", ((r,) for r, _ in lines)
                )
                self.db.executemany(
                    "INSERT OR IGNORE INTO expected VALUES (?, ?)",
                    ((record, a) for record, names in lines for a in names),
                )
            for pairs in batched(found, _BATCH):
                self.db.executemany(
                    "INSERT OR IGNORE INTO found SELECT ?1, ?2 "
                    "WHERE EXISTS (SELECT 1 FROM labelled WHERE record = ?1)",
                    pairs,
                )
            self._set_meta({_LABELS: labels_digest, _GENERATION: generation or ""})
            self._set_meta(self._count_whole())

    def labelled(self, records: Iterable[int]) -> list[int]:
        """Those of `records` that have a label line, sorted."""
        ids = sorted(set(records))
        out: list[int] = []
        for start in range(0, len(ids), _BATCH):
            batch = ids[start : start + _BATCH]
            marks = ",".join("?" * len(batch))
            out += [
                int(r)
                for (r,) in self.db.execute(
                    f"SELECT record FROM labelled WHERE record IN ({marks})",
                    batch,
                )
            ]
        return sorted(out)

    def replace(
        self, records: Iterable[int], found: Iterable[tuple[int, int]], generation: str
    ) -> None:
        """`found`: every pair MENTIONED_IN now holds for the labelled `records`."""
        ids = sorted(set(records))
        new = sorted({pair for pair in found if pair[0] in set(ids)})
        with self.transaction():
            counts = self._counts()
            for record in ids:
                counts["found"] -= self._count("found", record)
                counts["true_positives"] -= self._true_positives(record)
                self.db.execute("DELETE FROM found WHERE record = ?", (record,))
            self.db.executemany("INSERT INTO found VALUES (?, ?)", new)
            for record in ids:
                counts["found"] += self._count("found", record)
                counts["true_positives"] += self._true_positives(record)
            self._set_meta({**counts, _GENERATION: generation})

    def score(self) -> LabelScore:
        counts = self._counts()
        true_positives = counts["true_positives"]
        return LabelScore(
            records=int(self.db.execute("SELECT count(*) FROM labelled").fetchone()[0]),
            true_positives=true_positives,
            false_positives=counts["found"] - true_positives,
            false_negatives=counts["expected"] - true_positives,
            false_positive_sample=self._first_missing("found", "expected"),
            false_negative_sample=self._first_missing("expected", "found"),
        )

    # -------------------------------------------------------------------------- reads
    def _counts(self) -> dict[str, int]:
        return {key: int(self._meta(key) or 0) for key in _COUNTS}

    def _count_whole(self) -> dict[str, int]:
        one = self.db.execute
        return {
            "true_positives": one(
                "SELECT count(*) FROM found JOIN expected USING (record, authority)"
            ).fetchone()[0],
            "found": one("SELECT count(*) FROM found").fetchone()[0],
            "expected": one("SELECT count(*) FROM expected").fetchone()[0],
        }

    def _count(self, table: str, record: int) -> int:
        statement = f"SELECT count(*) FROM {table} WHERE record = ?"
        return int(self.db.execute(statement, (record,)).fetchone()[0])

    def _true_positives(self, record: int) -> int:
        return int(
            self.db.execute(
                "SELECT count(*) FROM found JOIN expected USING (record, authority) "
                "WHERE found.record = ?",
                (record,),
            ).fetchone()[0]
        )

    def _first_missing(self, table: str, other: str) -> tuple[tuple[int, int], ...]:
        """The first pairs of `table` that `other` lacks, in (record, authority) order."""
        statement = (
            f"SELECT record, authority FROM {table} AS t WHERE NOT EXISTS "
            f"(SELECT 1 FROM {other} AS o WHERE o.record = t.record "
            "AND o.authority = t.authority) ORDER BY record, authority LIMIT ?"
        )
        return tuple((int(r), int(a)) for r, a in self.db.execute(statement, (_SAMPLE,)))
