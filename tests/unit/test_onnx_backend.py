"""The ONNX Runtime backend reproduces the PyTorch vectors and is exported once, offline."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from nara_kg.embedding.encoder import Embedder, resolve_model_path

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("onnx") is None,
    reason="the ONNX backend needs the onnxruntime and onnx packages, which are not installed",
)

TEXTS = [
    "Minutes",
    "Letters of the War Relocation Authority, 1942-1946.",
    "Photograph of the county courthouse in Fairview, Kansas",
    "Series: Case files of the Farm Security Administration regional office, documenting "
    "loans to families resettled after the 1936 drought, with correspondence, inspection "
    "reports and photographs of the new homesteads. " * 2,
    # Longer than the model's 256 tokens: both backends must truncate it the same way.
    "Report on the construction of levees along the river, with maps and surveys. " * 40,
    "Ünïcödé names: Zoë Ångström, José Nuñez — and an en dash, 1890\u20131910.",
]


@pytest.fixture(scope="module")
def onnx_embedder() -> Embedder:
    return Embedder(backend="onnx")


def test_onnx_vectors_match_pytorch(embedder: Embedder, onnx_embedder: Embedder) -> None:
    torch_vectors = embedder.encode(TEXTS)
    onnx_vectors = onnx_embedder.encode(TEXTS)
    assert onnx_vectors.shape == torch_vectors.shape == (len(TEXTS), 384)
    cosines = np.sum(torch_vectors * onnx_vectors, axis=1)
    assert cosines.min() >= 0.999, cosines
    assert np.allclose(np.linalg.norm(onnx_vectors, axis=1), 1.0, atol=1e-4)


def test_onnx_backend_keeps_the_model_interface(
    embedder: Embedder, onnx_embedder: Embedder
) -> None:
    assert onnx_embedder.dimension == embedder.dimension
    assert onnx_embedder.max_tokens == embedder.max_tokens
    assert onnx_embedder.count_tokens(TEXTS[3]) == embedder.count_tokens(TEXTS[3])
    # The backend is part of the key: switching it re-embeds rather than mixing vectors.
    assert onnx_embedder.key != embedder.key
    assert ":onnx:" in onnx_embedder.key


def test_export_is_cached(onnx_embedder: Embedder) -> None:
    from nara_kg.embedding.onnx_backend import EXPORT_INFO_FILE, ONNX_FILE, export_dir_for

    onnx_embedder.encode(["warm"])
    target = export_dir_for(resolve_model_path(onnx_embedder.model), onnx_embedder.model)
    assert (target / ONNX_FILE).is_file()
    assert (target / EXPORT_INFO_FILE).is_file()
    exported_at = (target / ONNX_FILE).stat().st_mtime_ns
    again = Embedder(backend="onnx")
    again.encode(["warm"])
    assert (target / ONNX_FILE).stat().st_mtime_ns == exported_at  # loaded, not re-exported
