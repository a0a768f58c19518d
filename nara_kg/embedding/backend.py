"""The strategy every embedding backend implements: load a model folder into a `SentenceModel`.

`Embedder` (nara_kg.embedding.encoder) picks the backend by name and never sees which one it
got; the backends share the model-file helpers of nara_kg.embedding.model_files and import
neither the encoder nor each other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol


class SentenceModel(Protocol):
    """The part of the `SentenceTransformer` interface `Embedder` calls, which
    `OnnxSentenceEncoder` reproduces."""

    @property
    def max_seq_length(self) -> int: ...

    @property
    def tokenizer(self) -> Any: ...

    def get_sentence_embedding_dimension(self) -> int | None: ...

    def encode(self, sentences: list[str], **options: Any) -> Any: ...


class ModelBackend(Protocol):
    """Loads the model at `path` (a local folder) on `device` with `threads` intra-op threads
    (0: the library's default); `name` is the model's configured name, for caches."""

    def load(self, path: Path, *, device: str, name: str, threads: int) -> SentenceModel: ...
