"""Several files' texts are encoded together, longest first across the files, and each file gets
back exactly its own vectors and its share of the time in the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from nara_kg.ingest.stages.chunk_embeddings import (
    FileEmbeddingResult,
    PendingVectors,
    encode_pending,
    write_vectors,
)
from nara_kg.ingest.stages.chunk_embeddings import read_vector_part as read_part

DIMENSION = 4


class _RecordingEmbedder:
    """Vectors that name their text (its length in the first component), and every call's
    texts."""

    key = "fake:model"
    dimension = DIMENSION

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: list[str]) -> Any:
        self.calls.append(list(texts))
        return np.array([[len(t), 1.0, 0.0, 0.0] for t in texts], dtype=np.float32)


def _pending(tmp_path: Path, name: str, texts: list[str], kept: int = 0) -> PendingVectors:
    keys = [(f"{name}-{i}", f"h{i}") for i in range(len(texts))]
    vectors = {key: np.full(DIMENSION, -1.0, np.float32) for key in keys[:kept]}
    return PendingVectors(
        path=tmp_path / f"{name}.parquet",
        rel_path=f"{name}.jsonl",
        unique=keys,
        texts=dict(zip(keys, texts, strict=True)),
        vectors=vectors,
        todo=keys[kept:],
        result=FileEmbeddingResult(chunks=len(keys), reused=kept, model_key="fake:model"),
    )


def test_texts_of_all_files_are_sorted_together(tmp_path: Path) -> None:
    first = _pending(tmp_path, "a", ["x" * 5, "x" * 50, "x" * 20])
    second = _pending(tmp_path, "b", ["x" * 40, "x" * 10, "x" * 30])
    embedder = _RecordingEmbedder()
    encode_pending([first, second], embedder, page_size=4)  # type: ignore[arg-type]
    assert [[len(t) for t in call] for call in embedder.calls] == [[50, 40, 30, 20], [10, 5]]


def test_each_file_gets_its_own_vectors_and_share(tmp_path: Path) -> None:
    first = _pending(tmp_path, "a", ["x" * 5, "x" * 50, "x" * 20], kept=1)
    second = _pending(tmp_path, "b", ["x" * 40])
    encode_pending([first, second], _RecordingEmbedder(), page_size=2)  # type: ignore[arg-type]
    assert first.vectors[("a-0", "h0")][0] == -1.0  # kept, not encoded again
    assert first.vectors[("a-1", "h1")][0] == 50.0
    assert first.vectors[("a-2", "h2")][0] == 20.0
    assert second.vectors[("b-0", "h0")][0] == 40.0
    assert (first.result.encoded, second.result.encoded) == (2, 1)
    total = first.result.seconds_encoding + second.result.seconds_encoding
    assert first.result.seconds_encoding == total * 2 / 3

    write_vectors(first, DIMENSION)
    written = read_part(first.path, "fake:model")
    assert list(written) == first.unique
    assert [float(v[0]) for v in written.values()] == [-1.0, 50.0, 20.0]


def test_nothing_to_encode_makes_no_call(tmp_path: Path) -> None:
    embedder = _RecordingEmbedder()
    done = _pending(tmp_path, "a", ["x"], kept=1)
    encode_pending([done], embedder)  # type: ignore[arg-type]
    assert embedder.calls == []
    assert done.result.seconds_encoding == 0.0


def test_a_text_shared_by_chunks_is_encoded_once(tmp_path: Path) -> None:
    first = _pending(tmp_path, "a", ["same title", "x" * 30, "same title"])
    second = _pending(tmp_path, "b", ["same title", "y" * 30])
    embedder = _RecordingEmbedder()
    distinct = encode_pending([first, second], embedder)  # type: ignore[arg-type]
    assert distinct == 3
    assert sorted(text for call in embedder.calls for text in call) == sorted(
        ["same title", "x" * 30, "y" * 30]
    )
    for pending in (first, second):
        assert set(pending.vectors) == set(pending.unique)
        assert pending.result.encoded == len(pending.unique)
    assert first.vectors[("a-0", "h0")][0] == first.vectors[("a-2", "h2")][0] == 10.0
    assert second.vectors[("b-0", "h0")][0] == 10.0
