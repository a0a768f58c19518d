"""The naId selection across files, updated for the files whose parsed part changed.

The rule (stated whole, in memory, in tests/selection_oracle.py, which the tests compare this
with): a full record beats a stub, then the most complete copy wins, ties go to the first file
in path order and then the first row; a stub whose naId is only a nested organization name of a
full organization record is dropped. That choice depends only on the candidates of one naId
(and, for the stub rule, on the aliases naming it), so a run re-decides the naIds that the
changed, added and removed files hold, held before, or list as aliases, and nothing else: the
other files' parts are not opened.
The first run, a full rebuild and a state not marked complete put every file's candidates in the
state and decide every naId from it, a batch at a time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import groupby, islice
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from nara_kg.ingest.inputs import InputFile
from nara_kg.ingest.layout import WorkLayout, temporary_sibling
from nara_kg.ingest.records import DROPPED_COPIES_LISTED
from nara_kg.ingest.stages.common import corrupt_work_file
from nara_kg.ingest.stages.selection_store import Candidate, SelectionStore, batches
from nara_kg.model.tables import ALIAS_SCHEMA, SELECTION_SCHEMA, Col

#: Alias rows per write of the alias table.
ALIAS_ROWS_PER_WRITE = 65_536

#: The parsed parts' columns a choice is made by.
CANDIDATE_COLUMNS = [
    Col.NA_ID,
    Col.IS_STUB,
    Col.COMPLETENESS,
    Col.FILE_NAME,
    Col.LINE_NUM,
    Col.NODE_TYPE,
    Col.ALIASES,
]


@dataclass
class SelectionUpdate:
    """What one selection run read and decided."""

    #: True when every file was reduced (first run, full rebuild, incomplete state).
    whole: bool
    #: file_ids whose parsed parts were read.
    files_read: list[str] = field(default_factory=list)
    #: Parsed rows read (the candidates of the files read).
    rows_read: int = 0
    #: Files forgotten because they left the live set.
    files_dropped: int = 0
    #: naIds whose choice was decided again.
    na_ids_decided: int = 0
    #: Candidate rows read from the store to decide them (a naId's stubs only without a full
    #: record).
    candidates_compared: int = 0
    #: True when a file read or dropped rejected lines, now or before (the rejects table then
    #: has to be written again).
    rejects_changed: bool = False


def part_signature(path: Path) -> str:
    """A parsed part as written (always to a new file, renamed into place): its size and
    modification time, which survive the work folder being copied or moved."""
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def read_candidates(
    layout: WorkLayout, file_id: str
) -> tuple[list[Candidate], list[tuple[int, int, str, int]]]:
    """One file's parsed rows as candidates, and (alias, organization, file_id, row) of every
    alias its full organization records list."""
    path = layout.parsed_part(file_id)
    try:
        table = pq.read_table(path, columns=CANDIDATE_COLUMNS, page_checksum_verification=True)
    except (OSError, pa.ArrowException, ValueError) as error:
        raise corrupt_work_file(path, error, layout.parse_stats(file_id)) from error
    candidates: list[Candidate] = []
    aliases: list[tuple[int, int, str, int]] = []
    for row, item in enumerate(table.to_pylist()):
        na_id, stub = int(item[Col.NA_ID]), bool(item[Col.IS_STUB])
        org = not stub and item[Col.NODE_TYPE] == "organization"
        candidates.append(
            Candidate(
                na_id=na_id,
                file_id=file_id,
                row=row,
                is_stub=stub,
                completeness=int(item[Col.COMPLETENESS]),
                file_name=str(item[Col.FILE_NAME]),
                line_num=int(item[Col.LINE_NUM]),
                org=org,
            )
        )
        if org:
            aliases.extend(
                (int(a), na_id, file_id, row) for a in item[Col.ALIASES] or [] if a != na_id
            )
    return candidates, aliases


def update_selection(
    layout: WorkLayout,
    store: SelectionStore,
    files: list[InputFile],
    rejected: dict[str, int],
    *,
    full: bool,
) -> SelectionUpdate:
    """Bring the store's choice in step with the live `files` (path order); `rejected`: lines
    each file rejected. Leaves the store marked incomplete (see `finish`)."""
    trusted = not full and store.complete()
    known = store.files() if trusted else {}
    signatures = {f.file_id: part_signature(layout.parsed_part(f.file_id)) for f in files}
    live = set(signatures)
    changed = [f for f in files if known.get(f.file_id, ("",))[0] != signatures[f.file_id]]
    gone = sorted(set(known) - live)
    update = SelectionUpdate(whole=not trusted, files_dropped=len(gone))
    update.rejects_changed = not trusted or any(
        known.get(f, ("", 0))[1] or rejected.get(f, 0)
        for f in [*gone, *(c.file_id for c in changed)]
    )
    with store.transaction():
        store.mark(False)
        if not trusted:
            store.clear()
            _whole(layout, store, files, signatures, rejected, update)
            return update
        na_ids: set[int] = set()
        aliases: set[int] = set()
        for file_id in [*gone, *(f.file_id for f in changed)]:
            held, listed = store.drop_file(file_id)
            na_ids |= held
            aliases |= listed
        for file in changed:
            candidates, org_aliases = read_candidates(layout, file.file_id)
            store.put_file(
                file.file_id, file.rel_path, signatures[file.file_id], rejected.get(file.file_id, 0)
            )
            store.put_candidates(candidates, org_aliases)
            na_ids.update(c.na_id for c in candidates)
            aliases.update(a for a, *_ in org_aliases)
            update.files_read.append(file.file_id)
            update.rows_read += len(candidates)
        for batch in batches(aliases):
            store.set_aliases(batch, store.alias_owners(batch))
        moved: set[str] = {f.file_id for f in changed}
        for batch in batches(na_ids | aliases):
            before = store.chosen_of(batch)
            moved |= files_moved(before, _decide(store, batch, update))
            update.na_ids_decided += len(batch)
        for file_id in sorted(moved & live):
            store.set_chosen_digest(file_id)
    return update


Chosen = dict[int, tuple[str, int, int]]


def _decide(store: SelectionStore, na_ids: list[int], update: SelectionUpdate) -> Chosen:
    """Choose the row of each of `na_ids` from its candidates and store it; naId -> (file_id,
    row, is_stub) of those that have one. A full record beats every stub, so the stubs of a
    naId are read only when it has no full record (the count goes to
    `update.candidates_compared`)."""
    aliased = store.aliases_of(na_ids)
    chosen: dict[int, tuple[str, int, int]] = {}
    dups: list[int] = []
    full = store.full_candidates(na_ids)
    for na_id, rows_iter in groupby(full, key=lambda r: r[0]):
        rows = list(rows_iter)
        if len(rows) > 1:
            dups.append(na_id)
        _, file_id, row, *_ = rows[0]
        chosen[na_id] = (file_id, row, 0)
    stubs = store.first_stubs([n for n in na_ids if n not in chosen])
    for na_id, file_id, row in stubs:
        if na_id not in aliased:  # else only a nested name of a full organization record
            chosen[na_id] = (file_id, row, 1)
    update.candidates_compared += len(full) + len(stubs)
    store.set_chosen(na_ids, chosen, dups)
    return chosen


def files_moved(before: Chosen, after: Chosen) -> set[str]:
    """The files whose chosen rows differ between `before` and `after` (a naId's row moved
    from one file to another counts for both)."""
    moved: set[str] = set()
    for na_id in {*before, *after}:
        if before.get(na_id) != after.get(na_id):
            moved.update(c[0] for c in (before.get(na_id), after.get(na_id)) if c)
    return moved


def _whole(
    layout: WorkLayout,
    store: SelectionStore,
    files: list[InputFile],
    signatures: dict[str, str],
    rejected: dict[str, int],
    update: SelectionUpdate,
) -> None:
    """Every file's candidates into the (cleared) store, one file at a time, then every alias
    and every naId decided from the store a batch at a time, by the same rule a changed file's
    naIds are decided by: nothing of the export is held in memory at once (the full reduce in
    memory held every parsed row of every file: about 2 GB at 10^6 records)."""
    for file in files:
        candidates, org_aliases = read_candidates(layout, file.file_id)
        store.put_file(
            file.file_id, file.rel_path, signatures[file.file_id], rejected.get(file.file_id, 0)
        )
        store.put_candidates(candidates, org_aliases)
        update.files_read.append(file.file_id)
        update.rows_read += len(candidates)
    for batch in store.listed_aliases():
        store.set_aliases(batch, store.alias_owners(batch))
    for batch in store.candidate_na_ids():
        _decide(store, batch, update)
        update.na_ids_decided += len(batch)
    for file in files:
        store.set_chosen_digest(file.file_id)


def finish(store: SelectionStore) -> None:
    """Every table of the selection was written from the store: it is complete."""
    with store.transaction():
        store.mark(True)


# ------------------------------------------------------------------------------ tables
def write_selection_tables(
    layout: WorkLayout, store: SelectionStore, files: list[InputFile]
) -> None:
    """The chosen rows (part = the file's place in path order) and the alias table, written
    from the store one file at a time."""
    tmp = temporary_sibling(layout.selection)
    with pq.ParquetWriter(tmp, SELECTION_SCHEMA, write_page_checksum=True) as writer:
        for part, file in enumerate(files):
            rows = store.chosen_rows(file.file_id)
            if rows:
                writer.write_table(
                    pa.table(
                        {
                            Col.PART: pa.array([part] * len(rows), pa.int32()),
                            Col.ROW: pa.array(rows, pa.int64()),
                        },
                        schema=SELECTION_SCHEMA,
                    )
                )
    tmp.replace(layout.selection)
    tmp = temporary_sibling(layout.aliases)
    with pq.ParquetWriter(tmp, ALIAS_SCHEMA, write_page_checksum=True) as writer:
        # all_aliases is in alias order (the alias is the table's rowid).
        pairs = store.all_aliases()
        while page := list(islice(pairs, ALIAS_ROWS_PER_WRITE)):
            writer.write_table(
                pa.table(
                    {
                        Col.ALIAS: pa.array([a for a, _ in page], pa.int64()),
                        Col.NA_ID: pa.array([n for _, n in page], pa.int64()),
                    },
                    schema=ALIAS_SCHEMA,
                )
            )
    tmp.replace(layout.aliases)


def duplicates(store: SelectionStore) -> list[dict[str, Any]]:
    """The naIds present as a full record more than once, with the choice made (as the full
    reduce lists them: by naId, the copies in the order they rank)."""
    found: list[dict[str, Any]] = []
    for batch in batches(store.duplicated()):
        for na_id, rows_iter in groupby(store.full_candidates(batch), key=lambda r: r[0]):
            rows = list(rows_iter)
            shown = rows[1 : 1 + DROPPED_COPIES_LISTED]
            found.append(
                {
                    "naId": na_id,
                    "chosen": f"{rows[0][4]}:{rows[0][5]}",
                    "chosen_completeness": int(rows[0][3]),
                    "dropped": [f"{r[4]}:{r[5]}" for r in shown],
                    "dropped_completeness": [int(r[3]) for r in shown],
                    "dropped_count": len(rows) - 1,
                }
            )
    return found


def alias_count(store: SelectionStore) -> int:
    return int(store.db.execute("SELECT count(*) FROM aliases").fetchone()[0])


def digests(store: SelectionStore, files: Iterable[InputFile]) -> dict[str, str]:
    known = store.files()
    return {f.file_id: known[f.file_id][2] for f in files}
