"""The tables the Great Expectations suites validate, read from the pipeline's Parquet.

Only the columns a suite needs are read. `parsed_records` is validated on the *chosen* rows
(`layout.selection`: one row per naId, the row the graph is built from), since a naId is
legitimately present more than once across parts (stubs, duplicate copies) before selection.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import chunk_parts, iter_chunks
from nara_kg.model.schema import CATALOG_URL
from nara_kg.model.tables import Col

RECORD_COLUMNS: tuple[str, ...] = (
    Col.NA_ID,
    Col.NODE_TYPE,
    Col.RECORD_KIND,
    Col.IS_STUB,
    Col.FILE_NAME,
    Col.LINE_NUM,
    Col.SOURCE,
)
CHUNK_COLUMNS: tuple[str, ...] = (
    Col.CHUNK_ID,
    Col.NA_ID,
    Col.CHUNK_SEQ_ID,
    Col.NODE_TYPE,
    Col.TOKENS,
    Col.CHUNK_COUNT,
)
#: A record's properties JSON with where the record came from.
_TRACED_PROPERTIES: list[str] = [Col.NA_ID, Col.FILE_NAME, Col.LINE_NUM, Col.PROPERTIES]
DATE_PREFIX = "logicalDate_"
#: Sequence ids shown for a record whose chunk sequence is broken.
SEQ_PREVIEW = 12


#: The columns a frame validated file by file carries besides its own: the row's file and its
#: position among that file's rows (see quality.incremental).
FILE = "__file"
POS = "__pos"


def require(path: Path, asset: str) -> None:
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: materialize {asset} first")


def parsed_parts(layout: WorkLayout) -> list[Path]:
    """The parsed parts in selection order (the order of the parsed index)."""
    require(layout.parsed_index, "record_selection")
    file_ids = pq.read_table(layout.parsed_index, columns=[Col.FILE_ID])[Col.FILE_ID].to_pylist()
    return [layout.parsed_part(file_id) for file_id in file_ids]


def iter_chosen(layout: WorkLayout, columns: list[str]) -> Iterator[pa.Table]:
    """The chosen rows of each parsed part, one table per part (memory: one part at a time)."""
    require(layout.selection, "record_selection")
    selection = pq.read_table(layout.selection)
    rows_by_part: dict[int, list[int]] = {}
    for part, row in zip(
        selection[Col.PART].to_pylist(), selection[Col.ROW].to_pylist(), strict=True
    ):
        rows_by_part.setdefault(part, []).append(row)
    for index, path in enumerate(parsed_parts(layout)):
        wanted = sorted(rows_by_part.get(index, []))
        if not wanted:
            continue
        yield pq.read_table(path, columns=columns).take(pa.array(wanted, pa.int64()))


def cut_records(layout: WorkLayout) -> list[dict[str, Any]]:
    """The chosen records whose body text was cut: file, line, naId and full length."""
    found: list[dict[str, Any]] = []
    for table in iter_chosen(layout, _TRACED_PROPERTIES):
        found.extend(cut_rows(table))
    return found


def cut_rows(table: pa.Table) -> list[dict[str, Any]]:
    """The rows of `table` (with _TRACED_PROPERTIES) whose body text was cut."""
    from nara_kg.ingest.records import BODY_CUT_FROM

    found: list[dict[str, Any]] = []
    for row in table.to_pylist():
        if BODY_CUT_FROM not in row[Col.PROPERTIES]:
            continue
        length = json.loads(row[Col.PROPERTIES]).get(BODY_CUT_FROM)
        if length is not None:
            found.append(
                {
                    "file": row[Col.FILE_NAME],
                    "line": row[Col.LINE_NUM],
                    "naId": row[Col.NA_ID],
                    "characters": length,
                }
            )
    return found


def records_frame(tables: list[pa.Table]) -> pd.DataFrame:
    """One row per chosen record, plus `expectedSource`: the catalog URL of the row's naId."""
    if tables:
        frame = pa.concat_tables(tables).select(list(RECORD_COLUMNS)).to_pandas()
    else:
        frame = pd.DataFrame({name: pd.Series([], dtype="object") for name in RECORD_COLUMNS})
    frame = frame.reset_index(drop=True)
    frame["expectedSource"] = [
        None if pd.isna(na_id) else CATALOG_URL.format(naId=int(na_id)) for na_id in frame["naId"]
    ]
    return frame


def date_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Every `logicalDate_*` value in the rows' properties JSON, one row per value (list-valued
    properties give one row per element)."""
    rows: list[dict[str, Any]] = []
    for na_id, file_name, line_num, properties in zip(
        table[Col.NA_ID].to_pylist(),
        table[Col.FILE_NAME].to_pylist(),
        table[Col.LINE_NUM].to_pylist(),
        table[Col.PROPERTIES].to_pylist(),
        strict=True,
    ):
        if not properties or DATE_PREFIX not in properties:
            continue
        for key, value in json.loads(properties).items():
            if not key.startswith(DATE_PREFIX):
                continue
            for item in value if isinstance(value, list) else [value]:
                rows.append(
                    {
                        "naId": na_id,
                        "property": key,
                        "value": None if item is None else str(item),
                        "file_name": file_name,
                        "line_num": line_num,
                    }
                )
    return rows


def dates_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    columns = ["naId", "property", "value", "file_name", "line_num"]
    if not rows:
        return pd.DataFrame({name: pd.Series([], dtype="object") for name in columns})
    return pd.DataFrame(rows, columns=columns)


def load_records_frame(layout: WorkLayout) -> pd.DataFrame:
    return records_frame(list(iter_chosen(layout, list(RECORD_COLUMNS))))


def load_dates_frame(layout: WorkLayout) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for table in iter_chosen(layout, _TRACED_PROPERTIES):
        rows.extend(date_rows(table))
    return dates_frame(rows)


def load_chunks_frame(layout: WorkLayout) -> pd.DataFrame:
    """The chunks of the chosen records (one copy per naId), as the graph will hold them."""
    parts = chunk_parts(layout)
    missing = [part for part in parts if not part.exists()]
    if not parts or missing:
        raise FileNotFoundError(
            f"chunk parts missing under {layout.chunks_dir} ({len(missing)} of {len(parts)} "
            "files): materialize chunks"
        )
    rows = list(iter_chunks(layout, list(CHUNK_COLUMNS)))
    if not rows:
        return chunks_frame(None)
    return chunks_frame(pa.Table.from_pylist(rows))


def chunks_frame(table: pa.Table | None) -> pd.DataFrame:
    if table is None or table.num_rows == 0:
        return pd.DataFrame({name: pd.Series([], dtype="object") for name in CHUNK_COLUMNS})
    return table.select(list(CHUNK_COLUMNS)).to_pandas().reset_index(drop=True)


def chunk_sequences_frame(chunks: pd.DataFrame) -> pd.DataFrame:
    """One row per record: is its chunk sequence 0..n-1 with n = the first chunk's chunkCount?"""
    columns = ["naId", "chunks", "chunkCount", "contiguous", "seqs"]
    if chunks.empty:
        return pd.DataFrame({name: pd.Series([], dtype="object") for name in columns})
    grouped = chunks.groupby("naId", sort=True)["chunkSeqId"]
    summary = pd.DataFrame(
        {
            "chunks": grouped.size(),
            "distinct": grouped.nunique(),
            "minSeq": grouped.min(),
            "maxSeq": grouped.max(),
        }
    )
    first = chunks[chunks["chunkSeqId"] == 0].drop_duplicates("naId").set_index("naId")
    summary["chunkCount"] = first["chunkCount"].reindex(summary.index)
    count = summary["chunkCount"]
    summary["contiguous"] = (
        count.notna()
        & (summary["minSeq"] == 0)
        & (summary["maxSeq"] == summary["chunks"] - 1)
        & (summary["distinct"] == summary["chunks"])
        & (count.fillna(-1) == summary["chunks"])
    ).astype(bool)
    summary["seqs"] = ""
    broken = summary.index[~summary["contiguous"]]
    if len(broken):
        seqs = chunks[chunks["naId"].isin(broken)].groupby("naId")["chunkSeqId"]
        for na_id, values in seqs:
            shown = sorted(int(v) for v in values)
            text = ",".join(str(v) for v in shown[:SEQ_PREVIEW])
            summary.loc[na_id, "seqs"] = text + (",…" if len(shown) > SEQ_PREVIEW else "")
    summary["chunkCount"] = summary["chunkCount"].astype("Int64")
    return summary.reset_index()[columns]


# --------------------------------------------------------------------------- file by file
def chosen_of_file(
    layout: WorkLayout, file_id: str, rows: Sequence[int], columns: list[str]
) -> pa.Table:
    """One file's chosen rows (sorted row numbers) of its parsed part."""
    return pq.read_table(layout.parsed_part(file_id), columns=columns).take(
        pa.array(rows, pa.int64())
    )


def tagged(frames: Iterable[tuple[str, pd.DataFrame]], empty: pd.DataFrame) -> pd.DataFrame:
    """The frames of several files in one, each row with its file and its position there."""
    pieces = []
    for file_id, frame in frames:
        frame = frame.reset_index(drop=True)
        frame[FILE] = file_id
        frame[POS] = range(len(frame))
        pieces.append(frame)
    if not pieces:
        return empty.assign(
            **{FILE: pd.Series([], dtype="object"), POS: pd.Series([], dtype="int64")}
        )
    return pd.concat(pieces, ignore_index=True)


def records_frame_of(
    layout: WorkLayout, files: Sequence[tuple[str, Sequence[int]]]
) -> pd.DataFrame:
    return tagged(
        (
            (file_id, records_frame([chosen_of_file(layout, file_id, rows, list(RECORD_COLUMNS))]))
            for file_id, rows in files
        ),
        records_frame([]),
    )


def dates_frame_of(layout: WorkLayout, files: Sequence[tuple[str, Sequence[int]]]) -> pd.DataFrame:
    return tagged(
        (
            (
                file_id,
                dates_frame(date_rows(chosen_of_file(layout, file_id, rows, _TRACED_PROPERTIES))),
            )
            for file_id, rows in files
        ),
        dates_frame([]),
    )


def chunk_frames_of(
    layout: WorkLayout, files: Sequence[tuple[str, Sequence[int]]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(chunks, chunk sequences) of the files' chosen records, each file's on its own."""
    from nara_kg.ingest.stages.chunks import chunk_batches_of_file

    chunks: list[tuple[str, pd.DataFrame]] = []
    for file_id, rows in files:
        batches = list(chunk_batches_of_file(layout, file_id, rows, list(CHUNK_COLUMNS)))
        chunks.append((file_id, chunks_frame(pa.Table.from_batches(batches) if batches else None)))
    empty = chunks_frame(None)
    every = tagged(chunks, empty)
    # One grouping over every file's chunks (a record's chunks are all in its file), each
    # record's row then given to that file, in naId order there.
    sequences = chunk_sequences_frame(every.drop(columns=[FILE, POS]))
    if sequences.empty:
        return every, tagged([], sequences)
    owner = every.drop_duplicates("naId").set_index("naId")[FILE]
    sequences[FILE] = sequences["naId"].map(owner)
    sequences[POS] = sequences.groupby(FILE).cumcount()
    return every, sequences


def cuts_of(layout: WorkLayout, file_id: str, rows: Sequence[int]) -> list[dict[str, Any]]:
    return cut_rows(chosen_of_file(layout, file_id, rows, _TRACED_PROPERTIES))
