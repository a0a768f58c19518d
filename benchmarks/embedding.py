"""The embedding model on its own: plain `SentenceTransformer.encode` of the build's chunk
texts, ONNX Runtime against PyTorch, and the time a build spends inside the model."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import Log, quiet
from benchmarks.sampling import Snapshot, cpu_between, summed_cpu
from nara_kg.embedding.encoder import DEFAULT_BACKEND, DEFAULT_BATCH_SIZE

#: Slices of the sample each backend encodes, in alternating order.
EMBEDDING_ROUNDS = 4


def chunk_texts(work_dir: Path) -> list[str]:
    from nara_kg.ingest.layout import WorkLayout
    from nara_kg.ingest.stages.chunks import iter_chunks
    from nara_kg.model.tables import Col

    layout = WorkLayout(work_dir)
    rows = iter_chunks(layout, [Col.TEXT, Col.EMBED])
    return [row[Col.TEXT] for row in rows if row[Col.EMBED]]


def texts_digest(texts: list[str]) -> str:
    """Which texts, in which order: the plain encodes before and after a build must be of the
    same texts."""
    import hashlib

    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def chunk_texts_before_build(
    data_dir: Path, scratch: Path, *, backend: str = DEFAULT_BACKEND, device: str = "cpu"
) -> list[str]:
    """The texts a build of `data_dir` embeds, scanned, parsed, chunked and selected in
    `scratch` by the build's own stage functions with the model's tokenizer (the model itself
    is not run), so that they can be encoded before the build."""
    from nara_kg.embedding.encoder import Embedder
    from nara_kg.ingest.layout import WorkLayout
    from nara_kg.ingest.stages.chunks import chunk_records
    from nara_kg.ingest.stages.raw_jsonl import scan_inputs
    from nara_kg.ingest.stages.record_selection import parse_inputs, select_live_records

    layout = WorkLayout(scratch)
    layout.ensure()
    embedder = Embedder(backend=backend, device=device)
    files = scan_inputs(data_dir, layout)
    parse_inputs(data_dir, files, layout)
    chunk_records(
        files,
        layout,
        count_tokens=embedder.count_tokens,
        count_tokens_many=embedder.count_tokens_many,
        max_tokens=embedder.max_tokens,
        chunker_key=embedder.key,
    )
    select_live_records(data_dir, layout)
    return chunk_texts(scratch)


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
    backend against PyTorch on a seeded sample of the same texts (0 = all of them).

    The sample is encoded by both backends in `rounds` slices whose order alternates (build's
    backend first, then the other first, ...), so that the machine's speed, which drifts by
    10-25% within minutes here, weighs on both alike: one backend timed whole and then the
    other put the drift in the ratio (0.83 in one run, 1.31 in the one before)."""
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
    skipped: str | None = None if onnx else "not asked for"
    if onnx:
        try:
            import onnxruntime  # noqa: F401
        except ImportError as error:
            skipped = f"onnxruntime is not importable: {error}"
    other_st: Any = None
    other_backend = "torch" if backend in ONNX_BACKENDS else "onnx"
    load_seconds = 0.0
    if skipped is None:
        load_started = time.perf_counter()
        other_st = Embedder(
            model=model, backend=other_backend, device=device, batch_size=batch_size
        )._load()
        load_seconds = time.perf_counter() - load_started
        encode(other_st, texts[:8])
    rng = random.Random(seed)
    indices = list(range(len(texts)))
    if other_st is not None and 0 < onnx_sample < len(texts):
        sample = sorted(rng.sample(indices, onnx_sample))
    else:
        sample = indices
    in_sample = set(sample)
    rest = [i for i in indices if i not in in_sample]
    log(f"plain encode of {len(texts)} texts ({backend}, batch {batch_size})")
    plain_cpu: list[dict[str, Any] | None] = []

    def timed(st: Any, batch: list[str]) -> tuple[Any, float]:
        before = probe() if st is plain else None
        started = time.perf_counter()
        vectors = encode(st, batch)
        seconds = time.perf_counter() - started
        if st is plain:
            plain_cpu.append(cpu_between(before, probe()))
        return vectors, seconds

    # Filled slice by slice, in the sample's order.
    sample_vectors: Any = None
    other_vectors: Any = None
    sample_seconds = other_seconds = 0.0
    rounds = EMBEDDING_ROUNDS if other_st is not None else 1
    for round_ in range(rounds):
        rows = list(range(round_, len(sample), rounds))
        batch = [texts[sample[row]] for row in rows]
        pair = [plain] if other_st is None else [plain, other_st]
        for st in pair if round_ % 2 == 0 else pair[::-1]:
            vectors, seconds = timed(st, batch)
            if sample_vectors is None:
                sample_vectors = np.zeros((len(sample), vectors.shape[1]), dtype=np.float32)
                other_vectors = np.zeros_like(sample_vectors)
            if st is plain:
                sample_vectors[rows], sample_seconds = vectors, sample_seconds + seconds
            else:
                other_vectors[rows], other_seconds = vectors, other_seconds + seconds
    rest_seconds = timed(plain, [texts[i] for i in rest])[1] if rest else 0.0
    total = sample_seconds + rest_seconds
    tokens = sum(len(ids) for ids in plain.tokenizer([*texts], truncation=False)["input_ids"])
    out: dict[str, Any] = {
        "texts": len(texts),
        "tokens": tokens,
        "backend": backend,
        "batch_size": batch_size,
        "texts_digest": texts_digest(texts),
        "seconds": round(total, 3),
        "chunks_per_second": round(len(texts) / total, 2) if total else None,
        "cpu": summed_cpu(plain_cpu),
        "onnx": None if skipped in (None, "not asked for") else {"skipped": skipped},
    }
    if other_st is None:
        return out
    if other_backend == "onnx":
        torch_seconds, onnx_seconds = sample_seconds, other_seconds
    else:
        torch_seconds, onnx_seconds = other_seconds, sample_seconds
    cosines = np.sum(other_vectors * sample_vectors, axis=1)
    out["onnx"] = {
        "texts": len(sample),
        "build_backend": backend,
        "rounds": rounds,
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
