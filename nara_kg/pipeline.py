"""The file-level stages of the build: scan -> parse -> select -> chunk.

Each stage reads and writes Parquet under the work directory (see :mod:`nara_kg.layout`) and
works one input file at a time, so it is ready to be partitioned by file and memory does not grow
with the input. The Dagster assets are thin wrappers around these functions.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from nara_kg.chunking import HeaderFields, TokenCounter, chunk_record
from nara_kg.edges import RecordLinks
from nara_kg.inputs import InputFile, discover_input_files
from nara_kg.layout import WorkLayout
from nara_kg.parsing import iter_file
from nara_kg.records import (
    REJECT_SCHEMA,
    ParseStats,
    iter_rows,
    select_records,
    write_parsed_file,
)
from nara_kg.schema import Prop

Log = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


MANIFEST_SCHEMA = pa.schema(
    [
        ("file_id", pa.string()),
        ("rel_path", pa.string()),
        ("size", pa.int64()),
        ("sha256", pa.string()),
    ]
)


# --------------------------------------------------------------------------- raw files
def scan_inputs(data_dir: Path, layout: WorkLayout) -> list[InputFile]:
    layout.ensure()
    files = discover_input_files(data_dir)
    rows = [
        {"file_id": f.file_id, "rel_path": f.rel_path, "size": f.size, "sha256": f.sha256}
        for f in files
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=MANIFEST_SCHEMA), layout.manifest)
    return files


def read_manifest(layout: WorkLayout, data_dir: Path) -> list[InputFile]:
    if not layout.manifest.exists():
        raise FileNotFoundError(f"{layout.manifest} is missing: materialize raw_jsonl first")
    return [
        InputFile(
            path=data_dir / row["rel_path"],
            rel_path=row["rel_path"],
            size=row["size"],
            sha256=row["sha256"],
        )
        for row in pq.read_table(layout.manifest).to_pylist()
    ]


# --------------------------------------------------------------------------- parse
PARSED_INDEX_SCHEMA = pa.schema(
    [
        ("file_id", pa.string()),
        ("rel_path", pa.string()),
        ("sha256", pa.string()),
        ("lines", pa.int64()),
        ("records", pa.int64()),
        ("stubs", pa.int64()),
        ("rejected", pa.int64()),
        ("by_type", pa.string()),
        ("reject_reasons", pa.string()),
    ]
)


@dataclass
class ParseResult:
    files_parsed: int = 0
    files_skipped: int = 0
    parts_removed: int = 0
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

    @property
    def reject_share(self) -> float:
        return self.rejected / self.lines if self.lines else 0.0


def _read_parsed_index(layout: WorkLayout) -> dict[str, dict[str, Any]]:
    if not layout.parsed_index.exists():
        return {}
    return {row["file_id"]: row for row in pq.read_table(layout.parsed_index).to_pylist()}


def parse_inputs(
    files: list[InputFile], layout: WorkLayout, *, log: Log = _quiet, force: bool = False
) -> ParseResult:
    """Parse every input file whose content changed since the last parse, then choose one row
    per naId across all files."""
    layout.ensure()
    previous = _read_parsed_index(layout)
    result = ParseResult()
    index_rows: list[dict[str, Any]] = []
    started = time.monotonic()
    for position, file in enumerate(files, start=1):
        records_path = layout.parsed_part(file.file_id)
        rejects_path = layout.rejects_part(file.file_id)
        known = previous.get(file.file_id)
        if (
            not force
            and known is not None
            and known["sha256"] == file.sha256
            and records_path.exists()
            and rejects_path.exists()
        ):
            row = known
            result.files_skipped += 1
        else:
            stats: ParseStats = write_parsed_file(
                iter_file(file.path, display_name=file.rel_path),
                file.rel_path,
                records_path,
                rejects_path,
            )
            row = {
                "file_id": file.file_id,
                "rel_path": file.rel_path,
                "sha256": file.sha256,
                "lines": stats.lines,
                "records": stats.records,
                "stubs": stats.stubs,
                "rejected": stats.rejected,
                "by_type": json.dumps(stats.by_type, sort_keys=True),
                "reject_reasons": json.dumps(stats.reject_reasons, sort_keys=True),
            }
            result.files_parsed += 1
            log(
                f"parsed {position}/{len(files)} {file.rel_path}: {stats.records} records, "
                f"{stats.stubs} stubs, {stats.rejected} rejected "
                f"({time.monotonic() - started:.1f}s elapsed)"
            )
        index_rows.append(row)
        result.lines += row["lines"]
        result.records += row["records"]
        result.stubs += row["stubs"]
        result.rejected += row["rejected"]
        result.by_type.update(json.loads(row["by_type"]))
        result.reject_reasons.update(json.loads(row["reject_reasons"]))
        result.per_file.append(
            {k: row[k] for k in ("rel_path", "lines", "records", "stubs", "rejected")}
        )

    current_ids = {f.file_id for f in files}
    for stale in set(previous) - current_ids:
        for path in (layout.parsed_part(stale), layout.rejects_part(stale)):
            path.unlink(missing_ok=True)
        result.parts_removed += 1
    pq.write_table(
        pa.Table.from_pylist(index_rows, schema=PARSED_INDEX_SCHEMA), layout.parsed_index
    )
    _write_rejects_table(files, layout)

    selection = select_records([layout.parsed_part(f.file_id) for f in files])
    chosen = sorted(selection.chosen)
    pq.write_table(
        pa.table(
            {
                "part": pa.array([p for p, _ in chosen], pa.int32()),
                "row": pa.array([r for _, r in chosen], pa.int64()),
            }
        ),
        layout.selection,
    )
    pq.write_table(
        pa.table(
            {
                "alias": pa.array(list(selection.aliases), pa.int64()),
                "naId": pa.array(list(selection.aliases.values()), pa.int64()),
            }
        ),
        layout.aliases,
    )
    result.chosen_records = selection.records
    result.chosen_stubs = selection.stubs
    result.duplicates = selection.duplicates
    result.aliases = len(selection.aliases)
    for duplicate in selection.duplicates:
        log(
            f"naId {duplicate['naId']} appears {1 + len(duplicate['dropped'])} times: kept "
            f"{duplicate['chosen']} (completeness {duplicate['chosen_completeness']}), dropped "
            f"{', '.join(duplicate['dropped'])} (completeness {duplicate['dropped_completeness']})"
        )
    return result


def _write_rejects_table(files: list[InputFile], layout: WorkLayout) -> None:
    tables = [
        pq.read_table(layout.rejects_part(f.file_id))
        for f in files
        if layout.rejects_part(f.file_id).exists()
    ]
    table = pa.concat_tables(tables) if tables else REJECT_SCHEMA.empty_table()
    pq.write_table(table.cast(REJECT_SCHEMA), layout.rejects)


def read_aliases(layout: WorkLayout) -> dict[int, int]:
    table = pq.read_table(layout.aliases)
    return dict(zip(table["alias"].to_pylist(), table["naId"].to_pylist(), strict=True))


def _chosen_by_part(layout: WorkLayout) -> dict[int, set[int]]:
    table = pq.read_table(layout.selection)
    chosen: dict[int, set[int]] = {}
    for part, row in zip(table["part"].to_pylist(), table["row"].to_pylist(), strict=True):
        chosen.setdefault(part, set()).add(row)
    return chosen


# --------------------------------------------------------------------------- chunks
CHUNK_SCHEMA = pa.schema(
    [
        pa.field("chunkId", pa.string(), nullable=False),
        pa.field("naId", pa.int64(), nullable=False),
        pa.field("chunkSeqId", pa.int32(), nullable=False),
        pa.field("nodeType", pa.string(), nullable=False),
        pa.field("isStub", pa.bool_(), nullable=False),
        pa.field("embed", pa.bool_(), nullable=False),
        pa.field("text", pa.large_string(), nullable=False),
        pa.field("textHash", pa.string(), nullable=False),
        pa.field("tokens", pa.int32(), nullable=False),
        #: JSON of every node property; the graph writer sends it as is.
        pa.field("props", pa.large_string(), nullable=False),
        pa.field("rowHash", pa.string(), nullable=False),
        # Relationship inputs, on the first chunk of each record only.
        pa.field("chunkCount", pa.int32()),
        pa.field("parentNaId", pa.int64()),
        pa.field("references", pa.string()),
    ]
)

#: Properties every continuation chunk repeats from its record, so that a chunk found by
#: vector search can be shown without another lookup; the rest stay on the first chunk.
CONTINUATION_PROPERTIES: tuple[str, ...] = (
    Prop.NA_ID,
    Prop.TITLE,
    Prop.HEADING,
    Prop.RECORD_TYPE,
    Prop.LEVEL_OF_DESCRIPTION,
    Prop.AUTHORITY_TYPE,
    Prop.SOURCE,
)


@dataclass
class ChunkResult:
    records: int = 0
    chunks: int = 0
    embedded_chunks: int = 0
    multi_chunk_records: int = 0
    title_only_records: int = 0
    max_tokens_seen: int = 0
    token_limit: int = 0
    parts_chunked: int = 0
    parts_reused: int = 0
    by_type: Counter[str] = field(default_factory=Counter)
    preview: list[dict[str, Any]] = field(default_factory=list)


def _row_hash(props: dict[str, Any], embed: bool) -> str:
    payload = json.dumps([props, embed], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _chunk_rows(
    record: dict[str, Any], count_tokens: TokenCounter, max_tokens: int
) -> list[dict[str, Any]]:
    props: dict[str, Any] = json.loads(record["properties"])
    is_stub = bool(record["isStub"])
    chunks = chunk_record(
        record["naId"],
        record["bodyText"],
        HeaderFields(
            title=record["title"],
            node_type=record["nodeType"],
            parent_title=record["parentTitle"],
            date_range=record["dateRange"],
        ),
        count_tokens=count_tokens,
        max_tokens=max_tokens,
    )
    # A stub without a name has nothing worth embedding; every full record is embedded.
    embed = not is_stub or bool(record["title"])
    rows = []
    for chunk in chunks:
        base = (
            props
            if chunk.seq == 0
            else {k: props[k] for k in CONTINUATION_PROPERTIES if k in props}
        )
        node_props = {
            **base,
            Prop.NA_ID: record["naId"],
            Prop.CHUNK_ID: chunk.chunk_id,
            Prop.CHUNK_SEQ_ID: chunk.seq,
            Prop.TEXT: chunk.text,
            Prop.TEXT_HASH: chunk.text_hash,
            Prop.FILE_NAME: record["file_name"],
            Prop.LINE_NUM: record["line_num"],
            Prop.NODE_TYPE: record["nodeType"],
            Prop.IS_STUB: is_stub,
        }
        if chunk.seq == 0:
            node_props[Prop.CHUNK_COUNT] = len(chunks)
        first = chunk.seq == 0
        rows.append(
            {
                "chunkId": chunk.chunk_id,
                "naId": record["naId"],
                "chunkSeqId": chunk.seq,
                "nodeType": record["nodeType"],
                "isStub": is_stub,
                "embed": embed,
                "text": chunk.text,
                "textHash": chunk.text_hash,
                "tokens": chunk.tokens,
                "props": json.dumps(node_props, ensure_ascii=False, sort_keys=True),
                "rowHash": _row_hash(node_props, embed),
                "chunkCount": len(chunks) if first else None,
                "parentNaId": record["parentNaId"] if first else None,
                "references": record["references"] if first else None,
            }
        )
    return rows


CHUNKS_INDEX_SCHEMA = pa.schema(
    [
        ("file_id", pa.string()),
        #: What the part was computed from: the file's content, the rows chosen from it, and
        #: the chunker (model tokenizer and limit). Equal key, equal part: it is reused.
        ("key", pa.string()),
        ("stats", pa.string()),
    ]
)
_STAT_FIELDS = (
    "records",
    "chunks",
    "embedded_chunks",
    "multi_chunk_records",
    "title_only_records",
)


def _read_chunks_index(layout: WorkLayout) -> dict[str, dict[str, Any]]:
    if not layout.chunks_index.exists():
        return {}
    return {row["file_id"]: row for row in pq.read_table(layout.chunks_index).to_pylist()}


def _part_key(file: InputFile, rows_wanted: set[int], chunker_key: str) -> str:
    digest = hashlib.sha256(f"{file.sha256}|{chunker_key}|".encode())
    digest.update(",".join(map(str, sorted(rows_wanted))).encode())
    return digest.hexdigest()


def chunk_records(
    files: list[InputFile],
    layout: WorkLayout,
    *,
    count_tokens: TokenCounter,
    max_tokens: int,
    chunker_key: str = "",
    log: Log = _quiet,
    preview_rows: int = 10,
) -> ChunkResult:
    """Chunk every chosen record, one chunk part per input file.

    A part whose file, chosen rows and chunker are unchanged since the last run is reused as
    is: an incremental rebuild re-chunks only the files that changed.
    """
    chosen = _chosen_by_part(layout)
    previous = _read_chunks_index(layout)
    result = ChunkResult(token_limit=max_tokens)
    started = time.monotonic()
    live_parts = set()
    index_rows: list[dict[str, Any]] = []
    for part_index, file in enumerate(files):
        rows_wanted = chosen.get(part_index, set())
        path = layout.chunk_part(file.file_id)
        key = _part_key(file, rows_wanted, f"{chunker_key}|{max_tokens}")
        known = previous.get(file.file_id)
        live_parts.add(path.name)
        if known is not None and known["key"] == key and path.exists():
            stats = json.loads(known["stats"])
            result.parts_reused += 1
        else:
            stats = _chunk_part(
                layout, file, rows_wanted, path, count_tokens, max_tokens, result, preview_rows
            )
            result.parts_chunked += 1
            log(
                f"chunked {part_index + 1}/{len(files)} {file.rel_path}: {stats['chunks']} "
                f"chunks ({time.monotonic() - started:.1f}s elapsed)"
            )
        for name in _STAT_FIELDS:
            setattr(result, name, getattr(result, name) + stats[name])
        result.by_type.update(stats["by_type"])
        result.max_tokens_seen = max(result.max_tokens_seen, stats["max_tokens_seen"])
        index_rows.append({"file_id": file.file_id, "key": key, "stats": json.dumps(stats)})
    for stale in layout.chunks_dir.glob("*.chunks.parquet"):
        if stale.name not in live_parts:
            stale.unlink()
    pq.write_table(
        pa.Table.from_pylist(index_rows, schema=CHUNKS_INDEX_SCHEMA), layout.chunks_index
    )
    return result


def _chunk_part(
    layout: WorkLayout,
    file: InputFile,
    rows_wanted: set[int],
    path: Path,
    count_tokens: TokenCounter,
    max_tokens: int,
    result: ChunkResult,
    preview_rows: int,
) -> dict[str, Any]:
    stats: dict[str, Any] = dict.fromkeys(_STAT_FIELDS, 0)
    by_type: Counter[str] = Counter()
    max_seen = 0
    out_rows: list[dict[str, Any]] = []
    for row_index, record in enumerate(iter_rows(layout.parsed_part(file.file_id))):
        if row_index not in rows_wanted:
            continue
        rows = _chunk_rows(record, count_tokens, max_tokens)
        stats["records"] += 1
        stats["chunks"] += len(rows)
        by_type[record["nodeType"]] += 1
        stats["multi_chunk_records"] += int(len(rows) > 1)
        stats["title_only_records"] += int(not record["bodyText"] and not record["isStub"])
        for row in rows:
            stats["embedded_chunks"] += int(row["embed"])
            max_seen = max(max_seen, row["tokens"])
            if len(result.preview) < preview_rows and not row["isStub"]:
                result.preview.append(
                    {k: row[k] for k in ("chunkId", "nodeType", "tokens", "text")}
                )
        out_rows.extend(rows)
    tmp = path.with_suffix(".tmp")
    pq.write_table(pa.Table.from_pylist(out_rows, schema=CHUNK_SCHEMA), tmp)
    tmp.replace(path)
    stats["by_type"] = dict(by_type)
    stats["max_tokens_seen"] = max_seen
    return stats


def chunk_parts(layout: WorkLayout) -> list[Path]:
    return sorted(layout.chunks_dir.glob("*.chunks.parquet"))


def iter_chunks(layout: WorkLayout, columns: list[str] | None = None) -> Iterator[dict[str, Any]]:
    for part in chunk_parts(layout):
        yield from iter_rows(part, columns)


def record_links(layout: WorkLayout) -> list[RecordLinks]:
    """One entry per chosen record, from the first chunks."""
    links = []
    for row in iter_chunks(
        layout, ["naId", "chunkSeqId", "chunkCount", "parentNaId", "references"]
    ):
        if row["chunkSeqId"] != 0:
            continue
        references = tuple((rel, int(na_id)) for rel, na_id, *_ in json.loads(row["references"]))
        links.append(
            RecordLinks(
                na_id=row["naId"],
                chunk_count=row["chunkCount"],
                parent_na_id=row["parentNaId"],
                references=references,
            )
        )
    return links
