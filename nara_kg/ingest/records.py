"""Parsed records on disk: one Parquet file per input file, written as a stream.

A row is a full record or a stub (a parent known only from `ancestors[]`, an authority known only
from a reference). The per-type properties vary, so they travel as one JSON column; the columns
the pipeline and the quality checks need are typed columns of their own (the schemas:
:mod:`nara_kg.model.tables`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from nara_kg.ingest.layout import temporary_sibling
from nara_kg.ingest.parsing.results import ParsedRecord, Rejected, StubRecord, reject_category
from nara_kg.model.json_text import dumps, dumps_sorted
from nara_kg.model.tables import RECORD_SCHEMA, REJECT_SCHEMA, Col

BATCH_ROWS = 2_000
#: The most characters of body text taken from one record (its chunks are what the model
#: encodes): about 1,200 chunks. The longest body among the real sample records is 14,216
#: characters, so a normal record is never cut; one pathological 20 MB note no longer stalls a
#: build for half an hour. NARA_KG_MAX_BODY_CHARS changes it.
DEFAULT_MAX_BODY_CHARS = 500_000
#: Property that records a cut: the body text's length before it.
BODY_CUT_FROM = "bodyTextCutFrom"


def cut_body(record: ParsedRecord, max_chars: int) -> ParsedRecord:
    """The record with its body text cut to `max_chars` (at a word boundary when one is near),
    the original length kept in its properties; unchanged when it fits."""
    text = record.body_text
    if not text or len(text) <= max_chars:
        return record
    cut = text[:max_chars]
    boundary = cut.rfind(" ", max(0, max_chars - 200))
    if boundary > 0:
        cut = cut[:boundary]
    properties = {**record.properties, BODY_CUT_FROM: len(text)}
    return replace(record, body_text=cut, properties=properties)


def record_row(record: ParsedRecord, file_name: str, line_num: int) -> dict[str, Any]:
    return {
        Col.NA_ID: record.na_id,
        Col.NODE_TYPE: record.node_type,
        Col.RECORD_KIND: record.record_kind,
        Col.IS_STUB: False,
        Col.FILE_NAME: file_name,
        Col.LINE_NUM: line_num,
        Col.TITLE: record.title,
        Col.PARENT_NA_ID: record.parent_na_id,
        Col.PARENT_TITLE: record.parent_title,
        Col.DATE_RANGE: record.date_range,
        Col.BODY_TEXT: record.body_text,
        Col.COMPLETENESS: record.completeness,
        Col.SOURCE: record.properties.get("source"),
        Col.PROPERTIES: dumps_sorted(record.properties),
        Col.REFERENCES: dumps(
            [[r.rel, r.na_id, r.heading, r.authority_type] for r in record.references]
        ),
        Col.ALIASES: list(record.org_name_aliases),
    }


def stub_row(stub: StubRecord, file_name: str, line_num: int) -> dict[str, Any]:
    return {
        Col.NA_ID: stub.na_id,
        Col.NODE_TYPE: stub.node_type,
        Col.RECORD_KIND: stub.properties.get("recordType"),
        Col.IS_STUB: True,
        Col.FILE_NAME: file_name,
        Col.LINE_NUM: line_num,
        Col.TITLE: stub.title,
        Col.PARENT_NA_ID: stub.parent_na_id,
        Col.PARENT_TITLE: None,
        Col.DATE_RANGE: None,
        Col.BODY_TEXT: None,
        Col.COMPLETENESS: len(stub.properties),
        Col.SOURCE: stub.properties.get("source"),
        Col.PROPERTIES: dumps_sorted(stub.properties),
        # An ancestor entry can carry references of its own (series stubs list creators[]).
        Col.REFERENCES: dumps(
            [[r.rel, r.na_id, r.heading, r.authority_type] for r in stub.references]
        ),
        Col.ALIASES: [],
    }


def reject_row(reject: Rejected) -> dict[str, Any]:
    return {
        Col.FILE_NAME: reject.file_name,
        Col.LINE_NUM: reject.line_num,
        Col.REASON: reject.reason,
        Col.RAW: reject.raw,
    }


@dataclass(frozen=True)
class ReusedLine:
    """The rows an earlier parse of the same file made of a line with the same bytes (the
    record's row, then its stubs'), renumbered to the line's place now."""

    line_num: int
    rows: tuple[dict[str, Any], ...]
    #: The body text's length before the cut, when the earlier parse cut it.
    cut_from: int | None = None


@dataclass(frozen=True, slots=True)
class DuplicateLine:
    """A line with the same bytes as an earlier line of the same file: the same record again,
    dropped before it is chunked (the earlier line wins any tie in the selection anyway)."""

    line_num: int
    first_line: int


@dataclass
class ParseStats:
    lines: int = 0
    records: int = 0
    stubs: int = 0
    rejected: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    reject_reasons: dict[str, int] = field(default_factory=dict)
    #: Records whose body text was cut to the limit: (naId, line, original length).
    cut: list[tuple[int, int, int]] = field(default_factory=list)
    #: Lines whose rows came from the file's previous parse (their bytes were unchanged).
    lines_reused: int = 0
    #: Lines that repeat an earlier line of the file byte for byte (dropped, `DuplicateLine`).
    duplicate_lines: int = 0


class _BatchedWriter:
    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self._path = path
        self._schema = schema
        self._rows: list[dict[str, Any]] = []
        self._writer: pq.ParquetWriter | None = None

    def add(self, row: dict[str, Any]) -> None:
        self._rows.append(row)
        if len(self._rows) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        if not self._rows:
            return
        if self._writer is None:
            self._writer = pq.ParquetWriter(
                self._path, self._schema, compression="zstd", write_page_checksum=True
            )
        self._writer.write_table(pa.Table.from_pylist(self._rows, schema=self._schema))
        self._rows = []

    def close(self) -> None:
        self.flush()
        if self._writer is None:  # an empty table still gets a file: "parsed, nothing found"
            pq.write_table(self._schema.empty_table(), self._path, write_page_checksum=True)
        else:
            self._writer.close()


def write_parsed_file(
    items: Iterable[ParsedRecord | Rejected | ReusedLine | DuplicateLine],
    file_name: str,
    records_path: Path,
    rejects_path: Path,
    *,
    max_body_chars: int = DEFAULT_MAX_BODY_CHARS,
) -> ParseStats:
    """Stream parser output into two Parquet files; memory stays bounded by one batch. A body
    text longer than `max_body_chars` is cut, and the cut recorded on the record."""
    stats = ParseStats()
    records_path.parent.mkdir(parents=True, exist_ok=True)
    records_tmp, rejects_tmp = temporary_sibling(records_path), temporary_sibling(rejects_path)
    records = _BatchedWriter(records_tmp, RECORD_SCHEMA)
    rejects = _BatchedWriter(rejects_tmp, REJECT_SCHEMA)
    for item in items:
        if isinstance(item, DuplicateLine):
            stats.lines += 1
            stats.duplicate_lines += 1
            continue
        if isinstance(item, ReusedLine):
            first = item.rows[0]
            stats.lines += 1
            stats.lines_reused += 1
            stats.records += 1
            stats.stubs += len(item.rows) - 1
            node_type = first[Col.NODE_TYPE]
            stats.by_type[node_type] = stats.by_type.get(node_type, 0) + 1
            if item.cut_from is not None:
                stats.cut.append((int(first[Col.NA_ID]), item.line_num, item.cut_from))
            for row in item.rows:
                records.add(row)
            continue
        if isinstance(item, Rejected):
            stats.rejected += 1
            reason_kind = reject_category(item.reason)
            stats.reject_reasons[reason_kind] = stats.reject_reasons.get(reason_kind, 0) + 1
            rejects.add(reject_row(item))
            if item.line_num:
                stats.lines += 1
            continue
        stats.lines += 1
        stats.records += 1
        stats.by_type[item.node_type] = stats.by_type.get(item.node_type, 0) + 1
        if item.body_text and len(item.body_text) > max_body_chars:
            stats.cut.append((item.na_id, item.line_num, len(item.body_text)))
            item = cut_body(item, max_body_chars)
        # The parser names zip members itself (archive.zip!member.jsonl); keep its name.
        name = item.file_name or file_name
        records.add(record_row(item, name, item.line_num))
        for stub in item.stubs:
            stats.stubs += 1
            records.add(stub_row(stub, name, item.line_num))
    records.close()
    rejects.close()
    # Renamed only when complete, so a crash never leaves a half-written part that looks whole.
    records_tmp.replace(records_path)
    rejects_tmp.replace(rejects_path)
    return stats


def iter_rows(path: Path, columns: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Rows of one Parquet part, a batch at a time."""
    parquet = pq.ParquetFile(path, page_checksum_verification=True)
    for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns):
        yield from batch.to_pylist()


#: Dropped copies of one naId listed by name (the rest only counted): a record repeated
#: 500,000 times made one log line of 12 million characters.
DROPPED_COPIES_LISTED = 5
