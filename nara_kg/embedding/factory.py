"""The one way from the embedding settings to an embedder: the EmbeddingModel resource, the API
and `nara-kg ask` all call `make_embedder`, so each default and the choice of the stand-in
live here once."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nara_kg.embedding.encoder import DEFAULT_BACKEND, DEFAULT_BATCH_SIZE, Embedder
from nara_kg.embedding.model_files import DEFAULT_MODEL
from nara_kg.embedding.standin import STANDIN_BACKEND, StandinEmbedder
from nara_kg.settings import RESOURCE_VARIABLES, configured, parse_value

DEFAULT_DEVICE = "cpu"
#: Intra-op threads of the model; 0: the library's default, one per core.
DEFAULT_THREADS = 0


@dataclass
class LockedEmbedder(Embedder):
    """The embedding model behind one lock: the API runs requests on a thread pool, and a
    Hugging Face fast tokenizer refuses concurrent use ("Already borrowed")."""

    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def encode(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            return super().encode(texts)

    def count_tokens(self, text: str) -> int:
        with self._lock:
            return super().count_tokens(text)


def make_embedder(
    model: str = DEFAULT_MODEL,
    backend: str = DEFAULT_BACKEND,
    device: str = DEFAULT_DEVICE,
    batch_size: int = DEFAULT_BATCH_SIZE,
    threads: int = DEFAULT_THREADS,
    *,
    shared: bool = False,
) -> Embedder:
    """The embedder these settings configure; backend `standin` is hashed vectors and no model
    (for measuring the rest at scale). `shared`: called from several threads at once, so the
    model's calls take turns."""
    if backend == STANDIN_BACKEND:
        return StandinEmbedder(batch_size=batch_size)
    kind = LockedEmbedder if shared else Embedder
    return kind(model=model, device=device, backend=backend, batch_size=batch_size, threads=threads)


def embedding_settings(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`make_embedder`'s arguments as the EmbeddingModel resource's variables set them (those
    unset keep their defaults)."""
    fields: dict[str, Any] = configured("embedding_model", env)
    if "threads" in fields:
        variable = RESOURCE_VARIABLES["embedding_model"]["threads"]
        fields["threads"] = parse_value(variable, fields["threads"], int)
    return fields
