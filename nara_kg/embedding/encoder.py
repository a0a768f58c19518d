"""The sentence-transformers model, loaded offline, and the token counter the chunker needs."""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from nara_kg.embedding.backend import ModelBackend, SentenceModel
from nara_kg.embedding.model_files import (
    DEFAULT_MODEL,
    declared_dimension,
    declared_max_tokens,
    quiet_transformers,
    resolve_model_path,
    tokenizer_engine,
)

if TYPE_CHECKING:
    import numpy as np

#: The backends the project runs in ONNX Runtime (nara_kg.embedding.onnx_backend): the float
#: export, and the opt-in int8 quantization of it (close to, not equal to, the float vectors).
ONNX_BACKENDS = ("onnx", "onnx-int8")
#: The default backend: the fastest that keeps the vectors (min cosine >= 0.999 against PyTorch).
#: ONNX Runtime encodes 1.27x as fast as PyTorch on the 2-core machine at min cosine 1.000000,
#: and a short query in 5 ms (benchmarks/onnx_probe.py); `torch` stays one setting away.
DEFAULT_BACKEND = "onnx"
#: Texts per model call. On the 2-core machine a file's chunks encode about 15% faster in
#: batches of 8 than of 64 (less CPU, too): a file's few hundred texts sorted by length still
#: leave 8% padding in batches of 64 and under 1% in batches of 8, and the small batches' work
#: stays in the cores' caches. A GPU wants more (`batch_size` of the EmbeddingModel resource).
DEFAULT_BATCH_SIZE = 8


@dataclass(frozen=True)
class SentenceTransformersBackend:
    """sentence-transformers' own loop, with `library_backend` as its backend (`torch`, or
    another the library runs itself)."""

    library_backend: str = "torch"

    def load(self, path: Path, *, device: str, name: str, threads: int) -> SentenceModel:
        quiet_transformers()
        if threads > 0:
            import torch

            torch.set_num_threads(threads)
        from sentence_transformers import SentenceTransformer

        kwargs: dict[str, Any] = {"device": device}
        if self.library_backend != "torch":
            kwargs["backend"] = self.library_backend
        return cast(SentenceModel, SentenceTransformer(str(path), **kwargs))


def model_backend(backend: str) -> ModelBackend:
    """The strategy that loads a model for the backend named `backend`."""
    if backend in ONNX_BACKENDS:
        # sentence-transformers' own ONNX backend needs optimum-onnx, which pins an older
        # transformers; the project exports the local model once and caches it instead.
        from nara_kg.embedding.onnx_backend import OnnxBackend

        return OnnxBackend(int8=backend == "onnx-int8")
    return SentenceTransformersBackend(backend)


#: Token ids of texts counted for chunking that are kept for their encode (`count_tokens_many`
#: with `remember`): a chunk's text is counted when it is cut and encoded a window of files
#: later. Bounded, oldest out first; about 0.4 KB a text.
REMEMBERED_TOKEN_IDS = 32_768

#: One model load at a time in a process, so a background `preload` and the first `encode` never
#: load the same model twice.
_LOAD_LOCK = threading.Lock()


@dataclass
class Embedder:
    """A loaded model. `key` names model + backend, so a change of either re-embeds."""

    model: str = DEFAULT_MODEL
    device: str = "cpu"
    backend: str = DEFAULT_BACKEND
    batch_size: int = DEFAULT_BATCH_SIZE
    #: Intra-op threads of the model (0: the library's default, one per core). Parallel runs
    #: on one machine each take a share of the cores instead of all of them.
    threads: int = 0
    _model: Any = field(default=None, init=False, repr=False)
    _preloading: threading.Thread | None = field(default=None, init=False, repr=False)
    _remembered_ids: OrderedDict[str, Any] = field(
        default_factory=OrderedDict, init=False, repr=False
    )

    def preload(self) -> None:
        """Start loading the model on a background thread, so that the first `encode` finds it
        loaded (or waits for the rest of the load) while the caller parses and chunks. A failed
        load is left to that `encode` to report."""
        if self._model is None and self._preloading is None:
            self._preloading = threading.Thread(
                target=self._preload, name="embedder-preload", daemon=True
            )
            self._preloading.start()

    def _preload(self) -> None:
        with contextlib.suppress(Exception):
            self._load()

    def _load(self) -> SentenceModel:
        if self._model is None:
            with _LOAD_LOCK:
                if self._model is None:
                    self._model = self._load_model()
        return self._model

    def _load_model(self) -> SentenceModel:
        return model_backend(self.backend).load(
            resolve_model_path(self.model),
            device=self.device,
            name=self.model,
            threads=self.threads,
        )

    @cached_property
    def dimension(self) -> int:
        # Stages that only copy or index vectors need the dimension, not the model: read it from
        # the model's files when they say it plainly, and load the model only otherwise.
        declared = declared_dimension(resolve_model_path(self.model))
        if declared is not None:
            return declared
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or (
            model.get_sentence_embedding_dimension
        )
        dim = getter()
        if not dim:
            raise ValueError(f"model {self.model!r} does not report an embedding dimension")
        return int(dim)

    @cached_property
    def max_tokens(self) -> int:
        """The longest input (special tokens included) the model reads without truncating;
        read from the model's files when they declare it, so chunking never loads the model."""
        declared = declared_max_tokens(resolve_model_path(self.model))
        if declared:
            return declared
        limit = self._load().max_seq_length
        if not limit:
            raise ValueError(f"model {self.model!r} does not report a maximum sequence length")
        return int(limit)

    @cached_property
    def key(self) -> str:
        path = resolve_model_path(self.model)
        weights = sorted(p for p in path.glob("*.safetensors")) or sorted(path.glob("*.bin"))
        digest = hashlib.sha256()
        for weight in weights:
            stat = weight.stat()
            digest.update(f"{weight.name}:{stat.st_size}".encode())
        name = self.model.rstrip("/").rsplit("/", 1)[-1]
        return f"{name}:{self.backend}:{digest.hexdigest()[:12]}"

    @cached_property
    def _tokenizer_engine(self) -> Any | None:
        return tokenizer_engine(resolve_model_path(self.model))

    @cached_property
    def _token_counter(self) -> Callable[[str], int]:
        """Tokens of one text, special tokens included, never truncated. The model's
        tokenizer.json is read on its own: counting (chunking, report contexts) needs neither
        the model nor sentence-transformers loaded, which took longer than a step's own work,
        and the engine is called without the transformers wrapper's per-call overhead. Its
        `_fast` calls skip the character offsets that counting never reads (0.14 against
        0.17 ms a text)."""
        engine = self._tokenizer_engine
        if engine is not None:
            return lambda text: len(engine.encode_batch_fast([text], add_special_tokens=True)[0])
        tokenizer = self._load().tokenizer
        return lambda text: len(
            tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"]
        )

    def count_tokens(self, text: str) -> int:
        return self._token_counter(text)

    def count_tokens_many(self, texts: list[str], *, remember: bool = False) -> list[int]:
        """`count_tokens` of each text, in one batch call of the tokenizer when it can.

        With `remember`, the token ids of the texts the model reads whole are kept for `encode`
        (on the ONNX backends, which take ids), so a text counted for chunking is not tokenized
        a second time: that was 1.2% of the chunks' encode on the bench's texts."""
        engine = self._tokenizer_engine
        if engine is None:
            return [self._token_counter(text) for text in texts]
        encodings = engine.encode_batch_fast(texts, add_special_tokens=True)
        if not remember or self.backend not in ONNX_BACKENDS:
            return [len(e) for e in encodings]
        import numpy as np

        counts = []
        kept = self._remembered_ids
        limit = self.max_tokens
        for text, encoding in zip(texts, encodings, strict=True):
            ids = encoding.ids
            counts.append(len(ids))
            if len(ids) <= limit:
                kept[text] = np.array(ids, dtype=np.int64)
                kept.move_to_end(text)
        while len(kept) > REMEMBERED_TOKEN_IDS:
            kept.popitem(last=False)
        return counts

    def forget_token_ids(self) -> None:
        """Let go of the token ids `count_tokens_many(remember=True)` kept and no `encode` used
        (texts chunked but never encoded: a failed window, a file whose vectors were reused)."""
        self._remembered_ids.clear()

    def encode(self, texts: list[str]) -> np.ndarray:
        model = self._load()
        options: dict[str, Any] = {}
        if self._remembered_ids and self.backend in ONNX_BACKENDS:
            options["token_ids"] = [self._remembered_ids.pop(text, None) for text in texts]
        return model.encode(
            texts,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
            **options,
        )


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes
    import ctypes.util

    try:
        trim: Callable[[int], int] = ctypes.CDLL(
            ctypes.util.find_library("c") or "libc.so.6"
        ).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


#: Freed heap pages are handed back once the resident size has grown this much since the last
#: hand-back. Every hand-back makes the next batches' activation buffers fault in again: after
#: each page of 512 texts it cost 2-5% of the encode (interleaved passes over 2,252 texts) for
#: 10 MB of resident size.
RELEASE_AFTER_GROWTH_MB = 64

#: The resident size (bytes) after the last hand-back, or the lowest seen since; None before
#: the first.
_resident_floor: int | None = None


def resident_bytes() -> int | None:
    """The process's resident size from /proc (Linux); None where there is no /proc."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def release_free_memory(*, force: bool = False) -> bool:
    """Hand freed heap pages back to the OS (glibc only; a no-op elsewhere) when the resident
    size has grown by `RELEASE_AFTER_GROWTH_MB` since the last hand-back (always with `force`,
    or where the size cannot be read). Returns whether it did.

    Encoding allocates and frees large activation buffers per batch; glibc keeps the freed
    arenas, so without this the process's resident size ratchets up with the input size.
    """
    global _resident_floor
    trim = _malloc_trim()
    if trim is None:
        return False
    resident = resident_bytes()
    if not force and resident is not None and _resident_floor is not None:
        _resident_floor = min(_resident_floor, resident)
        if resident - _resident_floor < RELEASE_AFTER_GROWTH_MB * 2**20:
            return False
    trim(0)
    _resident_floor = resident_bytes()
    return True
