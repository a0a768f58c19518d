"""What every stage shares: its JSON and Parquet files written
atomically (a crash never leaves a half-written file that looks whole)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from nara_kg.ingest.layout import temporary_sibling


def write_json(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_sibling(path)
    tmp.write_text(json.dumps(payload, sort_keys=True), encoding="utf-8")
    tmp.replace(path)


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object at `path`, or None when it is missing or not valid JSON (the stage then
    computes afresh)."""
    try:
        loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return loaded


#: What reading a damaged Parquet file raises (a truncated file, random bytes, a flipped byte
#: in a page): a derived file of the work folder that raises it is derived again.
PARQUET_DAMAGE: tuple[type[Exception], ...] = (OSError, pa.ArrowException, ValueError)


class CorruptWorkFile(RuntimeError):
    """A derived file of the work folder that cannot be read; the message names it."""


def parquet_readable(path: Path) -> bool:
    """Whether `path` exists and its Parquet footer reads: a cheap check (no data pages) that
    catches a truncated part or one overwritten with other bytes before a stage skips on it."""
    try:
        pq.ParquetFile(path).metadata  # noqa: B018 - reading the footer is the check
    except FileNotFoundError:
        return False
    except PARQUET_DAMAGE:
        return False
    return True


def corrupt_work_file(path: Path, error: BaseException, *derived_from: Path) -> CorruptWorkFile:
    """The error for a derived file found damaged while it was read: `derived_from` (the stats
    its stage skips on) are removed, so that the next build derives it again."""
    for stale in derived_from:
        stale.unlink(missing_ok=True)
    return CorruptWorkFile(
        f"the work file {path} is damaged ({type(error).__name__}: {error}); it is derived "
        "again on the next build (`nara-kg build`; `nara-kg build --full` derives every file)"
    )


def _holds_floats(kind: pa.DataType) -> bool:
    while (
        pa.types.is_list(kind) or pa.types.is_fixed_size_list(kind) or pa.types.is_large_list(kind)
    ):
        kind = kind.value_type
    return bool(pa.types.is_floating(kind))


def dictionary_columns(schema: pa.Schema) -> list[str]:
    """The columns worth dictionary-encoding: all but those of floats (vectors), whose values
    almost never repeat. Trying a dictionary on a part's 200,000 vector floats made writing it
    8x slower (26 against 3 ms) and the file half as large again before Parquet gave up."""
    return [f.name for f in schema if not _holds_floats(f.type)]


def write_table(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_sibling(path)
    pq.write_table(
        table,
        tmp,
        use_dictionary=dictionary_columns(table.schema),
        write_page_checksum=True,
    )
    tmp.replace(path)
