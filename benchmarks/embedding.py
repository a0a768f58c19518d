"""The embedding model on its own: plain `SentenceTransformer.encode` of the build's chunk
texts, ONNX Runtime against PyTorch, and the time a build spends inside the model."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import Log, quiet
from benchmarks.sampling import Snapshot, cpu_between
from nara_kg.embedding.encoder import DEFAULT_BACKEND, DEFAULT_BATCH_SIZE


def chunk_texts(work_dir: Path) -> list[str]:
    from nara_kg.ingest.layout import WorkLayout
    from nara_kg.ingest.stages.chunks import iter_chunks
    from nara_kg.model.tables import Col

    layout = WorkLayout(work_dir)
    rows = iter_chunks(layout, [Col.TEXT, Col.EMBED])
    return [row[Col.TEXT] for row in rows if row[Col.EMBED]]


def measure_embedding(
    texts: list[str],
    *,
    model: str | None = None,
    backend: str = DEFAULT_BACKEND,
    device: str = "cpu",
    batch_size: int = DEFAULT_BATCH_SIZE,
    onnx: bool = True,
    onnx_sample: int = 2_000,
    seed: int = 7,
    log: Log = quiet,
    probe: Callable[[], Snapshot | None] = lambda: None,
) -> dict[str, Any]:
    """Plain encode of `texts` with the build's backend (the embedding time alone), and the ONNX
    backend against PyTorch on a seeded sample of the same texts (0 = all of them)."""
    import numpy as np

    from nara_kg.embedding.encoder import DEFAULT_MODEL, ONNX_BACKENDS, Embedder

    model = model or DEFAULT_MODEL
    plain = Embedder(model=model, backend=backend, device=device, batch_size=batch_size)._load()

    def encode(st: Any, batch: list[str]) -> Any:
        return st.encode(
            batch,
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )

    encode(plain, texts[:8])  # warm-up: first-call allocations stay out of the timing
    rng = random.Random(seed)
    indices = list(range(len(texts)))
    if onnx and 0 < onnx_sample < len(texts):
        sample = sorted(rng.sample(indices, onnx_sample))
    else:
        sample = indices
    in_sample = set(sample)
    rest = [i for i in indices if i not in in_sample]
    log(f"plain encode of {len(texts)} texts ({backend}, batch {batch_size})")
    before = probe()
    started = time.perf_counter()
    sample_vectors = encode(plain, [texts[i] for i in sample])
    sample_seconds = time.perf_counter() - started
    started = time.perf_counter()
    if rest:
        encode(plain, [texts[i] for i in rest])
    rest_seconds = time.perf_counter() - started
    plain_cpu = cpu_between(before, probe())
    total = sample_seconds + rest_seconds
    tokens = sum(len(ids) for ids in plain.tokenizer([*texts], truncation=False)["input_ids"])
    out: dict[str, Any] = {
        "texts": len(texts),
        "tokens": tokens,
        "backend": backend,
        "batch_size": batch_size,
        "seconds": round(total, 3),
        "chunks_per_second": round(len(texts) / total, 2) if total else None,
        "cpu": plain_cpu,
        "onnx": None,
    }
    if not onnx:
        return out
    try:
        import onnxruntime  # noqa: F401
    except ImportError as error:
        out["onnx"] = {"skipped": f"onnxruntime is not importable: {error}"}
        return out
    # The other backend of the pair (PyTorch, ONNX Runtime) encodes the same sample.
    other_backend = "torch" if backend in ONNX_BACKENDS else "onnx"
    load_started = time.perf_counter()
    other = Embedder(model=model, backend=other_backend, device=device, batch_size=batch_size)
    other_st = other._load()
    load_seconds = time.perf_counter() - load_started
    encode(other_st, texts[:8])
    log(f"{other_backend} encode of {len(sample)} texts")
    started = time.perf_counter()
    other_vectors = encode(other_st, [texts[i] for i in sample])
    other_seconds = time.perf_counter() - started
    if other_backend == "onnx":
        torch_seconds, onnx_seconds = sample_seconds, other_seconds
    else:
        torch_seconds, onnx_seconds = other_seconds, sample_seconds
    cosines = np.sum(other_vectors * sample_vectors, axis=1)
    out["onnx"] = {
        "texts": len(sample),
        "build_backend": backend,
        "torch_seconds": round(torch_seconds, 3),
        "onnx_seconds": round(onnx_seconds, 3),
        "torch_chunks_per_second": round(len(sample) / torch_seconds, 2),
        "onnx_chunks_per_second": round(len(sample) / onnx_seconds, 2),
        "ratio": round(torch_seconds / onnx_seconds, 3),
        "min_cosine": round(float(cosines.min()), 6),
        "mean_cosine": round(float(cosines.mean()), 6),
        "load_or_export_seconds": round(load_seconds, 3),
    }
    return out


def instrument_model_time() -> dict[str, Any]:
    """Accumulate the time the build spends in the embedding model (loading it, encoding,
    counting tokens) by wrapping `Embedder`'s methods in this process; the rest of the build's
    wall time is the pipeline's own overhead."""
    from nara_kg.embedding.encoder import Embedder

    spent: dict[str, Any] = {
        "loads": 0,
        "load_seconds": 0.0,
        "encode_calls": 0,
        "encoded_texts": 0,
        "encode_seconds": 0.0,
        "count_tokens_calls": 0,
        "count_tokens_seconds": 0.0,
    }
    original_load = Embedder._load_model
    original_encode = Embedder.encode
    original_count = Embedder.count_tokens

    def _load_model(self: Any) -> Any:
        started = time.perf_counter()
        try:
            return original_load(self)
        finally:
            spent["loads"] += 1
            spent["load_seconds"] += time.perf_counter() - started

    def encode(self: Any, texts: list[str]) -> Any:
        self._load()
        started = time.perf_counter()
        try:
            return original_encode(self, texts)
        finally:
            spent["encode_calls"] += 1
            spent["encoded_texts"] += len(texts)
            spent["encode_seconds"] += time.perf_counter() - started

    def count_tokens(self: Any, text: str) -> int:
        # Counting needs the tokenizer only: it never waits for (or starts) a model load.
        started = time.perf_counter()
        try:
            return original_count(self, text)
        finally:
            spent["count_tokens_calls"] += 1
            spent["count_tokens_seconds"] += time.perf_counter() - started

    Embedder._load_model = _load_model  # type: ignore[method-assign]
    Embedder.encode = encode  # type: ignore[method-assign]
    Embedder.count_tokens = count_tokens  # type: ignore[method-assign]
    return spent
