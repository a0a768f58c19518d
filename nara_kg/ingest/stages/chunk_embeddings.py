"""chunk_embeddings: the vectors of each input file's embeddable chunks, a chunk whose text and
model are unchanged keeping its vector. Several files go through together: `plan_file` for
each, one `encode_pending` for all of them, then `write_vectors` for each."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from nara_kg.ingest.inputs import InputFile
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.records import iter_rows
from nara_kg.ingest.stages.common import PARQUET_DAMAGE, write_table
from nara_kg.model.progress import Log, quiet
from nara_kg.model.tables import MODEL_KEY_METADATA, Col, vector_schema

if TYPE_CHECKING:
    from nara_kg.embedding.encoder import Embedder


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


def read_vector_part(path: Path, model_key: str) -> dict[tuple[str, str], Any]:
    """(chunkId, textHash) -> vector (a float32 array) of a part made with `model_key`."""
    import numpy as np

    if not path.exists():
        return {}
    try:
        table = pq.read_table(path, page_checksum_verification=True)
    except PARQUET_DAMAGE:  # a damaged part: its vectors are encoded again
        return {}
    if (table.schema.metadata or {}).get(MODEL_KEY_METADATA, b"").decode() != model_key:
        return {}
    if table.num_rows == 0:
        return {}
    flat = table[Col.VECTOR].combine_chunks().flatten().to_numpy(zero_copy_only=False)
    vectors = np.asarray(flat, dtype=np.float32).reshape(table.num_rows, -1)
    return {
        (chunk_id, text_hash): vectors[i]
        for i, (chunk_id, text_hash) in enumerate(
            zip(table[Col.CHUNK_ID].to_pylist(), table[Col.TEXT_HASH].to_pylist(), strict=True)
        )
    }


@dataclass
class PendingVectors:
    """One file's vectors between reading what is to be encoded and writing its part: the chunks
    it keeps (`unique`), the vectors it already has, and the texts still to encode (`todo`)."""

    path: Path
    rel_path: str
    unique: list[tuple[str, str]]
    texts: dict[tuple[str, str], str]
    vectors: dict[tuple[str, str], Any]
    todo: list[tuple[str, str]]
    result: FileEmbeddingResult
    #: The part on disk is already what this file's vectors would be: nothing to write.
    current: bool = False


def plan_file(
    file: InputFile, layout: WorkLayout, model_key: str, *, force: bool = False
) -> PendingVectors:
    """What one file's vector part needs: the embeddable chunks of its full records (stubs are
    titles shared by many files: the graph-wide `text_embeddings` encodes the few that are
    chosen). A chunk whose text and model are unchanged keeps its vector (none does with
    `force`); the rest are to be encoded."""
    result = FileEmbeddingResult(model_key=model_key)
    path = layout.vector_part(file.file_id)
    previous = {} if force else read_vector_part(path, model_key)
    rows = [
        (row[Col.CHUNK_ID], row[Col.TEXT_HASH], row[Col.TEXT])
        for row in iter_rows(
            layout.chunk_part(file.file_id),
            [Col.CHUNK_ID, Col.TEXT_HASH, Col.TEXT, Col.EMBED, Col.IS_STUB],
        )
        if row[Col.EMBED] and not row[Col.IS_STUB]
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
    current = not force and not todo and path.exists() and len(previous) == len(unique)
    return PendingVectors(path, file.rel_path, unique, texts, vectors, todo, result, current)


def encode_pending(
    files: Sequence[PendingVectors],
    embedder: Embedder,
    *,
    page_size: int = 512,
    log: Log = quiet,
) -> int:
    """Encode the texts the `files` still need, together, and return how many distinct texts
    went through the model.

    * Each distinct text is encoded once, however many chunks carry it: sibling file units
      often share a title (with its header, the whole text of a short record), 3.4% of the
      bench's 15,393 chunk texts and 1.2% of their tokens.
    * Longest first across all the files, `page_size` per call, so batches hold texts of
      near-equal length. Sorted per file instead, the same texts took 2.3% longer (interleaved
      passes over 3,875 texts of six files): each file's short texts end a page and the next
      file's long ones begin it, and batches mix lengths more.

    Each file's time in the model is its share of the chunks encoded."""
    import numpy as np

    from nara_kg.embedding.encoder import release_free_memory

    todo = [(pending, key) for pending in files for key in pending.todo]
    holders: dict[str, list[tuple[PendingVectors, tuple[str, str]]]] = {}
    for pending, key in todo:
        holders.setdefault(pending.texts[key], []).append((pending, key))
    distinct = sorted(holders, key=len, reverse=True)
    seconds = 0.0
    for offset in range(0, len(distinct), page_size):
        page = distinct[offset : offset + page_size]
        started = time.perf_counter()
        encoded = embedder.encode(page)
        seconds += time.perf_counter() - started
        for text, vector in zip(page, encoded, strict=True):
            vector = np.asarray(vector, dtype=np.float32)
            for pending, key in holders[text]:
                pending.vectors[key] = vector
        release_free_memory()
        log(
            f"encoded {offset + len(page)}/{len(distinct)} distinct texts "
            f"({len(todo)} chunks) of {len(files)} files"
        )
    for pending in files:
        pending.result.encoded = len(pending.todo)
        if todo:
            pending.result.seconds_encoding = seconds * len(pending.todo) / len(todo)
    return len(distinct)


def write_vectors(pending: PendingVectors, dimension: int) -> FileEmbeddingResult:
    """Write one file's vector part (once `encode_pending` has filled its vectors)."""
    import numpy as np

    if pending.current:
        return pending.result
    model_key = pending.result.model_key
    unique = pending.unique
    matrix = (
        np.stack([pending.vectors[key] for key in unique])
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
        schema=vector_schema(dimension, model_key),
    )
    write_table(table, pending.path)
    return pending.result
