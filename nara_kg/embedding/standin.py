"""A labelled stand-in for the embedding model: vectors from a hash of the text, no model.

It exists so that everything but the model (parse, chunk, nodes, relationships, Leiden,
reports, indexes, search) can be built and measured at 10^5-10^6 records on a small machine
(`nara-kg bench --scale N`). It is chosen with the embedding resource's backend `standin`
(`NARA_KG_EMBEDDING_BACKEND=standin`).

* **Vectors.** Each word unigram and bigram of the lower-cased text is hashed (blake2b) into one
  of `dimension` buckets with a hashed sign (the "hashing trick"), and the sum is normalized to
  unit length. Texts that share words get close vectors, so the vector index and the search
  ranking work on realistic, not random, neighbourhoods. Deterministic across processes and
  machines (no salted `hash()`).
* **Key.** `standin-hash:<dimension>`: stand-in vectors never count as a real model's, so a
  later build with the real model re-embeds everything.
* **Tokens.** `count_tokens` is a whitespace word count plus the two special tokens a
  BERT-style model adds: cheap, and close enough to the real tokenizer for the chunker's
  splits to be of realistic size (real WordPiece counts are somewhat higher, so stand-in
  chunks are somewhat longer).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from nara_kg.embedding.encoder import Embedder

#: The backend name that selects the stand-in (EmbeddingModel.backend).
STANDIN_BACKEND = "standin"
#: all-MiniLM-L6-v2's dimension and window, so indexes and chunks have the real model's shape.
STANDIN_DIMENSION = 384
STANDIN_MAX_TOKENS = 256
#: [CLS] and [SEP].
_SPECIAL_TOKENS = 2

_WORD = re.compile(r"\w+", re.UNICODE)


def standin_key(dimension: int = STANDIN_DIMENSION) -> str:
    return f"standin-hash:{dimension}"


def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return (value >> 1) % dimension, 1.0 if value & 1 else -1.0


def hash_vector(text: str, dimension: int = STANDIN_DIMENSION) -> np.ndarray:
    """The unit vector of one text (all zeros but one fixed bucket for a text without words)."""
    vector = np.zeros(dimension, dtype=np.float32)
    words = _WORD.findall(text.lower())
    features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
    for feature in features or ["\x00empty"]:
        index, sign = _bucket(feature, dimension)
        vector[index] += sign
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:  # features that cancel out exactly
        index, _ = _bucket(text, dimension)
        vector[index] = 1.0
        norm = 1.0
    vector /= norm
    return vector


@dataclass
class StandinEmbedder(Embedder):
    """`Embedder`'s interface without a model. `model` and `device` are ignored."""

    backend: str = STANDIN_BACKEND
    standin_dimension: int = STANDIN_DIMENSION

    @cached_property
    def dimension(self) -> int:
        return self.standin_dimension

    @cached_property
    def max_tokens(self) -> int:
        return STANDIN_MAX_TOKENS

    @cached_property
    def key(self) -> str:
        return standin_key(self.standin_dimension)

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + _SPECIAL_TOKENS

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.standin_dimension), dtype=np.float32)
        return np.stack([hash_vector(text, self.standin_dimension) for text in texts])
