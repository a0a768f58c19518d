"""The embedding model on a GPU worker, measured on the build's own chunk texts.

A GPU machine lent through the workplace's device tool takes at most 64 MiB per call and reaches
no package registry. The model and the texts travel in one folder, which `prepare` (here) writes
(the whole build travels in three parts: benchmarks/gpu_build.py):

* `texts.jsonl`: the chunk texts a build embedded (read from its work directory);
* `model/`: the project's model with its weights stored in float16, to fit the limit; `measure`
  widens them back to float32 before loading, and the CPU reference below is computed from the
  same widened weights, so every comparison is between equal weights;
* `reference.npy` + `reference.json`: PyTorch-on-CPU vectors of a seeded sample of the texts.

`measure` (there) encodes the texts through the bench's own `measure_embedding` (the project's
`Embedder`, PyTorch, `device=cuda`) at several batch sizes, then in float16, checks the vectors
against the CPU reference, times single short queries, and writes one JSON file.

    python -m benchmarks.gpu prepare --work-dir var/bench/work --dest .gpu
    python -m benchmarks.gpu measure --src .gpu --device cuda --json-out gpu.json
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REFERENCE_SAMPLE = 2_000
BATCH_SIZES = (64, 256, 1024)
QUERIES = (
    "Volume 12 of the German Foreign Office records",
    "photographs of the Tennessee Valley Authority dams",
    "letters from the Bureau of Indian Affairs in early March 1942",
    "naval court martial case files",
)


def _copy_model(source: Path, dest: Path, cast: str) -> Path:
    """`source`'s model folder at `dest` with its floating-point weights cast by the tensor
    method `cast` ("half": stored narrow to travel, "float": widened back to load)."""
    from safetensors.torch import load_file, save_file

    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("*.safetensors", "README.md"))
    weights = load_file(source / "model.safetensors")
    save_file(
        {k: getattr(v, cast)() if v.is_floating_point() else v for k, v in weights.items()},
        dest / "model.safetensors",
        metadata={"format": "pt"},
    )
    return dest


def _narrowed_model(source: Path, dest: Path) -> Path:
    return _copy_model(source, dest, "half")


def _widened_model(source: Path, dest: Path) -> Path:
    return _copy_model(source, dest, "float")


def _encode(model: Any, texts: list[str], batch_size: int) -> Any:
    return model.encode(
        texts,
        batch_size=batch_size,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    )


def prepare(work_dir: Path, dest: Path, sample: int = REFERENCE_SAMPLE, seed: int = 7) -> None:
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from benchmarks.embedding import chunk_texts
    from nara_kg.embedding.encoder import DEFAULT_MODEL, resolve_model_path

    texts = chunk_texts(work_dir)
    dest.mkdir(parents=True, exist_ok=True)
    with (dest / "texts.jsonl").open("w", encoding="utf-8") as out:
        for text in texts:
            out.write(json.dumps(text) + "\n")
    _narrowed_model(resolve_model_path(DEFAULT_MODEL), dest / "model")
    widened = _widened_model(dest / "model", dest / "model-f32")
    indices = sorted(random.Random(seed).sample(range(len(texts)), min(sample, len(texts))))
    cpu = SentenceTransformer(str(widened), device="cpu")
    started = time.perf_counter()
    vectors = _encode(cpu, [texts[i] for i in indices], 64)
    seconds = time.perf_counter() - started
    np.save(dest / "reference.npy", vectors.astype(np.float32))
    (dest / "reference.json").write_text(
        json.dumps(
            {
                "indices": indices,
                "texts": len(texts),
                "cpu_seconds": round(seconds, 3),
                "cpu_chunks_per_second": round(len(indices) / seconds, 2),
            }
        )
    )
    shutil.rmtree(widened)
    print(f"{dest}: {len(texts)} texts, {len(indices)} reference vectors ({seconds:.1f} s on CPU)")


def _environment(device: str) -> dict[str, Any]:
    import sentence_transformers
    import torch
    import transformers

    env: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "java": shutil.which("java"),
        "cpu_count": __import__("os").cpu_count(),
    }
    if device.startswith("cuda") and torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        env["gpu"] = props.name
        env["gpu_memory_gib"] = round(props.total_memory / 2**30, 1)
        env["multiprocessors"] = props.multi_processor_count
    return env


def _min_mean_cosine(a: Any, b: Any) -> dict[str, float]:
    import numpy as np

    cosines = np.sum(a * b, axis=1)
    return {
        "min_cosine": round(float(cosines.min()), 6),
        "mean_cosine": round(float(cosines.mean()), 6),
    }


def measure(src: Path, device: str, batch_sizes: tuple[int, ...] = BATCH_SIZES) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="nara-kg-gpu-"))
    try:
        return _measure(src, device, batch_sizes, _widened_model(src / "model", scratch / "model"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _measure(
    src: Path, device: str, batch_sizes: tuple[int, ...], model_dir: Path
) -> dict[str, Any]:
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    from benchmarks.embedding import measure_embedding

    texts = [json.loads(line) for line in (src / "texts.jsonl").open(encoding="utf-8")]
    reference = json.loads((src / "reference.json").read_text())
    reference_vectors = np.load(src / "reference.npy")
    result: dict[str, Any] = {"device": device, "environment": _environment(device)}
    result["cpu_reference"] = {k: v for k, v in reference.items() if k != "indices"}

    runs = []
    for batch_size in batch_sizes:
        started = time.perf_counter()
        run = measure_embedding(
            texts,
            model=str(model_dir),
            backend="torch",
            device=device,
            batch_size=batch_size,
            onnx=False,
        )
        run["wall_with_load_seconds"] = round(time.perf_counter() - started, 3)
        run["tokens_per_second"] = round(run["tokens"] / run["seconds"], 1)
        runs.append(run)
        print(f"float32 batch {batch_size}: {run['chunks_per_second']} chunks/s", flush=True)
    result["float32"] = runs

    model = SentenceTransformer(str(model_dir), device=device)
    full = _encode(model, texts, max(batch_sizes))
    result["float32_vs_cpu"] = _min_mean_cosine(full[reference["indices"]], reference_vectors)

    # Short queries one at a time: what a search pays to encode its question on this device.
    latencies = []
    for round_ in range(50):
        for query in QUERIES:
            started = time.perf_counter()
            _encode(model, [query], 1)
            if round_ >= 5:
                latencies.append((time.perf_counter() - started) * 1000)
    latencies.sort()
    result["query_ms"] = {
        "p50": round(statistics.median(latencies), 2),
        "p95": round(latencies[int(0.95 * (len(latencies) - 1))], 2),
    }

    if device.startswith("cuda"):
        result["float32_split"] = _split_times(model, texts, max(batch_sizes))
        half = model.half()
        _encode(half, texts, max(batch_sizes))  # warm-up over every shape the timed pass meets
        torch.cuda.synchronize()
        started = time.perf_counter()
        half_vectors = _encode(half, texts, max(batch_sizes))
        seconds = time.perf_counter() - started
        result["float16"] = {
            "batch_size": max(batch_sizes),
            "seconds": round(seconds, 3),
            "chunks_per_second": round(len(texts) / seconds, 1),
            "tokens_per_second": round(runs[0]["tokens"] / seconds, 1),
            "vs_float32": _min_mean_cosine(half_vectors.astype(np.float32), full),
            "vs_cpu": _min_mean_cosine(
                half_vectors[reference["indices"]].astype(np.float32), reference_vectors
            ),
            "split": _split_times(half, texts, max(batch_sizes)),
        }
        result["peak_gpu_memory_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    return result


def _split_times(model: Any, texts: list[str], batch_size: int) -> dict[str, float]:
    """Where an encode's time goes on a GPU: the tokenizer (CPU, one thread) against the forward
    passes (GPU, synchronized), over length-sorted batches as `encode` makes them."""
    import torch

    def sync() -> None:
        if model.device.type == "cuda":
            torch.cuda.synchronize()

    # sentence-transformers 6.1 renamed `tokenize` to `preprocess`.
    prepare_batch = getattr(model, "preprocess", None) or model.tokenize
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    tokenize = forward = 0.0
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            batch = [texts[i] for i in order[start : start + batch_size]]
            started = time.perf_counter()
            features = prepare_batch(batch)
            tokenize += time.perf_counter() - started
            features = {
                k: v.to(model.device) if isinstance(v, torch.Tensor) else v
                for k, v in features.items()
            }
            sync()
            started = time.perf_counter()
            model.forward(features)
            sync()
            forward += time.perf_counter() - started
    return {"tokenize_seconds": round(tokenize, 3), "forward_seconds": round(forward, 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    prep = sub.add_parser("prepare", help="write the folder a GPU machine takes")
    prep.add_argument("--work-dir", type=Path, required=True)
    prep.add_argument("--dest", type=Path, required=True)
    run = sub.add_parser("measure", help="encode the prepared texts on a device")
    run.add_argument("--src", type=Path, required=True)
    run.add_argument("--device", default="cuda")
    run.add_argument("--json-out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "prepare":
        prepare(args.work_dir, args.dest)
        return 0
    result = measure(args.src, args.device)
    args.json_out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
