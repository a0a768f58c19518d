"""A labelled stand-in for the embedding model: vectors from a hash of the text, no model.

It exists so that everything but the model (parse, chunk, nodes, relationships, Leiden,
reports, indexes, search) can be built and measured at 10^5-10^6 records on a small machine
(`nara-kg bench --scale N`). It is chosen with the embedding resource's backend `standin`
(`NARA_KG_EMBEDDING_BACKEND=standin`).

* **Vectors.** Each word of the lower-cased text is hashed (blake2b, cached), each pair of
  neighbouring words gets the mix of its two hashes (splitmix64), and every such feature adds
  +-1 (a hashed sign) to one of `dimension` buckets (the "hashing trick"); the sum is normalized
  to unit length. Texts that share words get close vectors, so the vector index and the search
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
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

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


#: Odd 64-bit constants of splitmix64, to mix a bigram's two word hashes into one.
_MIX_A = np.uint64(0x9E3779B97F4A7C15)
_MIX_B = np.uint64(0xBF58476D1CE4E5B9)
_MIX_C = np.uint64(0x94D049BB133111EB)


#: Word hashes are kept between calls (a vocabulary is far smaller than the text); the cache is
#: bounded, so its memory does not grow with the input.
@lru_cache(maxsize=1 << 19)
def _word_hash(word: str) -> int:
    digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _mix(values: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: every input bit moves every output bit (uint64, wrapping)."""
    values = values ^ (values >> np.uint64(30))
    values = values * _MIX_B
    values = values ^ (values >> np.uint64(27))
    values = values * _MIX_C
    return values ^ (values >> np.uint64(31))


def hash_vectors(texts: list[str], dimension: int = STANDIN_DIMENSION) -> np.ndarray:
    """One unit vector per text: each word and each pair of neighbouring words adds +-1 to one
    bucket (a text without words gets one fixed bucket). All texts at once, in a few array
    operations, so that the stand-in costs little next to what it is there to measure."""
    count = len(texts)
    if not count:
        return np.zeros((0, dimension), dtype=np.float32)
    hashes: list[int] = []
    owners: list[int] = []
    for row, text in enumerate(texts):
        words = _WORD.findall(text.lower()) or ["\x00empty"]
        hashes.extend(map(_word_hash, words))
        owners.extend([row] * len(words))
    unigrams = np.array(hashes, dtype=np.uint64)
    unigram_rows = np.array(owners, dtype=np.intp)
    # Pairs of neighbouring words within one text.
    same_text = unigram_rows[:-1] == unigram_rows[1:]
    with np.errstate(over="ignore"):
        bigrams = _mix(unigrams[:-1] * _MIX_A + unigrams[1:])[same_text]
    features = np.concatenate([unigrams, bigrams])
    rows = np.concatenate([unigram_rows, unigram_rows[:-1][same_text]])
    buckets = ((features >> np.uint64(1)) % np.uint64(dimension)).astype(np.intp)
    signs = np.where(features & np.uint64(1), 1.0, -1.0)
    vectors = np.bincount(rows * dimension + buckets, weights=signs, minlength=count * dimension)
    vectors = vectors.reshape(count, dimension)
    norms = np.linalg.norm(vectors, axis=1)
    for empty in np.flatnonzero(norms == 0.0):  # features that cancel out exactly
        first = unigrams[np.flatnonzero(unigram_rows == empty)[0]]
        vectors[empty, int(first % np.uint64(dimension))] = 1.0
        norms[empty] = 1.0
    return (vectors / norms[:, None]).astype(np.float32)


def hash_vector(text: str, dimension: int = STANDIN_DIMENSION) -> np.ndarray:
    """The unit vector of one text (the same as its row of `hash_vectors`)."""
    return hash_vectors([text], dimension)[0]


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

    def count_tokens_many(self, texts: list[str], *, remember: bool = False) -> list[int]:
        return [self.count_tokens(text) for text in texts]

    def preload(self) -> None:
        """Nothing to load."""

    def encode(self, texts: list[str]) -> np.ndarray:
        return hash_vectors(list(texts), self.standin_dimension)
