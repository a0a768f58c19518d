"""The file-level stages of the build, one input file at a time: scan -> parse -> chunk -> embed;
then the graph-wide selection of one row per naId across every file.

Each per-file stage reads and writes only that file's parts under the work directory (see
:mod:`nara_kg.ingest.layout`), so files are independent Dagster partitions that run in parallel and
retry alone. A stage skips a file whose inputs are unchanged (content hash, chunker, model)
unless `force` is set (the full rebuild). The Dagster assets are thin wrappers around these
functions; `scan_inputs`, `parse_inputs` and `chunk_records` run a stage over every file.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from nara_kg.ingest.chunking import HeaderFields, TokenCounter, chunk_record
from nara_kg.ingest.inputs import (
    SKIPPED_FILE,
    InputFile,
    SkippedFile,
    file_id_of,
    list_input_paths,
    scan_input_tree,
    sha256_of,
)
from nara_kg.ingest.layout import WorkLayout, temporary_sibling
from nara_kg.ingest.parsing import iter_file
from nara_kg.ingest.records import (
    DEFAULT_MAX_BODY_CHARS,
    REJECT_SCHEMA,
    ParseStats,
    iter_rows,
    select_records,
    write_parsed_file,
)
from nara_kg.model.edges import RecordLinks
from nara_kg.model.schema import Prop

if TYPE_CHECKING:
    from nara_kg.embedding.encoder import Embedder

Log = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_sibling(path)
    tmp.write_text(json.dumps(payload, sort_keys=True), encoding="utf-8")
    tmp.replace(path)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return loaded


def _write_table(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_sibling(path)
    pq.write_table(table, tmp)
    tmp.replace(path)


# --------------------------------------------------------------------------- raw_jsonl
def scan_file(
    data_dir: Path, rel_path: str, layout: WorkLayout, *, force: bool = False
) -> InputFile:
    """The file's size and content hash. The hash is reused while size and mtime are unchanged
    (re-hashing a large export every night costs as much as reading it)."""
    layout.ensure()
    path = data_dir / rel_path
    if not path.is_file():
        raise FileNotFoundError(f"input file {path} does not exist")
    stat = path.stat()
    entry_path = layout.raw_entry(file_id_of(rel_path))
    known = None if force else _read_json(entry_path)
    if (
        known is not None
        and known.get("size") == stat.st_size
        and known.get("mtime_ns") == stat.st_mtime_ns
    ):
        sha256 = str(known["sha256"])
    else:
        sha256 = sha256_of(path)
        _write_json(
            entry_path,
            {
                "rel_path": rel_path,
                "size": stat.st_size,
                "mtime_ns": stat.st_mtime_ns,
                "sha256": sha256,
            },
        )
    return InputFile(path=path, rel_path=rel_path, size=stat.st_size, sha256=sha256)


def scanned_file(data_dir: Path, rel_path: str, layout: WorkLayout) -> InputFile:
    """The file as `raw_jsonl` last saw it (the later stages work from that, not the disk)."""
    entry = _read_json(layout.raw_entry(file_id_of(rel_path)))
    if entry is None:
        raise FileNotFoundError(f"{rel_path} has not been scanned: materialize raw_jsonl first")
    return InputFile(
        path=data_dir / rel_path, rel_path=rel_path, size=entry["size"], sha256=entry["sha256"]
    )


def scan_inputs(data_dir: Path, layout: WorkLayout, *, force: bool = False) -> list[InputFile]:
    """Every input file under `data_dir`, scanned (the whole-export form of `scan_file`)."""
    return [scan_file(data_dir, rel, layout, force=force) for rel in list_input_paths(data_dir)]


# --------------------------------------------------------------------------- parse
@dataclass
class FileParseResult(ParseStats):
    """One file's parse statistics, kept beside its parts, and whether it was parsed now
    (False: its content and the body limit were unchanged, so the parts were reused)."""

    rel_path: str = ""
    parsed: bool = False
    sha256: str = ""
    seconds: float = 0.0
    max_body_chars: int = DEFAULT_MAX_BODY_CHARS

    @classmethod
    def from_json(cls, known: dict[str, Any]) -> FileParseResult:
        cut = [(int(a), int(b), int(c)) for a, b, c in known.get("cut", [])]
        return cls(**{**known, "cut": cut, "parsed": False})


def parse_file(
    file: InputFile,
    layout: WorkLayout,
    *,
    force: bool = False,
    max_body_chars: int = DEFAULT_MAX_BODY_CHARS,
    log: Log = _quiet,
) -> FileParseResult:
    """Parse one file into its records and rejects parts, unless its content (and the body
    limit) is unchanged."""
    layout.ensure()
    records_path = layout.parsed_part(file.file_id)
    rejects_path = layout.rejects_part(file.file_id)
    known = _read_json(layout.parse_stats(file.file_id))
    if (
        not force
        and known is not None
        and known.get("sha256") == file.sha256
        and known.get("max_body_chars", DEFAULT_MAX_BODY_CHARS) == max_body_chars
        and records_path.exists()
        and rejects_path.exists()
    ):
        return FileParseResult.from_json(known)
    started = time.perf_counter()
    try:
        stats: ParseStats = write_parsed_file(
            iter_file(file.path, display_name=file.rel_path),
            file.rel_path,
            records_path,
            rejects_path,
            max_body_chars=max_body_chars,
        )
    except PermissionError as error:  # unreadable since it was listed: a file-level reject
        raise FileNotFoundError(f"{file.rel_path} cannot be read: {error}") from error
    result = FileParseResult(
        **asdict(stats),
        rel_path=file.rel_path,
        parsed=True,
        sha256=file.sha256,
        seconds=round(time.perf_counter() - started, 3),
        max_body_chars=max_body_chars,
    )
    for na_id, line, length in stats.cut:
        log(
            f"{file.rel_path}:{line}: naId {na_id}'s body text of {length:,} characters was cut "
            f"to {max_body_chars:,} (NARA_KG_MAX_BODY_CHARS)"
        )
    _write_json(layout.parse_stats(file.file_id), {**asdict(result), "parsed": True})
    log(
        f"parsed {file.rel_path}: {stats.records} records, {stats.stubs} stubs, "
        f"{stats.rejected} rejected ({result.seconds:.1f}s)"
    )
    return result


# --------------------------------------------------------------------------- selection
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
            gone = _read_json(stats_path) or {}
            removed.append(str(gone.get("rel_path", file_id)))
            for path in layout.per_file_paths(file_id):
                path.unlink(missing_ok=True)
    files: list[InputFile] = []
    pending: list[str] = []
    for rel in on_disk:
        known = _read_json(layout.parse_stats(file_id_of(rel)))
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

    @property
    def reject_share(self) -> float:
        return self.rejected / self.lines if self.lines else 0.0


def select_live_records(
    data_dir: Path,
    layout: WorkLayout,
    *,
    follow_external_links: bool = False,
    log: Log = _quiet,
) -> ParseResult:
    """One row per naId across every live file (graph-wide): the selection, the alias table,
    the index of live parts and the rejects table people read. A file that cannot be read
    counts as one rejected line."""
    live = live_files(data_dir, layout, follow_external_links=follow_external_links)
    result = ParseResult(parts_removed=len(live.removed), files_pending=live.pending)
    for rel in live.removed:
        log(f"{rel} is gone from the input: its records leave the graph")
    if live.pending:
        log(f"{len(live.pending)} files are not parsed yet (their partitions have not run)")
    index_rows: list[dict[str, Any]] = []
    for file in live.files:
        stats = _read_json(layout.parse_stats(file.file_id)) or {}
        counts = {key: int(stats.get(key, 0)) for key in ("lines", "records", "stubs", "rejected")}
        row: dict[str, Any] = {
            "file_id": file.file_id,
            "rel_path": file.rel_path,
            "sha256": file.sha256,
            **counts,
            "by_type": json.dumps(stats.get("by_type", {}), sort_keys=True),
            "reject_reasons": json.dumps(stats.get("reject_reasons", {}), sort_keys=True),
        }
        index_rows.append(row)
        result.lines += counts["lines"]
        result.records += counts["records"]
        result.stubs += counts["stubs"]
        result.rejected += counts["rejected"]
        result.by_type.update(stats.get("by_type", {}))
        result.reject_reasons.update(stats.get("reject_reasons", {}))
        result.per_file.append(
            {k: row[k] for k in ("rel_path", "lines", "records", "stubs", "rejected")}
        )
    for skipped in live.skipped:
        log(f"{skipped.rel_path}: {skipped.reason}")
        result.lines += 1
        result.rejected += 1
        result.reject_reasons[SKIPPED_FILE] += 1
        result.per_file.append(
            {"rel_path": skipped.rel_path, "lines": 1, "records": 0, "stubs": 0, "rejected": 1}
        )
    _write_table(pa.Table.from_pylist(index_rows, schema=PARSED_INDEX_SCHEMA), layout.parsed_index)
    _write_rejects_table(live.files, layout, live.skipped)

    selection = select_records([layout.parsed_part(f.file_id) for f in live.files])
    chosen = sorted(selection.chosen)
    _write_table(
        pa.table(
            {
                "part": pa.array([p for p, _ in chosen], pa.int32()),
                "row": pa.array([r for _, r in chosen], pa.int64()),
            }
        ),
        layout.selection,
    )
    _write_table(
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


def parse_inputs(
    data_dir: Path,
    files: list[InputFile],
    layout: WorkLayout,
    *,
    log: Log = _quiet,
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
                    {"file_name": s.rel_path, "line_num": 0, "reason": s.reason, "raw": None}
                    for s in skipped
                ],
                schema=REJECT_SCHEMA,
            )
        )
    table = pa.concat_tables(tables) if tables else REJECT_SCHEMA.empty_table()
    _write_table(table.cast(REJECT_SCHEMA), layout.rejects)


def read_aliases(layout: WorkLayout) -> dict[int, int]:
    table = pq.read_table(layout.aliases)
    return dict(zip(table["alias"].to_pylist(), table["naId"].to_pylist(), strict=True))


def chosen_rows_by_file(layout: WorkLayout) -> list[tuple[str, set[int]]]:
    """(file_id, chosen record rows) of every live file, in selection order."""
    if not layout.selection.exists():
        raise FileNotFoundError(f"{layout.selection} is missing: materialize record_selection")
    file_ids = pq.read_table(layout.parsed_index, columns=["file_id"])["file_id"].to_pylist()
    table = pq.read_table(layout.selection)
    chosen: dict[int, set[int]] = {}
    for part, row in zip(table["part"].to_pylist(), table["row"].to_pylist(), strict=True):
        chosen.setdefault(part, set()).add(row)
    return [(file_id, chosen.get(index, set())) for index, file_id in enumerate(file_ids)]


# --------------------------------------------------------------------------- chunks
CHUNK_SCHEMA = pa.schema(
    [
        pa.field("chunkId", pa.string(), nullable=False),
        pa.field("naId", pa.int64(), nullable=False),
        pa.field("chunkSeqId", pa.int32(), nullable=False),
        #: The record's row in its file's parsed part: the selection chooses rows.
        pa.field("recordRow", pa.int64(), nullable=False),
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
_STAT_FIELDS = (
    "records",
    "chunks",
    "embedded_chunks",
    "multi_chunk_records",
    "title_only_records",
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

    def add(self, stats: dict[str, Any]) -> None:
        for name in _STAT_FIELDS:
            setattr(self, name, getattr(self, name) + stats[name])
        self.by_type.update(stats["by_type"])
        self.max_tokens_seen = max(self.max_tokens_seen, stats["max_tokens_seen"])


def _row_hash(props: dict[str, Any], embed: bool) -> str:
    payload = json.dumps([props, embed], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _chunk_rows(
    record: dict[str, Any], row_index: int, count_tokens: TokenCounter, max_tokens: int
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
                "recordRow": row_index,
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


def _chunk_key(file: InputFile, chunker_key: str) -> str:
    """What a chunk part is computed from: the file's content and the chunker."""
    return hashlib.sha256(f"{file.sha256}|{chunker_key}".encode()).hexdigest()


def chunk_file(
    file: InputFile,
    layout: WorkLayout,
    *,
    count_tokens: TokenCounter,
    max_tokens: int,
    chunker_key: str = "",
    force: bool = False,
    preview: list[dict[str, Any]] | None = None,
    preview_rows: int = 10,
) -> tuple[dict[str, Any], bool]:
    """Chunk every record of one file (stubs and duplicate copies included: the selection
    picks among them later). Returns the part's stats and whether it was (re)computed."""
    path = layout.chunk_part(file.file_id)
    key = _chunk_key(file, f"{chunker_key}|{max_tokens}")
    known = _read_json(layout.chunk_stats(file.file_id))
    if not force and known is not None and known.get("key") == key and path.exists():
        return dict(known["stats"]), False
    stats: dict[str, Any] = dict.fromkeys(_STAT_FIELDS, 0)
    by_type: Counter[str] = Counter()
    max_seen = 0
    out_rows: list[dict[str, Any]] = []
    for row_index, record in enumerate(iter_rows(layout.parsed_part(file.file_id))):
        rows = _chunk_rows(record, row_index, count_tokens, max_tokens)
        stats["records"] += 1
        stats["chunks"] += len(rows)
        by_type[record["nodeType"]] += 1
        stats["multi_chunk_records"] += int(len(rows) > 1)
        stats["title_only_records"] += int(not record["bodyText"] and not record["isStub"])
        for row in rows:
            stats["embedded_chunks"] += int(row["embed"])
            max_seen = max(max_seen, row["tokens"])
            if preview is not None and len(preview) < preview_rows and not row["isStub"]:
                preview.append({k: row[k] for k in ("chunkId", "nodeType", "tokens", "text")})
        out_rows.extend(rows)
    _write_table(pa.Table.from_pylist(out_rows, schema=CHUNK_SCHEMA), path)
    stats["by_type"] = dict(by_type)
    stats["max_tokens_seen"] = max_seen
    _write_json(layout.chunk_stats(file.file_id), {"key": key, "stats": stats})
    return stats, True


def chunk_records(
    files: list[InputFile],
    layout: WorkLayout,
    *,
    count_tokens: TokenCounter,
    max_tokens: int,
    chunker_key: str = "",
    force: bool = False,
    log: Log = _quiet,
    preview_rows: int = 10,
) -> ChunkResult:
    """`chunk_file` over every file: a part whose file and chunker are unchanged is reused."""
    result = ChunkResult(token_limit=max_tokens)
    started = time.monotonic()
    for position, file in enumerate(files, start=1):
        stats, computed = chunk_file(
            file,
            layout,
            count_tokens=count_tokens,
            max_tokens=max_tokens,
            chunker_key=chunker_key,
            force=force,
            preview=result.preview,
            preview_rows=preview_rows,
        )
        if computed:
            result.parts_chunked += 1
            log(
                f"chunked {position}/{len(files)} {file.rel_path}: {stats['chunks']} chunks "
                f"({time.monotonic() - started:.1f}s elapsed)"
            )
        else:
            result.parts_reused += 1
        result.add(stats)
    return result


def iter_chunks(layout: WorkLayout, columns: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """The chunks of the chosen rows (one per naId), file by file in selection order."""
    wanted_columns = None if columns is None else sorted({*columns, "recordRow"})
    for file_id, rows in chosen_rows_by_file(layout):
        if not rows:
            continue
        for row in iter_rows(layout.chunk_part(file_id), wanted_columns):
            if row["recordRow"] in rows:
                yield row if columns is None else {k: row[k] for k in columns}


def chunk_parts(layout: WorkLayout) -> list[Path]:
    """The chunk parts of the live files, in selection order."""
    return [layout.chunk_part(file_id) for file_id, _ in chosen_rows_by_file(layout)]


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


# --------------------------------------------------------------------------- chunk_embeddings
@dataclass
class FileEmbeddingResult:
    chunks: int = 0
    encoded: int = 0
    reused: int = 0
    seconds_encoding: float = 0.0
    model_key: str = ""

    @property
    def chunks_per_second(self) -> float:
        return self.encoded / self.seconds_encoding if self.seconds_encoding else 0.0


def _vector_schema(dimension: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("chunkId", pa.string(), nullable=False),
            pa.field("textHash", pa.string(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), dimension), nullable=False),
        ],
        metadata={b"model_key": b""},
    )


def read_vector_part(path: Path, model_key: str) -> dict[tuple[str, str], Any]:
    """(chunkId, textHash) -> vector (a float32 array) of a part made with `model_key`."""
    import numpy as np

    if not path.exists():
        return {}
    table = pq.read_table(path)
    if (table.schema.metadata or {}).get(b"model_key", b"").decode() != model_key:
        return {}
    if table.num_rows == 0:
        return {}
    flat = table["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
    vectors = np.asarray(flat, dtype=np.float32).reshape(table.num_rows, -1)
    return {
        (chunk_id, text_hash): vectors[i]
        for i, (chunk_id, text_hash) in enumerate(
            zip(table["chunkId"].to_pylist(), table["textHash"].to_pylist(), strict=True)
        )
    }


def embed_file(
    file: InputFile,
    layout: WorkLayout,
    embedder: Embedder,
    *,
    force: bool = False,
    page_size: int = 512,
    log: Log = _quiet,
) -> FileEmbeddingResult:
    """Vectors for the embeddable chunks of a file's full records (stubs are titles shared by
    many files: the graph-wide `text_embeddings` encodes the few that are chosen). A chunk
    whose text and model are unchanged keeps its vector; the rest are encoded longest first,
    `page_size` per call, so batches hold texts of near-equal length."""
    import numpy as np

    from nara_kg.embedding.encoder import release_free_memory

    model_key = embedder.key
    result = FileEmbeddingResult(model_key=model_key)
    path = layout.vector_part(file.file_id)
    previous = {} if force else read_vector_part(path, model_key)
    rows = [
        (row["chunkId"], row["textHash"], row["text"])
        for row in iter_rows(
            layout.chunk_part(file.file_id), ["chunkId", "textHash", "text", "embed", "isStub"]
        )
        if row["embed"] and not row["isStub"]
    ]
    # A record repeated in one file repeats its chunks: one vector per (chunkId, textHash).
    unique = list(dict.fromkeys((chunk_id, text_hash) for chunk_id, text_hash, _ in rows))
    texts = {(chunk_id, text_hash): text for chunk_id, text_hash, text in rows}
    result.chunks = len(unique)
    vectors: dict[tuple[str, str], Any] = {}
    todo = []
    for key in unique:
        if key in previous:
            vectors[key] = previous[key]
        else:
            todo.append(key)
    result.reused = len(vectors)
    if not force and not todo and path.exists() and len(previous) == len(unique):
        return result
    todo.sort(key=lambda key: -len(texts[key]))
    for offset in range(0, len(todo), page_size):
        page = todo[offset : offset + page_size]
        started = time.perf_counter()
        encoded = embedder.encode([texts[key] for key in page])
        result.seconds_encoding += time.perf_counter() - started
        for key, vector in zip(page, encoded, strict=True):
            vectors[key] = np.asarray(vector, dtype=np.float32)
        result.encoded += len(page)
        release_free_memory()
        log(f"{file.rel_path}: encoded {result.encoded}/{len(todo)} chunks")
    dimension = embedder.dimension
    schema = _vector_schema(dimension).with_metadata({b"model_key": model_key.encode()})
    matrix = (
        np.stack([vectors[key] for key in unique])
        if unique
        else np.zeros((0, dimension), np.float32)
    )
    table = pa.Table.from_arrays(
        [
            pa.array([chunk_id for chunk_id, _ in unique], pa.string()),
            pa.array([text_hash for _, text_hash in unique], pa.string()),
            pa.FixedSizeListArray.from_arrays(
                pa.array(matrix.reshape(-1), pa.float32()), dimension
            ),
        ],
        schema=schema,
    )
    _write_table(table, path)
    return result
