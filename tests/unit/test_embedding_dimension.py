"""The embedding dimension is read from the model's files, so stages that only copy or index
vectors never load the model."""

from __future__ import annotations

import json
from pathlib import Path

from nara_kg.embedding.encoder import Embedder
from nara_kg.embedding.model_files import bundled_model_path, declared_dimension


def test_the_bundled_model_declares_its_dimension_without_loading() -> None:
    embedder = Embedder()
    assert embedder.dimension == 384
    assert embedder._model is None


def _model_folder(tmp_path: Path, modules: list[str]) -> Path:
    tmp_path.mkdir()
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": 768})
    )
    entries = [
        {"idx": i, "name": str(i), "path": "1_Pooling" if "Pooling" in m else "", "type": m}
        for i, m in enumerate(modules)
    ]
    (tmp_path / "modules.json").write_text(json.dumps(entries))
    return tmp_path


def test_a_dense_layer_after_pooling_leaves_the_dimension_to_the_model(tmp_path: Path) -> None:
    plain = ["sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling"]
    assert declared_dimension(_model_folder(tmp_path / "a", plain)) == 768
    dense = [*plain, "sentence_transformers.models.Dense"]
    assert declared_dimension(_model_folder(tmp_path / "b", dense)) is None
    assert declared_dimension(tmp_path / "missing") is None
    assert declared_dimension(bundled_model_path()) == 384
