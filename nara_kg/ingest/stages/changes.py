"""The change set: which chosen records record_selection added, changed or removed since its
last successful run, and which files' parts changed. Every graph writer reads it and touches
only those records (and the neighbours whose edges follow from them).

Each selection gets a fresh `generation`; a change set is relative to the previous one
(`base`). A writer that recorded, after its last complete write, the generation equal to a
change set's `base` applies the change set; one that recorded the change set's own generation
has applied it already; any other (no record, a killed run, a foreign or rebuilt index) compares
the whole graph as before. The change set is written before the index's transaction commits and
names the generation that transaction sets, so a run killed in between leaves a change set that
no index confirms (:func:`read_changes` then answers None, and the writers compare whole).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.common import PARQUET_DAMAGE, corrupt_work_file, read_json, write_json
from nara_kg.ingest.stages.record_index import IndexedRecord, RecordIndex
from nara_kg.model.tables import Col


@dataclass(frozen=True)
class ChangeSet:
    """What one selection changed, relative to the selection before it."""

    generation: str
    #: The generation this one is relative to; None when there was no index to compare with
    #: (the first selection, or a damaged index): every writer then compares whole.
    base: str | None
    added: tuple[int, ...] = ()
    changed: tuple[int, ...] = ()
    removed: tuple[int, ...] = ()
    #: The parent each changed or removed record had before (walked for ancestor cycles that
    #: the change may have broken).
    old_parents: tuple[tuple[int, int], ...] = ()
    #: Organization-name aliases added, removed or pointed at another organization.
    aliases: tuple[int, ...] = ()
    #: file_ids whose parts were added, changed or removed.
    files: tuple[str, ...] = ()
    #: Records whose chunk rows were read to compute this (those of the changed files).
    records_read: int = 0

    @property
    def na_ids(self) -> tuple[int, ...]:
        """Every added, changed or removed naId, sorted."""
        return tuple(sorted({*self.added, *self.changed, *self.removed}))

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed or self.aliases)

    def to_json(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "base": self.base,
            "added": list(self.added),
            "changed": list(self.changed),
            "removed": list(self.removed),
            "old_parents": [list(p) for p in self.old_parents],
            "aliases": list(self.aliases),
            "files": list(self.files),
            "records_read": self.records_read,
        }

    @classmethod
    def from_json(cls, payload: Mapping[str, Any]) -> ChangeSet:
        return cls(
            generation=str(payload["generation"]),
            base=None if payload.get("base") is None else str(payload["base"]),
            added=tuple(int(x) for x in payload.get("added", ())),
            changed=tuple(int(x) for x in payload.get("changed", ())),
            removed=tuple(int(x) for x in payload.get("removed", ())),
            old_parents=tuple((int(a), int(b)) for a, b in payload.get("old_parents", ())),
            aliases=tuple(int(x) for x in payload.get("aliases", ())),
            files=tuple(str(x) for x in payload.get("files", ())),
            records_read=int(payload.get("records_read", 0)),
        )


@dataclass(frozen=True)
class WriterPlan:
    """How one writer proceeds, from its recorded generation and the current change set."""

    #: "whole" (compare everything), "changes" (apply `changes`) or "done" (already applied).
    mode: str
    changes: ChangeSet | None = None

    @property
    def generation(self) -> str | None:
        """What the writer records after a complete write (None: no change set applies)."""
        return self.changes.generation if self.changes is not None else None


def plan_for(changes: ChangeSet | None, writer_generation: str | None, *, full: bool) -> WriterPlan:
    """Whether a writer that last completed at `writer_generation` may apply `changes`."""
    if changes is None:
        return WriterPlan("whole")
    if full or writer_generation is None:
        return WriterPlan("whole", changes)
    if writer_generation == changes.generation:
        return WriterPlan("done", changes)
    if changes.base is not None and writer_generation == changes.base:
        return WriterPlan("changes", changes)
    return WriterPlan("whole", changes)


def read_changes(layout: WorkLayout) -> ChangeSet | None:
    """The last selection's change set, when the index confirms it (see the module's notes)."""
    payload = read_json(layout.changes)
    if payload is None or not layout.record_index.exists():
        return None
    try:
        changes = ChangeSet.from_json(payload)
    except (KeyError, TypeError, ValueError):
        return None
    with RecordIndex(layout.record_index) as index:
        return changes if index.generation() == changes.generation else None


# ------------------------------------------------------------------------- computing it


def record_digest(row_hashes: Sequence[str]) -> str:
    """One digest of a record's chunk rows in order: equal exactly when every chunk is."""
    return hashlib.sha256("\n".join(row_hashes).encode()).hexdigest()


def dirty_files(previous: Mapping[str, str], current: Mapping[str, str]) -> list[str]:
    """file_ids added, removed or whose fingerprint changed."""
    return sorted(
        {f for f, print_ in current.items() if previous.get(f) != print_}
        | (set(previous) - set(current))
    )


_INDEX_COLUMNS = [
    Col.NA_ID,
    Col.RECORD_ROW,
    Col.CHUNK_SEQ_ID,
    Col.ROW_HASH,
    Col.NODE_TYPE,
    Col.CHUNK_COUNT,
    Col.PARENT_NA_ID,
    Col.REFERENCES,
]


def file_fingerprint(layout: WorkLayout, file_id: str, chosen: str) -> str:
    """What a file's records in the graph follow from: its chunk part (chunker key, size,
    modification time) and which of its rows are chosen (`chosen`: their digest,
    selection_store.chosen_digest)."""
    stats = read_json(layout.chunk_stats(file_id)) or {}
    path = layout.chunk_part(file_id)
    try:
        stat = path.stat()
        on_disk = f"{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ino}"
    except FileNotFoundError:
        on_disk = "missing"
    return f"{stats.get('key', '')}|{on_disk}|{chosen}"


def indexed_records(layout: WorkLayout, file_id: str, rows: Iterable[int]) -> list[IndexedRecord]:
    """The chosen `rows` of one file's chunk part, one entry per record."""
    wanted = pa.array(sorted(rows), type=pa.int64())
    if len(wanted) == 0:
        return []
    if (
        layout.chunk_part(file_id).stat().st_mtime_ns
        < layout.parsed_part(file_id).stat().st_mtime_ns
    ):
        # Chunked before its latest parse: its rows are not the parse's rows.
        raise FileNotFoundError(f"{layout.chunk_part(file_id)} predates its file's parse")
    table = pq.read_table(layout.chunk_part(file_id), columns=_INDEX_COLUMNS)
    table = table.filter(pc.is_in(table[Col.RECORD_ROW], value_set=wanted))
    table = table.sort_by([(Col.RECORD_ROW, "ascending"), (Col.CHUNK_SEQ_ID, "ascending")])
    records: list[IndexedRecord] = []
    for row, chunks_iter in groupby(table.to_pylist(), key=lambda r: r[Col.RECORD_ROW]):
        chunks = list(chunks_iter)
        first = chunks[0]
        references = tuple(
            (str(rel), int(na_id)) for rel, na_id, *_ in json.loads(first[Col.REFERENCES] or "[]")
        )
        records.append(
            IndexedRecord(
                na_id=int(first[Col.NA_ID]),
                file_id=file_id,
                row=int(row),
                digest=record_digest([c[Col.ROW_HASH] for c in chunks]),
                node_type=str(first[Col.NODE_TYPE]),
                chunk_count=int(first[Col.CHUNK_COUNT] or len(chunks)),
                parent=None if first[Col.PARENT_NA_ID] is None else int(first[Col.PARENT_NA_ID]),
                references=references,
            )
        )
    return records


def update_record_index(
    layout: WorkLayout,
    chosen: Mapping[str, str],
    rows_of: Callable[[str], Iterable[int]],
    aliases: Iterable[tuple[int, int]],
) -> ChangeSet:
    """Bring the record index in step with the selection (`chosen`: file_id -> the digest of
    its chosen rows, for every live file; `rows_of(file_id)`: those rows) by reading only the
    changed files' chunk parts, and write the change set. An index that cannot be read is made
    again from every file (base None)."""
    generation = uuid.uuid4().hex
    try:
        index = RecordIndex(layout.record_index)
        base = index.generation()
    except Exception:
        layout.record_index.unlink(missing_ok=True)
        index = RecordIndex(layout.record_index)
        base = None
    with index:
        if base is None:
            # No generation: whatever the tables hold was never committed whole.
            index.db.executescript(
                "DELETE FROM files; DELETE FROM records; DELETE FROM refs; DELETE FROM aliases;"
            )
        current = {f: file_fingerprint(layout, f, digest) for f, digest in chosen.items()}
        dirty = dirty_files(index.fingerprints(), current)
        changes_json: dict[str, Any]
        with index.transaction():
            # Every changed file's rows go before any is put back: a naId may move between them.
            # A naId chosen in an unchanged file is in neither: its file's chosen rows and
            # chunks are the same, so its choice could not have moved.
            for file_id in dirty:
                index.drop_file(file_id)
            unreadable = False
            for file_id in dirty:
                if file_id not in current:
                    continue
                try:
                    fresh = indexed_records(layout, file_id, rows_of(file_id))
                except PARQUET_DAMAGE:
                    # Not chunked yet (the whole-export form selects before chunking) or
                    # damaged: its records are not indexed (the next selection reads it again)
                    # and no writer takes this change set (they compare whole, and a damaged
                    # part is reported by the writer that reads it).
                    unreadable = True
                    continue
                index.put(fresh)
                index.set_file(file_id, current[file_id])
            if unreadable:
                base = None
            moved_aliases = index.replace_aliases(aliases)
            differences = index.differences()
            changes = ChangeSet(
                generation=generation,
                base=base,
                added=differences.added if base is not None else (),
                changed=differences.changed,
                removed=differences.removed,
                old_parents=differences.old_parents,
                aliases=tuple(moved_aliases) if base is not None else (),
                files=tuple(dirty),
                records_read=differences.put,
            )
            changes_json = changes.to_json()
            write_json(layout.changes, changes_json)
            if unreadable:
                # No generation: no writer takes this change set, and the next selection
                # indexes every file again instead of diffing against a partial index.
                index.clear_generation()
            else:
                index.set_generation(generation)
    return changes


def chunks_of_records(
    layout: WorkLayout, records: Iterable[IndexedRecord], columns: list[str]
) -> Iterator[dict[str, Any]]:
    """The chunk rows of the given chosen records, read from their files' parts only."""
    by_file: dict[str, list[int]] = {}
    for record in records:
        by_file.setdefault(record.file_id, []).append(record.row)
    wanted_columns = sorted({*columns, Col.RECORD_ROW})
    for file_id, rows in sorted(by_file.items()):
        path = layout.chunk_part(file_id)
        try:
            table = pq.read_table(path, columns=wanted_columns, page_checksum_verification=True)
        except PARQUET_DAMAGE as error:
            raise corrupt_work_file(path, error, layout.chunk_stats(file_id)) from error
        kept = table.filter(pc.is_in(table[Col.RECORD_ROW], value_set=pa.array(rows, pa.int64())))
        yield from kept.select(columns).to_pylist()
