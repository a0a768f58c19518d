"""Which communities community_reports has to look at again: those holding a record whose
report inputs changed since its last complete run, and those whose members changed.

A community's report is made from its members' rows (title, text, type, degree), the
relationships among them, what their text names (MENTIONED_IN with the authorities' headings)
and its sub-communities' reports. All of it is in the projection graph_communities streams
(each record's row hash and its edges, mentions included, as weighted edges from the authority),
so graph_communities hands each record to :meth:`ReportScope.update` as it streams by: a
record whose row hash, face or edges differ from the last stream's is pending. When its face
(its heading and type, which the reports of the communities holding the records it names show)
changed, so are the records at the other end of all its old and new edges. When only its edges
changed, so are the records at the other end of the edges that came, went or changed weight:
their degree, their relationships or their mentions changed with it, while a record at the end
of an edge that stayed as it was keeps its degree, its relationships and its mentions (an
authority that one more record names does not change the rows of the hundreds it named before).
A changed text alone changes only the reports of the communities holding the record.
community_reports reads the pending records, looks at the communities holding them, at the
communities whose members' hash differs from the one it made their report from, and at their
parents (a parent's context holds its sub-communities' reports), and deletes the pending
records it has seen only once its reports are written.

The same store keeps what community_reports made of the graph, each value with the hash it
was made from, so a value is used only while that hash is the graph's: each community's mention
totals (by its members' hash; a community in scope takes its outside sub-communities' totals)
and each member's report row (by its node's row hash; only changed records are read with text).
A record not pending has the row hash, degree and edges it had when its row and its outgoing
relationships were remembered (a changed edge queues both its ends), so a run scoped by the
change takes both from here without reading the record at all; what the store keeps of a record
leaves it with the record.

Why SQLite (the standard library's `sqlite3`): the stream comes in naId order, and one range
read per batch of the digests table finds the old digests and the records gone from the graph
without holding the table; the pending records are a queue that one step fills and another
drains, kept whole by transactions when a run is killed.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from nara_kg.generation.report_context_data import MentionTotals
from nara_kg.generation.report_order import parent_ids
from nara_kg.graph.communities import (
    DigestSums,
    ProjectedRecord,
    record_content_digest,
    record_projection_digest,
)
from nara_kg.ingest.sqlite_store import SqliteStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS record_digests (
  na_id INTEGER PRIMARY KEY, row_digest TEXT NOT NULL, outward_digest TEXT NOT NULL,
  targets TEXT NOT NULL, -- the edges, target:weight,... (before weights were kept: target,...)
  projection_digest TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pending_records (na_id INTEGER PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS report_members (community_id TEXT PRIMARY KEY, member_hash TEXT);
DROP TABLE IF EXISTS member_fields;
CREATE TABLE IF NOT EXISTS member_rows (
  na_id INTEGER PRIMARY KEY, made_from TEXT NOT NULL, value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS record_outgoing (na_id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS community_mentions (
  community_id TEXT PRIMARY KEY, made_from TEXT NOT NULL, value TEXT NOT NULL
);
"""

#: Tables of JSON values kept by key with the hash of what they were made from (a node's row
#: hash, a community's members' hash): table -> key column.
_MADE_FROM_TABLES = {"member_rows": "na_id", "community_mentions": "community_id"}

#: Tables read by key (those of :data:`_MADE_FROM_TABLES` and the records' relationships):
#: table -> key column.
_KEY_COLUMNS = {**_MADE_FROM_TABLES, "record_outgoing": "na_id"}
#: What the store keeps of each record besides its digests: gone with the record.
_RECORD_TABLES = ("member_rows", "record_outgoing")

#: Records per range read of the digests table.
BATCH = 5_000
#: Keys per `IN (...)` or Cypher `UNWIND` batch.
KEYS_PER_QUERY = 10_000
_SEQ = "seq"
_REPORT_SETTINGS = "report_settings"
#: The stored records' summed digests (:class:`DigestSums`) and the change log
#: (:mod:`nara_kg.build.projection_changes`) they were last brought up to date from.
_SUMS = ("projection_sum", "content_sum", "records")
_CHANGES_STORE = "changes_store"


def record_digests(record: ProjectedRecord) -> tuple[str, str]:
    """Digests of what the reports read of one record: of its row (read where it is a member)
    and of its face and edges (read also where the records it names are members)."""
    _, row_hash, face, edges = record
    return str(row_hash), _outward_digest(face, edges)


def _outward_digest(face: Any, edges: Sequence[tuple[int, float]]) -> str:
    return hashlib.sha256(json.dumps([face, edges]).encode()).hexdigest()[:24]


#: Between an edge's target and its weight in the stored edges (`target:weight,...`). Stores
#: written before the weights were kept hold targets alone (`target,...`).
_WEIGHT_MARK = ":"


def _stored_edges_text(edges: Sequence[tuple[int, float]]) -> str:
    # repr: the float that json.dumps wrote into the outward digest, read back exactly
    return ",".join(f"{int(target)}{_WEIGHT_MARK}{float(weight)!r}" for target, weight in edges)


def _stored_edges(text: str) -> list[tuple[int, float]] | None:
    """The stored edges (target, weight); None when the store kept their targets alone."""
    if not text:
        return []
    if _WEIGHT_MARK not in text:
        return None
    pairs = (item.split(_WEIGHT_MARK) for item in text.split(","))
    return [(int(target), float(weight)) for target, weight in pairs]


def _targets(text: str) -> list[int]:
    return [int(item.split(_WEIGHT_MARK)[0]) for item in text.split(",") if item]


def outward_change(
    face: Any, edges: Sequence[tuple[int, float]], old_outward: str, old_edges_text: str
) -> set[int]:
    """The records whose report inputs change with a record whose face or edges changed (pure):
    the other ends of every old and new edge when its face changed (or the store cannot tell),
    else those of the edges that came, went or changed weight."""
    new_ends = {int(target) for target, _ in edges}
    old_edges = _stored_edges(old_edges_text)
    if old_edges is None:
        return new_ends | set(_targets(old_edges_text))
    if _outward_digest(face, old_edges) != old_outward:
        return new_ends | {target for target, _ in old_edges}
    moved = {(int(t), float(w)) for t, w in edges} ^ set(old_edges)
    return {target for target, _ in moved}


#: A stored record: its row digest, outward digest, edges and projection digest.
_Stored = tuple[str, str, str, str]


class ReportScope(SqliteStore):
    """The on-disk state of :mod:`nara_kg.generation.report_scope` at `path`."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(record_digests)")}
        if columns and "projection_digest" not in columns:
            # Digests from before the projection's were kept per record: the next stream is
            # whole (no sums) and fills the table again.
            with self.transaction():
                self.db.execute("DROP TABLE record_digests")
                self.db.execute(
                    f"DELETE FROM meta WHERE key IN ({','.join('?' * len(_SUMS))})", _SUMS
                )
        self.db.executescript(SCHEMA)

    # --------------------------------------------------------------- graph_communities' side
    def update(self, records: Iterable[ProjectedRecord]) -> int:
        """Compare the projection's records (in naId order) with the last stream's digests and
        queue the records whose report inputs changed; one transaction. Returns how many
        records changed, appeared or went."""
        with self.transaction():
            comparison = self.comparison()
            for record in records:
                comparison.add(record)
            return comparison.finish()

    def comparison(self) -> ProjectionComparison:
        """:meth:`update`, fed one record at a time (as the projection streams by), inside the
        caller's :meth:`transaction`."""
        return ProjectionComparison(self, self._next_seq())

    def touched_comparison(self, sums: DigestSums) -> TouchedComparison:
        """A comparison of some records only (those the writers touched), fed a batch of asked
        naIds at a time with the records the graph holds of them, inside the caller's
        :meth:`transaction`; `sums` (the stored ones) are brought up to date as it goes."""
        return TouchedComparison(self, self._next_seq(), sums)

    def sums(self) -> DigestSums | None:
        """The stored records' summed digests; None before a whole stream has stored them."""
        marks = ",".join("?" * len(_SUMS))
        found = dict(self.db.execute(f"SELECT key, value FROM meta WHERE key IN ({marks})", _SUMS))
        if len(found) != len(_SUMS):
            return None
        projection, content, records = (found[key] for key in _SUMS)
        return DigestSums(int(projection, 16), int(content, 16), int(records))

    def changes_store(self) -> str | None:
        """The id of the change log the stored digests were last brought up to date from."""
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (_CHANGES_STORE,)).fetchone()
        return str(row[0]) if row else None

    def set_sums(self, sums: DigestSums, changes_store: str | None) -> None:
        values = (f"{sums.projection:032x}", f"{sums.content:032x}", str(sums.records))
        self.db.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", zip(_SUMS, values, strict=True)
        )
        if changes_store is None:
            self.db.execute("DELETE FROM meta WHERE key = ?", (_CHANGES_STORE,))
        else:
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)", (_CHANGES_STORE, changes_store)
            )

    def compare(
        self,
        batch: Sequence[ProjectedRecord],
        low: int | None,
        high: int | None,
        seq: int,
    ) -> int:
        """One batch against the stored digests of the naIds in (low, high] (high None: to the
        end): changed and new records are stored and queued, those stored but not streamed
        (gone from the graph) are deleted and queued, each with the other ends of its edges."""
        where, params = [], []
        if low is not None:
            where.append("na_id > ?")
            params.append(low)
        if high is not None:
            where.append("na_id <= ?")
            params.append(high)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        return self._compare(batch, self._stored(clause, params), seq, None)

    def compare_records(
        self,
        batch: Sequence[ProjectedRecord],
        asked: Sequence[int],
        seq: int,
        sums: DigestSums,
    ) -> int:
        """:meth:`compare` for the naIds `asked` alone (`batch`: the records the graph holds of
        them), with `sums` brought up to date."""
        stored: dict[int, _Stored] = {}
        for start in range(0, len(asked), KEYS_PER_QUERY):
            keys = list(asked[start : start + KEYS_PER_QUERY])
            stored.update(self._stored(f"WHERE na_id IN ({','.join('?' * len(keys))})", keys))
        return self._compare(batch, stored, seq, sums)

    def _stored(self, clause: str, params: Sequence[Any]) -> dict[int, _Stored]:
        return {
            int(na_id): (row_digest, outward_digest, targets, projection_digest)
            for na_id, row_digest, outward_digest, targets, projection_digest in self.db.execute(
                "SELECT na_id, row_digest, outward_digest, targets, projection_digest "
                f"FROM record_digests {clause}",
                params,
            )
        }

    def _compare(
        self,
        batch: Sequence[ProjectedRecord],
        stored: dict[int, _Stored],
        seq: int,
        sums: DigestSums | None,
    ) -> int:
        pending: set[int] = set()
        upserts = []
        for record in batch:
            na_id = int(record[0])
            row_digest, outward_digest = record_digests(record)
            projection = record_projection_digest(record)
            old = stored.pop(na_id, None)
            if (
                old is not None
                and old[:2] == (row_digest, outward_digest)
                and (int(old[3], 16) == projection)
            ):
                continue
            pending.add(na_id)
            if old is None:
                pending.update(int(target) for target, _ in record[3])
            elif old[1] != outward_digest:
                pending |= outward_change(record[2], record[3], old[1], old[2])
            if sums is not None:
                if old is not None:
                    sums.remove(int(old[3], 16), record_content_digest(na_id, old[0]))
                sums.add(projection, record_content_digest(na_id, record[1]))
            upserts.append(
                (
                    na_id,
                    row_digest,
                    outward_digest,
                    _stored_edges_text(record[3]),
                    f"{projection:032x}",
                )
            )
        for na_id, (row_digest, _, gone_targets, projection_digest) in stored.items():
            pending.add(na_id)
            pending.update(_targets(gone_targets))
            if sums is not None:
                sums.remove(int(projection_digest, 16), record_content_digest(na_id, row_digest))
        self.db.executemany("INSERT OR REPLACE INTO record_digests VALUES (?, ?, ?, ?, ?)", upserts)
        for table in ("record_digests", *_RECORD_TABLES):
            self.db.executemany(
                f"DELETE FROM {table} WHERE na_id = ?", [(na_id,) for na_id in stored]
            )
        self.db.executemany(
            "INSERT OR REPLACE INTO pending_records VALUES (?, ?)",
            [(na_id, seq) for na_id in pending],
        )
        return len(upserts) + len(stored)

    def commit_seq(self, seq: int) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_SEQ, str(seq)))

    def _next_seq(self) -> int:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (_SEQ,)).fetchone()
        return int(row[0]) + 1 if row else 1

    # --------------------------------------------------------------- community_reports' side
    def pending_seq(self) -> int:
        """The queue's last sequence number: what a reports run that starts now has seen."""
        return self._next_seq() - 1

    def pending_batches(self, up_to: int) -> Iterator[list[int]]:
        """The pending records queued up to sequence `up_to`, in batches."""
        cursor = self.db.execute(
            "SELECT na_id FROM pending_records WHERE seq <= ? ORDER BY na_id", (up_to,)
        )
        while rows := cursor.fetchmany(KEYS_PER_QUERY):
            yield [int(na_id) for (na_id,) in rows]

    def report_members(self) -> dict[str, str | None]:
        """Community id -> the members' hash its report was last made from."""
        return dict(self.db.execute("SELECT community_id, member_hash FROM report_members"))

    def mention_totals(self, member_hashes: Mapping[str, str | None]) -> dict[str, MentionTotals]:
        """The remembered mention totals of the communities asked (id -> members' hash now),
        of those whose totals were made from the same members."""
        return {
            community_id: {int(authority): entry for authority, entry in totals.items()}
            for community_id, totals in self._made_from("community_mentions", member_hashes)
        }

    def remember_mention_totals(
        self, rows: Iterable[tuple[str, str | None, MentionTotals]]
    ) -> None:
        """Remember communities' mention totals (id, members' hash, totals), one transaction.
        Totals are what the members' text names now; they stay true while no member is pending
        (a member whose mentions, or a named authority whose heading, changed is pending), so
        they can be remembered before the run's reports are written."""
        self._remember_made_from("community_mentions", rows)

    def member_fields(self, keys: Sequence[tuple[int, str]]) -> dict[int, dict[str, Any]]:
        """The remembered report rows of these (naId, node row hash) pairs, of those
        remembered from a node of the same row hash (the rows are a function of it)."""
        return dict(self._made_from("member_rows", dict(keys)))

    def remember_member_fields(self, rows: Sequence[tuple[int, str, dict[str, Any]]]) -> None:
        """Keep report rows by naId and the row hash they were made from, one transaction. A
        row holds its record's degree as it was when remembered: a record whose degree moves
        is pending (its edges, or those of a record at their other end, changed)."""
        self._remember_made_from("member_rows", rows)

    def settled_member_fields(self, na_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The remembered report rows of these records, whatever they were made from: for
        records not pending, whose rows and degrees are as they were when remembered."""
        return {
            int(na_id): json.loads(value) for na_id, value in self._values("member_rows", na_ids)
        }

    def outgoing(self, na_ids: Sequence[int]) -> dict[int, tuple[tuple[int, str], ...]]:
        """The remembered relationships (target naId, type) leaving these records: for
        records not pending, whose edges are as they were when remembered."""
        return {
            int(na_id): tuple((int(target), str(kind)) for target, kind in json.loads(value))
            for na_id, value in self._values("record_outgoing", na_ids)
        }

    def remember_outgoing(self, rows: Mapping[int, Sequence[tuple[int, str]]]) -> None:
        """Keep records' relationships (naId -> (target naId, type) each), one transaction."""
        with self.transaction():
            self.db.executemany(
                "INSERT OR REPLACE INTO record_outgoing VALUES (?, ?)",
                [
                    (na_id, json.dumps([list(edge) for edge in edges], separators=(",", ":")))
                    for na_id, edges in rows.items()
                ],
            )

    def pending_records(self) -> frozenset[int]:
        """Every record pending, whatever its sequence: those whose rows or edges may differ
        from what the store remembers of them."""
        return frozenset(
            int(na_id) for (na_id,) in self.db.execute("SELECT na_id FROM pending_records")
        )

    def _values(self, table: str, keys: Sequence[Any]) -> Iterator[tuple[Any, str]]:
        """(key, stored JSON) of the keys asked that `table` holds."""
        yield from self._keyed(table, _KEY_COLUMNS[table], "value", keys)

    def _made_from(self, table: str, asked: Mapping[Any, str | None]) -> Iterator[tuple[Any, Any]]:
        """(key, value) of the keys asked (key -> hash now) whose value in `table` was made
        from the same hash."""
        keys = [key for key, made_from in asked.items() if made_from]
        for key, made_from, value in self._keyed(
            table, _MADE_FROM_TABLES[table], "made_from, value", keys
        ):
            if made_from == asked[key]:
                yield key, json.loads(value)

    def _keyed(
        self, table: str, key_column: str, columns: str, keys: Sequence[Any]
    ) -> Iterator[tuple[Any, ...]]:
        """(key, *columns) of the keys asked that `table` holds, a batch of keys a query
        (`table` and the column names come from this module's fixed maps)."""
        for start in range(0, len(keys), KEYS_PER_QUERY):
            batch = list(keys[start : start + KEYS_PER_QUERY])
            yield from self.db.execute(
                f"SELECT {key_column}, {columns} FROM {table} "
                f"WHERE {key_column} IN ({','.join('?' * len(batch))})",
                batch,
            )

    def _remember_made_from(self, table: str, rows: Iterable[tuple[Any, str | None, Any]]) -> None:
        assert table in _MADE_FROM_TABLES
        with self.transaction():
            self.db.executemany(
                f"INSERT OR REPLACE INTO {table} VALUES (?, ?, ?)",
                [
                    (key, made_from, json.dumps(value, separators=(",", ":")))
                    for key, made_from, value in rows
                    if made_from
                ],
            )

    def report_settings(self) -> str | None:
        row = self.db.execute(
            "SELECT value FROM meta WHERE key = ?", (_REPORT_SETTINGS,)
        ).fetchone()
        return str(row[0]) if row else None

    def reports_written(
        self,
        *,
        up_to: int,
        members: Mapping[str, str | None],
        gone: Iterable[str],
        settings: str,
    ) -> None:
        """After a complete reports run: the records it saw leave the queue, and the members'
        hashes of the communities it made reports for (`members`) are remembered."""
        with self.transaction():
            self.db.execute("DELETE FROM pending_records WHERE seq <= ?", (up_to,))
            self.db.executemany(
                "INSERT OR REPLACE INTO report_members VALUES (?, ?)", members.items()
            )
            for table in ("report_members", "community_mentions"):
                self.db.executemany(
                    f"DELETE FROM {table} WHERE community_id = ?", [(cid,) for cid in gone]
                )
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)", (_REPORT_SETTINGS, settings)
            )


class ProjectionComparison:
    """One stream's comparison in progress: records are compared a batch at a time, in the
    transaction the caller holds (:meth:`ReportScope.transaction`); :meth:`finish` compares
    the last batch and records the queue's sequence number."""

    def __init__(self, scope: ReportScope, seq: int) -> None:
        self._scope, self._seq = scope, seq
        self._low: int | None = None
        self._batch: list[ProjectedRecord] = []
        self.changed = 0

    def add(self, record: ProjectedRecord) -> None:
        self._batch.append(record)
        if len(self._batch) >= BATCH:
            high = int(self._batch[-1][0])
            self.changed += self._scope.compare(self._batch, self._low, high, self._seq)
            self._low, self._batch = high, []

    def finish(self) -> int:
        self.changed += self._scope.compare(self._batch, self._low, None, self._seq)
        self._scope.commit_seq(self._seq)
        return self.changed


class TouchedComparison:
    """A comparison of the records the writers touched (:meth:`ReportScope.touched_comparison`)."""

    def __init__(self, scope: ReportScope, seq: int, sums: DigestSums) -> None:
        self._scope, self._seq, self.sums = scope, seq, sums
        self.changed = 0

    def add(self, asked: Sequence[int], records: Sequence[ProjectedRecord]) -> None:
        self.changed += self._scope.compare_records(records, asked, self._seq, self.sums)

    def finish(self, changes_store: str | None) -> int:
        self._scope.commit_seq(self._seq)
        self._scope.set_sums(self.sums, changes_store)
        return self.changed


def communities_to_report(
    outline: Sequence[Mapping[str, Any]],
    holding_pending: Iterable[str],
    remembered_members: Mapping[str, str | None],
) -> set[str]:
    """The communities whose reports are made again (pure): those holding a pending record,
    those without a current report (`stale` in the outline), those whose members' hash is not
    the one their report was made from, every parent of one of these (its context holds their
    reports), and below each, the only sub-community that has all its members (the community
    takes that sub-community's report, so it must be made in the same run)."""
    by_id = {str(c["id"]): c for c in outline}
    scope = {cid for cid in holding_pending if cid in by_id}
    for cid, community in by_id.items():
        if community.get("stale") or remembered_members.get(cid, "") != community.get("memberHash"):
            scope.add(cid)
    parent_of = parent_ids(outline)
    for cid in list(scope):
        parent = parent_of.get(cid)
        while parent is not None and parent not in scope:
            scope.add(parent)
            parent = parent_of.get(parent)
    for cid in list(scope):
        community = by_id[cid]
        while len(community["children"]) == 1:
            child = by_id.get(str(community["children"][0]))
            if child is None or int(child["size"] or 0) != int(community["size"] or 0):
                break
            scope.add(str(child["id"]))
            community = child
    return scope
