"""The bench's backend comparison: both backends encode the same sample in slices whose order
alternates, so that the machine's drift weighs on both alike; vectors come back in order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import benchmarks.embedding as bench_embedding
from benchmarks.sampling import summed_cpu
from nara_kg.embedding.encoder import Embedder


class FakeModel:
    """Encodes a text as a unit vector that depends on its text only; logs who encoded what."""

    def __init__(self, name: str, calls: list[tuple[str, int]]) -> None:
        self.name, self.calls = name, calls

    def get_sentence_embedding_dimension(self) -> int:
        return 4

    def encode(self, batch: list[str], **_: Any) -> np.ndarray:
        self.calls.append((self.name, len(batch)))
        vectors = np.array([[len(t), t.count("a") + 1, 1.0, 2.0] for t in batch], "float32")
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def tokenizer(self, texts: list[str], truncation: bool = False) -> dict[str, Any]:
        return {"input_ids": [t.split() for t in texts]}


def test_backends_alternate_over_the_sample_and_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, int]] = []

    def load(self: Embedder) -> FakeModel:
        return FakeModel(self.backend, calls)

    monkeypatch.setattr(Embedder, "_load", load)
    texts = [f"text {'a' * (i % 7)} number {i}" for i in range(120)]
    out = bench_embedding.measure_embedding(texts, backend="onnx", onnx_sample=40)
    timed = [call for call in calls if call[1] != 8]  # without the two warm-ups
    rounds = bench_embedding.EMBEDDING_ROUNDS
    assert out["onnx"]["rounds"] == rounds
    firsts = [timed[2 * r][0] for r in range(rounds)]
    assert firsts == ["onnx", "torch"] * (rounds // 2)
    assert sum(n for name, n in timed if name == "torch") == 40
    assert sum(n for name, n in timed if name == "onnx") == 120
    # Both backends' vectors are put back in the sample's order: they agree text by text.
    assert out["onnx"]["min_cosine"] == pytest.approx(1.0)
    assert out["texts"] == 120 and out["onnx"]["texts"] == 40


def test_cpu_spans_add_up() -> None:
    span = {
        "wall_seconds": 2.0,
        "process_cpu_seconds": 3.0,
        "neo4j_cpu_seconds": 0.5,
        "other_processes_cpu_seconds": 0.25,
        "other_processes_share": 0.0625,
        "steal_seconds": 0.1,
    }
    total = summed_cpu([span, span])
    assert total is not None
    assert total["wall_seconds"] == 4.0 and total["process_cpu_seconds"] == 6.0
    assert total["other_processes_cpu_seconds"] == 0.5
    assert list(total) == list(span)
    assert summed_cpu([span, None]) is None


def test_the_plain_encode_is_bracketed_around_the_build() -> None:
    from benchmarks.suite import bracketed_plain_encode

    cpu = {
        "wall_seconds": 10.0,
        "process_cpu_seconds": 18.0,
        "neo4j_cpu_seconds": 0.5,
        "other_processes_cpu_seconds": 0.0,
        "steal_seconds": 1.0,
        "other_processes_share": 0.0,
        "neo4j_cpu_by_thread": {"gc": 0.5},
    }
    before = {"texts": 100, "texts_digest": "d1", "seconds": 10.0, "cpu": cpu}
    after = {
        "texts": 100,
        "texts_digest": "d1",
        "seconds": 14.0,
        "cpu": {**cpu, "wall_seconds": 14.0, "process_cpu_seconds": 26.0},
    }
    both = bracketed_plain_encode(before, after)
    assert both["seconds"] == 12.0 and both["chunks_per_second"] == pytest.approx(100 / 12, 0.01)
    assert (both["seconds_before_build"], both["seconds_after_build"]) == (10.0, 14.0)
    assert both["cpu"]["process_cpu_seconds"] == 22.0 and both["cpu"]["wall_seconds"] == 12.0
    assert both["cpu"]["neo4j_cpu_by_thread"] == {"gc": 0.5}
    with pytest.raises(RuntimeError, match="different texts"):
        bracketed_plain_encode(before, {**after, "texts_digest": "d2"})


def test_texts_digest_follows_the_texts_and_their_order() -> None:
    digest = bench_embedding.texts_digest
    assert digest(["a", "b"]) == digest(["a", "b"])
    assert digest(["a", "b"]) != digest(["b", "a"])
    assert digest(["ab"]) != digest(["a", "b"])
