"""The stand-in embedder: labelled, deterministic, unit vectors of the model's shape, chosen
through the embedding resource's backend."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from nara_kg.embedding.encoder import DEFAULT_BACKEND, Embedder
from nara_kg.embedding.standin import (
    STANDIN_DIMENSION,
    StandinEmbedder,
    hash_vector,
    standin_key,
)


def test_vectors_are_unit_float32_of_the_model_dimension() -> None:
    vectors = StandinEmbedder().encode(["Volume 3, 1942-1943", "", "   ", "!!!"])
    assert vectors.shape == (4, STANDIN_DIMENSION)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_empty_input_is_an_empty_matrix() -> None:
    assert StandinEmbedder().encode([]).shape == (0, STANDIN_DIMENSION)


def test_deterministic_across_processes() -> None:
    text = "Correspondence of the Bureau of Reclamation, 1938"
    here = hash_vector(text)
    code = (
        "from nara_kg.embedding.standin import hash_vector;"
        f"print(','.join(repr(float(x)) for x in hash_vector({text!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    there = np.array([float(x) for x in out.strip().split(",")], dtype=np.float32)
    assert np.array_equal(here, there)


def test_shared_words_make_closer_vectors() -> None:
    a, b, c = StandinEmbedder().encode(
        [
            "Soil conservation photographs of Kansas farms",
            "Photographs of soil conservation on Kansas farms",
            "Naval court-martial case files, Pacific fleet",
        ]
    )
    assert float(a @ b) > 0.5 > float(a @ c)


def test_labelled_so_vectors_never_mix_with_a_real_model() -> None:
    embedder = StandinEmbedder()
    assert embedder.key == standin_key() == "standin-hash:384"
    assert embedder.dimension == 384
    assert embedder.backend == "standin"
    assert isinstance(embedder, Embedder)


def test_count_tokens_is_words_plus_the_two_special_tokens() -> None:
    embedder = StandinEmbedder()
    assert embedder.count_tokens("") == 2
    assert embedder.count_tokens("three short  words") == 5
    assert embedder.max_tokens == 256


def test_the_embedding_resource_selects_it_by_backend() -> None:
    from resources import EmbeddingModel

    assert isinstance(EmbeddingModel(backend="standin").get_embedder(), StandinEmbedder)
    real = EmbeddingModel().get_embedder()
    assert not isinstance(real, StandinEmbedder)
    assert real.backend == DEFAULT_BACKEND == "onnx"


def test_the_environment_variable_selects_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import dagster as dg

    from resources import build_resources

    monkeypatch.setenv("NARA_KG_EMBEDDING_BACKEND", "standin")
    resource = build_resources()["embedding_model"]
    with dg.build_resources({"embedding_model": resource}) as initialized:
        assert isinstance(initialized.embedding_model.get_embedder(), StandinEmbedder)
