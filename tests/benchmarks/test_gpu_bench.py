"""The GPU worker's measurement (benchmarks.gpu), run here on the CPU: the float16-stored model
widens back to the weights the reference was computed from, and the report compares vectors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.gpu import _narrowed_model, _widened_model, measure
from nara_kg.embedding.encoder import DEFAULT_MODEL, resolve_model_path

TEXTS = [
    "Volume 12, January 1-15, 1942",
    "Photographs of Tennessee Valley Authority dams under construction",
    "Correspondence of the Bureau of Indian Affairs",
    "Naval court martial case files",
    "Minutes of the board meeting, 3 March 1942",
]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sentence_transformers import SentenceTransformer

    src = tmp_path_factory.mktemp("gpu")
    _narrowed_model(resolve_model_path(DEFAULT_MODEL), src / "model")
    widened = _widened_model(src / "model", src / "model-f32")
    (src / "texts.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TEXTS))
    indices = [0, 2, 4]
    vectors = SentenceTransformer(str(widened), device="cpu").encode(
        [TEXTS[i] for i in indices], normalize_embeddings=True, convert_to_numpy=True
    )
    np.save(src / "reference.npy", vectors)
    (src / "reference.json").write_text(json.dumps({"indices": indices, "texts": len(TEXTS)}))
    return src


def test_the_carried_model_is_half_the_size_and_widens_to_float32(prepared: Path) -> None:
    from safetensors.torch import load_file

    original = resolve_model_path(DEFAULT_MODEL) / "model.safetensors"
    narrowed = prepared / "model" / "model.safetensors"
    assert narrowed.stat().st_size < 0.55 * original.stat().st_size
    widened = load_file(prepared / "model-f32" / "model.safetensors")
    weights = load_file(original)
    assert widened.keys() == weights.keys()
    for name, tensor in weights.items():
        if tensor.is_floating_point():
            assert widened[name].dtype == tensor.dtype
            assert (widened[name] == tensor.half().float()).all(), name


def test_measure_reports_throughput_and_agreement_with_the_reference(prepared: Path) -> None:
    result = measure(prepared, "cpu", batch_sizes=(2, 4))
    assert [run["batch_size"] for run in result["float32"]] == [2, 4]
    assert all(run["texts"] == len(TEXTS) and run["tokens"] > 0 for run in result["float32"])
    assert result["float32_vs_cpu"]["min_cosine"] > 0.9999
    assert result["query_ms"]["p50"] > 0
    assert "float16" not in result  # half precision is measured on a GPU only


def test_a_reference_from_other_weights_shows_in_the_cosine(prepared: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    for name in ("model", "texts.jsonl", "reference.json"):
        source = prepared / name
        target = other / name
        if source.is_dir():
            target.symlink_to(source, target_is_directory=True)
        else:
            target.write_bytes(source.read_bytes())
    shuffled = np.load(prepared / "reference.npy")[[1, 2, 0]]
    np.save(other / "reference.npy", shuffled)
    assert measure(other, "cpu", batch_sizes=(4,))["float32_vs_cpu"]["min_cosine"] < 0.99
