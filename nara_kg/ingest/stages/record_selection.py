"""record_selection: one row per naId across every live file (graph-wide), and the tables that
go with it: the parsed index, the alias table, the rejects table people read.

`parse_inputs` is the whole-export form (every file parsed, then selected); `chosen_rows_by_file`
and `read_aliases` read the selection back for the later stages.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from nara_kg.ingest.inputs import SKIPPED_FILE, InputFile, SkippedFile, file_id_of, scan_input_tree
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.changes import ChangeSet, update_record_index
from nara_kg.ingest.stages.common import read_json, write_table
from nara_kg.ingest.stages.parsed_records import parse_file
from nara_kg.ingest.stages.selection_reduce import (
    SelectionUpdate,
    alias_count,
    digests,
    duplicates,
    finish,
    update_selection,
    write_selection_tables,
)
from nara_kg.ingest.stages.selection_store import SelectionStore
from nara_kg.model.progress import Log, quiet
from nara_kg.model.tables import PARSED_INDEX_SCHEMA, REJECT_SCHEMA, Col

#: A file's chosen record rows (:func:`chosen_rows_by_file`), ascending.
ChosenRows = npt.NDArray[np.int64]

#: naIds with duplicates logged one line each (the rest counted in one line).
DUPLICATES_LOGGED = 20
#: The parse stats counted per file, each also a column of the parsed index.
_COUNT_COLUMNS = (Col.LINES, Col.RECORDS, Col.STUBS, Col.REJECTED)


@dataclass
class LiveFiles:
    """The files the graph is built from: on disk now and parsed."""

    files: list[InputFile]
    #: On disk but not parsed yet (their partitions have not run).
    pending: list[str]
    #: Parsed before but gone from the input: their parts were removed.
    removed: list[str]
    #: Present but not readable as input (file-level rejects).
    skipped: list[SkippedFile] = field(default_factory=list)


def live_files(
    data_dir: Path, layout: WorkLayout, *, follow_external_links: bool = False
) -> LiveFiles:
    """Files present under `data_dir` whose parse is on record, in path order; the parts of
    files no longer present are deleted, so their records leave the graph. A file present but
    unreadable now keeps its last parse (nothing is lost) and is reported as skipped."""
    layout.ensure()
    tree = scan_input_tree(data_dir, follow_external_links=follow_external_links)
    kept = [s.rel_path for s in tree.skipped if layout.parse_stats(file_id_of(s.rel_path)).exists()]
    on_disk = sorted([*tree.files, *kept])
    present_ids = {file_id_of(rel): rel for rel in on_disk}
    removed: list[str] = []
    for stats_path in sorted(layout.parsed_dir.glob("*.stats.json")):
        file_id = stats_path.name.removesuffix(".stats.json")
        if file_id not in present_ids:
            gone = read_json(stats_path) or {}
            removed.append(str(gone.get("rel_path", file_id)))
            for path in layout.per_file_paths(file_id):
                path.unlink(missing_ok=True)
    files: list[InputFile] = []
    pending: list[str] = []
    for rel in on_disk:
        known = read_json(layout.parse_stats(file_id_of(rel)))
        if known is None or not layout.parsed_part(file_id_of(rel)).exists():
            pending.append(rel)
            continue
        files.append(
            InputFile(path=data_dir / rel, rel_path=rel, size=0, sha256=str(known["sha256"]))
        )
    return LiveFiles(files=files, pending=pending, removed=sorted(removed), skipped=tree.skipped)


@dataclass
class ParseResult:
    files_parsed: int = 0
    files_skipped: int = 0
    parts_removed: int = 0
    files_pending: list[str] = field(default_factory=list)
    lines: int = 0
    records: int = 0
    stubs: int = 0
    rejected: int = 0
    by_type: Counter[str] = field(default_factory=Counter)
    reject_reasons: Counter[str] = field(default_factory=Counter)
    chosen_records: int = 0
    chosen_stubs: int = 0
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    aliases: int = 0
    per_file: list[dict[str, Any]] = field(default_factory=list)
    #: What this selection changed since the last one (None when it selected nothing).
    changes: ChangeSet | None = None
    #: What the reduce read and decided.
    update: SelectionUpdate | None = None

    @property
    def reject_share(self) -> float:
        return self.rejected / self.lines if self.lines else 0.0


def select_live_records(
    data_dir: Path,
    layout: WorkLayout,
    *,
    follow_external_links: bool = False,
    full: bool = False,
    log: Log = quiet,
) -> ParseResult:
    """One row per naId across every live file (graph-wide): the selection, the alias table,
    the index of live parts and the rejects table people read. A file that cannot be read
    counts as one rejected line. Only the files whose parsed part changed since the last
    complete selection are read (selection_reduce); every file with `full`."""
    live = live_files(data_dir, layout, follow_external_links=follow_external_links)
    result = ParseResult(parts_removed=len(live.removed), files_pending=live.pending)
    for rel in live.removed:
        log(f"{rel} is gone from the input: its records leave the graph")
    if live.pending:
        log(f"{len(live.pending)} files are not parsed yet (their partitions have not run)")
    index_rows: list[dict[str, Any]] = []
    for file in live.files:
        stats = read_json(layout.parse_stats(file.file_id)) or {}
        counts = {key: int(stats.get(key, 0)) for key in _COUNT_COLUMNS}
        row: dict[str, Any] = {
            Col.FILE_ID: file.file_id,
            Col.REL_PATH: file.rel_path,
            Col.SHA256: file.sha256,
            **counts,
            Col.BY_TYPE: json.dumps(stats.get("by_type", {}), sort_keys=True),
            Col.REJECT_REASONS: json.dumps(stats.get("reject_reasons", {}), sort_keys=True),
        }
        index_rows.append(row)
        result.lines += counts[Col.LINES]
        result.records += counts[Col.RECORDS]
        result.stubs += counts[Col.STUBS]
        result.rejected += counts[Col.REJECTED]
        result.by_type.update(stats.get("by_type", {}))
        result.reject_reasons.update(stats.get("reject_reasons", {}))
        result.per_file.append({k: row[k] for k in (Col.REL_PATH, *_COUNT_COLUMNS)})
    for skipped in live.skipped:
        log(f"{skipped.rel_path}: {skipped.reason}")
        result.lines += 1
        result.rejected += 1
        result.reject_reasons[SKIPPED_FILE] += 1
        result.per_file.append(
            {
                Col.REL_PATH: skipped.rel_path,
                Col.LINES: 1,
                Col.RECORDS: 0,
                Col.STUBS: 0,
                Col.REJECTED: 1,
            }
        )
    write_table(pa.Table.from_pylist(index_rows, schema=PARSED_INDEX_SCHEMA), layout.parsed_index)
    rejected = {row[Col.FILE_ID]: int(row[Col.REJECTED]) for row in index_rows}
    with SelectionStore(layout.selection_state) as store:
        update = update_selection(layout, store, live.files, rejected, full=full)
        skipped_paths = json.dumps(sorted(s.rel_path for s in live.skipped))
        # The rejects of unchanged files are the same rows: the table is kept unless a file
        # read or dropped rejected lines, or the files skipped as unreadable changed.
        if (
            update.rejects_changed
            or store.meta("skipped") != skipped_paths
            or not layout.rejects.exists()
        ):
            _write_rejects_table(live.files, layout, live.skipped)
            with store.transaction():
                store.set_meta("skipped", skipped_paths)
        write_selection_tables(layout, store, live.files)
        result.changes = update_record_index(
            layout, digests(store, live.files), store.chosen_rows, store.all_aliases()
        )
        result.chosen_records, result.chosen_stubs = store.counts()
        result.duplicates = duplicates(store)
        result.aliases = alias_count(store)
        finish(store)
    result.update = update
    for duplicate in result.duplicates[:DUPLICATES_LOGGED]:
        dropped = duplicate["dropped_count"]
        more = dropped - len(duplicate["dropped"])
        log(
            f"naId {duplicate['naId']} appears {1 + dropped} times: kept "
            f"{duplicate['chosen']} (completeness {duplicate['chosen_completeness']}), dropped "
            f"{', '.join(duplicate['dropped'])}{f' and {more:,} more' if more else ''} "
            f"(completeness {duplicate['dropped_completeness']}{', ...' if more else ''})"
        )
    if len(result.duplicates) > DUPLICATES_LOGGED:
        log(
            f"... and {len(result.duplicates) - DUPLICATES_LOGGED:,} more naIds that appear "
            "more than once (listed in record_selection's metadata)"
        )
    return result


def parse_inputs(
    data_dir: Path,
    files: list[InputFile],
    layout: WorkLayout,
    *,
    log: Log = quiet,
    force: bool = False,
) -> ParseResult:
    """Parse every file (skipping unchanged ones), then choose one row per naId: the
    whole-export form of `parse_file` + `select_live_records`."""
    parsed = [parse_file(file, layout, force=force, log=log) for file in files]
    result = select_live_records(data_dir, layout, log=log)
    result.files_parsed = sum(1 for p in parsed if p.parsed)
    result.files_skipped = sum(1 for p in parsed if not p.parsed)
    return result


def _write_rejects_table(
    files: list[InputFile], layout: WorkLayout, skipped: list[SkippedFile] | None = None
) -> None:
    tables = [
        pq.read_table(layout.rejects_part(f.file_id))
        for f in files
        if layout.rejects_part(f.file_id).exists()
    ]
    if skipped:
        tables.append(
            pa.Table.from_pylist(
                [
                    {
                        Col.FILE_NAME: s.rel_path,
                        Col.LINE_NUM: 0,
                        Col.REASON: s.reason,
                        Col.RAW: None,
                    }
                    for s in skipped
                ],
                schema=REJECT_SCHEMA,
            )
        )
    table = pa.concat_tables(tables) if tables else REJECT_SCHEMA.empty_table()
    write_table(table.cast(REJECT_SCHEMA), layout.rejects)


def read_aliases(layout: WorkLayout) -> dict[int, int]:
    table = pq.read_table(layout.aliases)
    return dict(zip(table[Col.ALIAS].to_pylist(), table[Col.NA_ID].to_pylist(), strict=True))


def chosen_rows_by_file(layout: WorkLayout) -> list[tuple[str, ChosenRows]]:
    """(file_id, chosen record rows in ascending order) of every live file, in selection
    order. One array a file: at 10^6 records, sets of Python ints held about 150 MB."""
    if not layout.selection.exists():
        raise FileNotFoundError(f"{layout.selection} is missing: materialize record_selection")
    file_ids = pq.read_table(layout.parsed_index, columns=[Col.FILE_ID])[Col.FILE_ID].to_pylist()
    table = pq.read_table(layout.selection, columns=[Col.PART, Col.ROW])
    parts = table[Col.PART].to_numpy().astype(np.int64, copy=False)
    rows = table[Col.ROW].to_numpy().astype(np.int64, copy=False)
    order = np.lexsort((rows, parts))
    parts, rows = parts[order], rows[order]
    bounds = np.searchsorted(parts, np.arange(len(file_ids) + 1))
    return [
        (file_id, np.unique(rows[bounds[index] : bounds[index + 1]]))
        for index, file_id in enumerate(file_ids)
    ]
