"""`Embedder.preload` loads the model on a background thread, once, and the first `encode`
uses that load (or waits for it) instead of loading again."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

from nara_kg.embedding.encoder import Embedder
from nara_kg.embedding.standin import StandinEmbedder


@dataclass
class _CountingEmbedder(Embedder):
    loads: int = 0
    load_seconds: float = 0.2
    fail: bool = False

    def _load_model(self) -> Any:
        self.loads += 1
        time.sleep(self.load_seconds)
        if self.fail:
            raise RuntimeError("no model here")
        return object()


def test_preload_loads_once_and_the_caller_gets_that_model() -> None:
    embedder = _CountingEmbedder()
    embedder.preload()
    embedder.preload()  # a second file changed: no second load
    started = time.perf_counter()
    model = embedder._load()  # waits for the background load rather than loading again
    assert time.perf_counter() - started < embedder.load_seconds + 1.0
    assert embedder.loads == 1
    assert embedder._load() is model
    assert embedder.loads == 1


def test_a_load_racing_the_preload_still_loads_once() -> None:
    embedder = _CountingEmbedder(load_seconds=0.05)
    embedder.preload()
    threads = [threading.Thread(target=embedder._load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert embedder.loads == 1


def test_a_failed_preload_is_reported_by_the_next_load() -> None:
    embedder = _CountingEmbedder(load_seconds=0.0, fail=True)
    embedder.preload()
    assert embedder._preloading is not None
    embedder._preloading.join()
    with pytest.raises(RuntimeError, match="no model here"):
        embedder._load()
    assert embedder.loads == 2


def test_the_stand_in_has_nothing_to_preload() -> None:
    embedder = StandinEmbedder()
    embedder.preload()
    assert embedder._preloading is None
