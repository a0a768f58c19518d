"""chunks: each record of one input file -> its chunk rows (text, node properties, row hash),
skipped while the file's content and the chunker are unchanged; and the chunks of the chosen
rows read back for the graph stages (`iter_chunks`, `record_links`)."""

from __future__ import annotations

import hashlib
import json
import pickle
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from nara_kg.ingest.chunking import (
    HeaderFields,
    TokenCounter,
    TokensCounter,
    chunk_record,
    texts_counted_first,
)
from nara_kg.ingest.inputs import InputFile
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.records import BATCH_ROWS, iter_rows
from nara_kg.ingest.stages.common import (
    PARQUET_DAMAGE,
    corrupt_work_file,
    parquet_readable,
    read_json,
    write_json,
    write_table,
)
from nara_kg.ingest.stages.record_selection import chosen_rows_by_file
from nara_kg.model.edges import RecordLinks
from nara_kg.model.json_text import dumps_sorted
from nara_kg.model.progress import Log, quiet
from nara_kg.model.schema import Prop
from nara_kg.model.tables import CHUNK_SCHEMA, Col

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
#: `records` and `by_type` count a file's own records, as parsed_records does; `stubs` the
#: stub rows (ancestors and cited authorities) chunked beside them.
_STAT_FIELDS = (
    "records",
    "stubs",
    "chunks",
    "embedded_chunks",
    "multi_chunk_records",
    "title_only_records",
)


@dataclass
class ChunkResult:
    records: int = 0
    stubs: int = 0
    chunks: int = 0
    embedded_chunks: int = 0
    multi_chunk_records: int = 0
    title_only_records: int = 0
    #: Records of changed files whose chunk rows were kept from the previous part.
    records_reused: int = 0
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

    def count_part(self, stats: dict[str, Any], computed: bool) -> None:
        """One file's part: its stats, and whether it was (re)computed or kept as it was."""
        self.add(stats)
        if computed:
            self.parts_chunked += 1
            self.records_reused += stats.get("records_reused", 0)
        else:
            self.parts_reused += 1


def _row_hash(props_json: str, embed: bool) -> str:
    """What the node is written from: its properties' (sorted) JSON and whether it is embedded."""
    return hashlib.sha256(f"{int(embed)}|{props_json}".encode()).hexdigest()


#: Records whose first token counts are taken in one batch call (bounded, so a large file is
#: still streamed).
COUNT_WINDOW = 2_048


def _header(record: dict[str, Any]) -> HeaderFields:
    return HeaderFields(
        title=record[Col.TITLE],
        node_type=record[Col.NODE_TYPE],
        parent_title=record[Col.PARENT_TITLE],
        date_range=record[Col.DATE_RANGE],
    )


def _counter_for(
    records: list[dict[str, Any]], count_tokens: TokenCounter, count_tokens_many: TokensCounter
) -> TokenCounter:
    """`count_tokens`, answered from one batch count of what chunking `records` counts first:
    the tokenizer's batch call runs on every core and skips per-call overhead (a file's counts
    took half the time)."""
    texts = [
        text
        for record in records
        for text in texts_counted_first(record[Col.BODY_TEXT], _header(record))
    ]
    known = dict(zip(texts, count_tokens_many(texts), strict=True))

    def count(text: str) -> int:
        tokens = known.get(text)
        return count_tokens(text) if tokens is None else tokens

    return count


def _chunk_rows(
    record: dict[str, Any], row_index: int, count_tokens: TokenCounter, max_tokens: int
) -> list[dict[str, Any]]:
    props: dict[str, Any] = json.loads(record[Col.PROPERTIES])
    is_stub = bool(record[Col.IS_STUB])
    chunks = chunk_record(
        record[Col.NA_ID],
        record[Col.BODY_TEXT],
        _header(record),
        count_tokens=count_tokens,
        max_tokens=max_tokens,
    )
    # A stub without a name has nothing worth embedding; every full record is embedded.
    embed = not is_stub or bool(record[Col.TITLE])
    rows = []
    for chunk in chunks:
        base = (
            props
            if chunk.seq == 0
            else {k: props[k] for k in CONTINUATION_PROPERTIES if k in props}
        )
        node_props = {
            **base,
            Prop.NA_ID: record[Col.NA_ID],
            Prop.CHUNK_ID: chunk.chunk_id,
            Prop.CHUNK_SEQ_ID: chunk.seq,
            Prop.TEXT: chunk.text,
            Prop.TEXT_HASH: chunk.text_hash,
            Prop.FILE_NAME: record[Col.FILE_NAME],
            Prop.LINE_NUM: record[Col.LINE_NUM],
            Prop.NODE_TYPE: record[Col.NODE_TYPE],
            Prop.IS_STUB: is_stub,
        }
        if chunk.seq == 0:
            node_props[Prop.CHUNK_COUNT] = len(chunks)
        first = chunk.seq == 0
        props_json = dumps_sorted(node_props)
        rows.append(
            {
                Col.CHUNK_ID: chunk.chunk_id,
                Col.NA_ID: record[Col.NA_ID],
                Col.CHUNK_SEQ_ID: chunk.seq,
                Col.RECORD_ROW: row_index,
                Col.NODE_TYPE: record[Col.NODE_TYPE],
                Col.IS_STUB: is_stub,
                Col.EMBED: embed,
                Col.TEXT: chunk.text,
                Col.TEXT_HASH: chunk.text_hash,
                Col.TOKENS: chunk.tokens,
                Col.PROPS: props_json,
                Col.ROW_HASH: _row_hash(props_json, embed),
                Col.CHUNK_COUNT: len(chunks) if first else None,
                Col.PARENT_NA_ID: record[Col.PARENT_NA_ID] if first else None,
                Col.REFERENCES: record[Col.REFERENCES] if first else None,
            }
        )
    return rows


def _chunk_key(file: InputFile, chunker_key: str) -> str:
    """What a chunk part is computed from: the file's content and the chunker."""
    return hashlib.sha256(f"{file.sha256}|{chunker_key}".encode()).hexdigest()


def _record_key(record: dict[str, Any]) -> str:
    """Everything a record's chunk rows are computed from (its row index aside). Pickled, not
    JSON-encoded: every row of a changed file is keyed (20,000 rows after a 1% change here),
    and pickling took a third of the time. Equal bytes mean equal rows, so a key never reuses
    another record's chunks; at worst a row pickled differently is chunked again."""
    return hashlib.sha256(pickle.dumps(record, protocol=5)).hexdigest()[:32]


_PREVIEW_COLUMNS = (Col.CHUNK_ID, Col.NODE_TYPE, Col.TOKENS, Col.TEXT)


@dataclass
class _PreviousPart:
    """The file's previous chunk part, kept as Arrow: a changed file re-chunks only its changed
    records (tokenizing is most of this stage's time), and the other records' rows are taken
    from here by index, never turned into Python objects (converting every row of a part to
    dicts and back was most of re-chunking a file with one changed record)."""

    table: pa.Table
    #: record key -> indexes of its rows in `table`
    rows_of: dict[str, list[int]]
    embed: list[bool]
    tokens: list[int]
    is_stub: list[bool]

    def row(self, index: int) -> dict[str, Any]:
        return dict(self.table.slice(index, 1).to_pylist()[0])


def _previous_part(
    layout: WorkLayout, file_id: str, known: dict[str, Any] | None, chunker: str
) -> _PreviousPart | None:
    """The previous part, when it was made by the same chunker."""
    path = layout.chunk_part(file_id)
    if known is None or known.get("chunker") != chunker or not path.exists():
        return None
    keys: list[str] = known.get("record_keys") or []
    try:
        table = (
            pq.read_table(path, page_checksum_verification=True)
            .select(CHUNK_SCHEMA.names)
            .cast(CHUNK_SCHEMA)
        )
    except KeyError:  # a part written with other columns: chunk it all again
        return None
    except PARQUET_DAMAGE:  # a damaged part: chunk it all again
        return None
    by_row: dict[int, list[int]] = {}
    for index, record_row in enumerate(table[Col.RECORD_ROW].to_pylist()):
        by_row.setdefault(record_row, []).append(index)
    return _PreviousPart(
        table,
        {key: by_row[index] for index, key in enumerate(keys) if index in by_row},
        table[Col.EMBED].to_pylist(),
        table[Col.TOKENS].to_pylist(),
        table[Col.IS_STUB].to_pylist(),
    )


def _stubs_counted_apart(stats: dict[str, Any], path: Path) -> dict[str, Any]:
    """Stats written when `records` and `by_type` counted stubs too, recounted from the part
    (one row per record: its first chunk), so that an unchanged file is not chunked again."""
    columns = pq.read_table(path, columns=[Col.RECORD_ROW, Col.NODE_TYPE, Col.IS_STUB])
    first: dict[int, tuple[str, bool]] = {}
    for row, node_type, is_stub in zip(
        columns[Col.RECORD_ROW].to_pylist(),
        columns[Col.NODE_TYPE].to_pylist(),
        columns[Col.IS_STUB].to_pylist(),
        strict=True,
    ):
        first.setdefault(row, (node_type, is_stub))
    own = Counter(node_type for node_type, is_stub in first.values() if not is_stub)
    stubs = sum(is_stub for _, is_stub in first.values())
    return {**stats, "records": sum(own.values()), "stubs": stubs, "by_type": dict(own)}


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
    count_tokens_many: TokensCounter | None = None,
) -> tuple[dict[str, Any], bool]:
    """Chunk every record of one file (stubs and duplicate copies included: the selection
    picks among them later). Returns the part's stats and whether it was (re)computed. With
    `count_tokens_many`, the records' first token counts are taken in one batch."""
    path = layout.chunk_part(file.file_id)
    chunker = f"{chunker_key}|{max_tokens}"
    key = _chunk_key(file, chunker)
    known = read_json(layout.chunk_stats(file.file_id))
    if not force and known is not None and known.get("key") == key and parquet_readable(path):
        kept: dict[str, Any] = dict(known["stats"])
        if "stubs" not in kept:
            kept = _stubs_counted_apart(kept, path)
            write_json(layout.chunk_stats(file.file_id), {**known, "stats": kept})
        return kept, False
    previous = None if force else _previous_part(layout, file.file_id, known, chunker)
    reusable = previous.rows_of if previous is not None else {}
    stats: dict[str, Any] = dict.fromkeys(_STAT_FIELDS, 0)
    stats["records_reused"] = 0
    by_type: Counter[str] = Counter()
    max_seen = 0
    #: The part's rows in order: an index into the previous part, or into `fresh` after it.
    order: list[int] = []
    record_rows: list[int] = []
    fresh: list[dict[str, Any]] = []
    offset = previous.table.num_rows if previous is not None else 0
    record_keys: list[str] = []
    records = _parsed_rows(layout, file)

    def count_row(
        embed: bool, tokens: int, is_stub: bool, row: Callable[[], dict[str, Any]]
    ) -> None:
        """The row's share of the stats; `row` is called only for a preview row."""
        nonlocal max_seen
        stats["embedded_chunks"] += int(embed)
        max_seen = max(max_seen, tokens)
        if preview is not None and len(preview) < preview_rows and not is_stub:
            values = row()
            preview.append({k: values[k] for k in _PREVIEW_COLUMNS})

    while window := list(islice(records, COUNT_WINDOW)):
        keys = [_record_key(record) for record in window]
        record_keys.extend(keys)
        counter = count_tokens
        if count_tokens_many is not None:
            to_chunk = [r for r, k in zip(window, keys, strict=True) if k not in reusable]
            counter = _counter_for(to_chunk, count_tokens, count_tokens_many)
        first_row = len(record_keys) - len(window)
        for row_index, (record, record_key) in enumerate(zip(window, keys, strict=True), first_row):
            reused = reusable.get(record_key)
            if reused is not None and previous is not None:
                stats["records_reused"] += 1
                for index in reused:
                    count_row(
                        previous.embed[index],
                        previous.tokens[index],
                        previous.is_stub[index],
                        partial(previous.row, index),
                    )
                order.extend(reused)
                n_rows = len(reused)
            else:
                rows = _chunk_rows(record, row_index, counter, max_tokens)
                for row in rows:
                    count_row(row[Col.EMBED], row[Col.TOKENS], row[Col.IS_STUB], partial(dict, row))
                order.extend(range(offset + len(fresh), offset + len(fresh) + len(rows)))
                fresh.extend(rows)
                n_rows = len(rows)
            record_rows.extend([row_index] * n_rows)
            if record[Col.IS_STUB]:
                stats["stubs"] += 1
            else:
                stats["records"] += 1
                by_type[record[Col.NODE_TYPE]] += 1
            stats["chunks"] += n_rows
            stats["multi_chunk_records"] += int(n_rows > 1)
            stats["title_only_records"] += int(
                not record[Col.BODY_TEXT] and not record[Col.IS_STUB]
            )
    fresh_table = pa.Table.from_pylist(fresh, schema=CHUNK_SCHEMA)
    combined = (
        pa.concat_tables([previous.table, fresh_table]) if previous is not None else fresh_table
    )
    table = combined.take(pa.array(order, type=pa.int64()))
    position = CHUNK_SCHEMA.get_field_index(Col.RECORD_ROW)
    table = table.set_column(
        position, CHUNK_SCHEMA.field(position), pa.array(record_rows, type=pa.int64())
    )
    write_table(table, path)
    stats["by_type"] = dict(by_type)
    stats["max_tokens_seen"] = max_seen
    write_json(
        layout.chunk_stats(file.file_id),
        {"key": key, "chunker": chunker, "record_keys": record_keys, "stats": stats},
    )
    return stats, True


def chunk_records(
    files: list[InputFile],
    layout: WorkLayout,
    *,
    count_tokens: TokenCounter,
    max_tokens: int,
    chunker_key: str = "",
    force: bool = False,
    log: Log = quiet,
    preview_rows: int = 10,
    count_tokens_many: TokensCounter | None = None,
) -> ChunkResult:
    """`chunk_file` over every file: a part whose file and chunker are unchanged is reused."""
    result = ChunkResult(token_limit=max_tokens)
    started = time.monotonic()
    for position, file in enumerate(files, start=1):
        stats, computed = chunk_file(
            file,
            layout,
            count_tokens=count_tokens,
            count_tokens_many=count_tokens_many,
            max_tokens=max_tokens,
            chunker_key=chunker_key,
            force=force,
            preview=result.preview,
            preview_rows=preview_rows,
        )
        result.count_part(stats, computed)
        if computed:
            log(
                f"chunked {position}/{len(files)} {file.rel_path}: {stats['chunks']} chunks "
                f"({time.monotonic() - started:.1f}s elapsed)"
            )
    return result


def iter_chunks(
    layout: WorkLayout, columns: list[str] | None = None, *, first_only: bool = False
) -> Iterator[dict[str, Any]]:
    """The chunks of the chosen rows (one per naId), file by file in selection order; with
    `first_only`, each record's first chunk alone. Rows are chosen in Arrow before they become
    Python objects: most rows of a part are not wanted (other copies of a record, continuation
    chunks), and turning them into dicts to drop them was most of the read."""
    for file_id, rows in chosen_rows_by_file(layout):
        for kept in chunk_batches_of_file(layout, file_id, rows, columns, first_only=first_only):
            yield from kept.to_pylist()


def chunk_batches_of_file(
    layout: WorkLayout,
    file_id: str,
    rows: Iterable[int],
    columns: list[str] | None = None,
    *,
    first_only: bool = False,
) -> Iterator[pa.RecordBatch]:
    """The chunks of one file's chosen `rows`, a batch at a time, in the part's order."""
    given = rows if isinstance(rows, np.ndarray) else np.fromiter(rows, dtype=np.int64)
    chosen = pa.array(np.unique(given), type=pa.int64())
    if len(chosen) == 0:
        return
    wanted_columns = None if columns is None else sorted({*columns, Col.RECORD_ROW})
    if wanted_columns is not None and first_only and Col.CHUNK_SEQ_ID not in wanted_columns:
        wanted_columns.append(Col.CHUNK_SEQ_ID)
    path = layout.chunk_part(file_id)
    try:
        for kept in _part_batches(path, wanted_columns, chosen, first_only):
            yield kept if columns is None else kept.select(columns)
    except PARQUET_DAMAGE as error:
        raise corrupt_work_file(path, error, layout.chunk_stats(file_id)) from error


def _parsed_rows(layout: WorkLayout, file: InputFile) -> Iterator[dict[str, Any]]:
    """The file's parsed rows; a damaged part is named, and its parse stats removed so that
    the next build parses the file again."""
    path = layout.parsed_part(file.file_id)
    try:
        yield from iter_rows(path)
    except PARQUET_DAMAGE as error:
        raise corrupt_work_file(path, error, layout.parse_stats(file.file_id)) from error


def _part_batches(
    path: Path, columns: list[str] | None, chosen: pa.Array, first_only: bool
) -> Iterator[pa.RecordBatch]:
    """The chosen rows of one chunk part, a batch at a time."""
    parquet = pq.ParquetFile(path, page_checksum_verification=True)
    for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns):
        keep = pc.is_in(batch.column(Col.RECORD_ROW), value_set=chosen)
        if first_only:
            keep = pc.and_(keep, pc.equal(batch.column(Col.CHUNK_SEQ_ID), 0))
        yield batch.filter(keep)


def chunk_parts(layout: WorkLayout) -> list[Path]:
    """The chunk parts of the live files, in selection order."""
    return [layout.chunk_part(file_id) for file_id, _ in chosen_rows_by_file(layout)]


#: The last `record_links` read in this process, with what it was read from: the three
#: relationship steps and the integrity check of one in-process run read the same links.
_LAST_LINKS: tuple[tuple[Any, ...], tuple[RecordLinks, ...]] | None = None
_LINKS_LOCK = threading.Lock()


def _links_source(layout: WorkLayout) -> tuple[Any, ...]:
    """What `record_links` reads, as (path, inode, size, mtime) of each file: a part or
    selection rewritten (always to a new file, then renamed) changes it."""
    paths = [layout.parsed_index, layout.selection]
    if layout.chunks_dir.exists():
        paths.extend(sorted(layout.chunks_dir.glob("*.parquet")))
    source: list[Any] = [str(layout.root)]
    for path in paths:
        try:
            stat = path.stat()
        except FileNotFoundError:
            source.append((path.name, None))
            continue
        source.append((path.name, stat.st_ino, stat.st_size, stat.st_mtime_ns))
    return tuple(source)


def record_links(layout: WorkLayout) -> list[RecordLinks]:
    """One entry per chosen record, from the first chunks (read again only when a file it is
    read from changed since the last call in this process)."""
    global _LAST_LINKS
    source = _links_source(layout)
    with _LINKS_LOCK:
        if _LAST_LINKS is not None and _LAST_LINKS[0] == source:
            return list(_LAST_LINKS[1])
    links = _read_record_links(layout)
    with _LINKS_LOCK:
        _LAST_LINKS = (source, tuple(links))
    return links


def _read_record_links(layout: WorkLayout) -> list[RecordLinks]:
    links = []
    for row in iter_chunks(
        layout,
        [Col.NA_ID, Col.CHUNK_COUNT, Col.PARENT_NA_ID, Col.REFERENCES],
        first_only=True,
    ):
        references = tuple((rel, int(na_id)) for rel, na_id, *_ in json.loads(row[Col.REFERENCES]))
        links.append(
            RecordLinks(
                na_id=row[Col.NA_ID],
                chunk_count=row[Col.CHUNK_COUNT],
                parent_na_id=row[Col.PARENT_NA_ID],
                references=references,
            )
        )
    return links
