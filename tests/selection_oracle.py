"""The selection rule stated whole and in memory: every parsed row of every part read at once.

The pipeline decides naId by naId from the selection store (nara_kg.ingest.stages.
selection_reduce), which holds no more than a batch in memory; this is the statement its
choice is compared with in the tests (it held about 2 GB at 10^6 records, so it no longer runs
in a build).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute
import pyarrow.parquet as pq

from nara_kg.ingest.records import DROPPED_COPIES_LISTED
from nara_kg.ingest.stages.selection_reduce import CANDIDATE_COLUMNS
from nara_kg.model.tables import Col


@dataclass(frozen=True)
class Selection:
    """Which row represents each naId in the graph, across all parsed files."""

    #: (part index, row index) of every chosen row.
    chosen: frozenset[tuple[int, int]]
    #: organizationNames[] naId -> the organization's own naId (full records only).
    aliases: dict[int, int]
    #: naIds present as a full record in more than one place, with the choice made.
    duplicates: list[dict[str, Any]]
    records: int
    stubs: int


class UnreadablePart(RuntimeError):
    """A parsed part that cannot be read back (damaged on disk); `path` names it."""

    def __init__(self, path: Path, error: BaseException) -> None:
        super().__init__(f"{path}: {type(error).__name__}: {error}")
        self.path = path
        self.error = error


def select_records(parts: list[Path]) -> Selection:
    """One row per naId: a full record beats a stub, then the most complete copy wins.

    Ties go to the earliest file in path order and then the earliest line, so the choice is
    deterministic. Stubs for naIds that are only nested organization names of a full
    organization record are dropped: those references resolve to the organization itself.
    """
    tables = []
    for index, part in enumerate(parts):
        try:
            table = pq.read_table(part, columns=CANDIDATE_COLUMNS, page_checksum_verification=True)
        except (OSError, pa.ArrowException, ValueError) as error:
            raise UnreadablePart(part, error) from error
        table = table.append_column(Col.PART, pa.array(np.full(len(table), index, dtype=np.int32)))
        table = table.append_column(Col.ROW, pa.array(np.arange(len(table), dtype=np.int64)))
        tables.append(table)
    if not tables:
        return Selection(frozenset(), {}, [], 0, 0)
    table = pa.concat_tables(tables)

    aliases: dict[int, int] = {}
    full_orgs = table.filter(
        pa.compute.and_(
            pa.compute.invert(table[Col.IS_STUB]),
            pa.compute.equal(table[Col.NODE_TYPE], "organization"),
        )
    )
    for na_id, alias_list in zip(
        full_orgs[Col.NA_ID].to_pylist(), full_orgs[Col.ALIASES].to_pylist(), strict=True
    ):
        for alias in alias_list or []:
            if alias != na_id:
                aliases.setdefault(alias, na_id)

    na_ids = table[Col.NA_ID].to_numpy()
    stub = table[Col.IS_STUB].to_numpy(zero_copy_only=False).astype(np.int8)
    completeness = table[Col.COMPLETENESS].to_numpy().astype(np.int64)
    part_index = table[Col.PART].to_numpy()
    row_index = table[Col.ROW].to_numpy()
    # lexsort: last key is primary.
    order = np.lexsort((row_index, part_index, -completeness, stub, na_ids))
    sorted_ids = na_ids[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = sorted_ids[1:] != sorted_ids[:-1]
    full_record_ids = set(na_ids[stub == 0].tolist())

    chosen: set[tuple[int, int]] = set()
    records = stubs = 0
    for position in np.flatnonzero(first):
        row = order[position]
        na_id = int(na_ids[row])
        is_stub = bool(stub[row])
        if is_stub and na_id in aliases and na_id not in full_record_ids:
            continue
        chosen.add((int(part_index[row]), int(row_index[row])))
        if is_stub:
            stubs += 1
        else:
            records += 1

    duplicates: list[dict[str, Any]] = []
    full_sorted = order[stub[order] == 0]
    ids_full = na_ids[full_sorted]
    if len(ids_full) > 1:
        dup_mask = np.zeros(len(ids_full), dtype=bool)
        dup_mask[1:] |= ids_full[1:] == ids_full[:-1]
        dup_mask[:-1] |= ids_full[1:] == ids_full[:-1]
        file_names = table[Col.FILE_NAME].to_pylist()
        line_nums = table[Col.LINE_NUM].to_pylist()
        groups: dict[int, list[int]] = {}
        for row in full_sorted[dup_mask]:
            groups.setdefault(int(na_ids[row]), []).append(int(row))
        for na_id, rows in groups.items():
            shown = rows[1 : 1 + DROPPED_COPIES_LISTED]
            duplicates.append(
                {
                    "naId": na_id,
                    "chosen": f"{file_names[rows[0]]}:{line_nums[rows[0]]}",
                    "chosen_completeness": int(completeness[rows[0]]),
                    "dropped": [f"{file_names[r]}:{line_nums[r]}" for r in shown],
                    "dropped_completeness": [int(completeness[r]) for r in shown],
                    "dropped_count": len(rows) - 1,
                }
            )
    return Selection(frozenset(chosen), aliases, duplicates, records, stubs)
