"""The persistent generation cache: every generation keyed by a hash of prompt + model + backend
+ parameters, so an unchanged community is never regenerated and a re-run costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from nara_kg.generation.llm_base import LLM


def cache_key(prompt: str, model_name: str, backend: str, params: Mapping[str, Any]) -> str:
    """sha256 hex of everything that determines a generation."""
    material = json.dumps(
        {"prompt": prompt, "model": model_name, "backend": backend, "params": dict(params)},
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class GenerationCache:
    """Persistent key -> generated text, in one SQLite table.

    Safe to share between threads (one connection behind a lock) and between processes (SQLite's
    own file locking, with a busy timeout for concurrent writers). `hits`/`misses` count lookups
    through :meth:`get` on this instance.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False)
        if str(path) != ":memory:":
            # Every generation is committed on its own, so a crash keeps what was paid for;
            # WAL with synchronous=NORMAL makes that commit a write, not an fsync (at worst a
            # power cut loses the last few entries of a cache, which are generated again).
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=NORMAL")
        with self._lock, self._connection:
            self._connection.execute(
                "CREATE TABLE IF NOT EXISTS generations ("
                " key TEXT PRIMARY KEY,"
                " text TEXT NOT NULL,"
                " created_at REAL NOT NULL)"
            )
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._connection.execute(
                "SELECT text FROM generations WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
            text: str = row[0]
            return text

    def put(self, key: str, text: str) -> None:
        with self._lock, self._connection:
            self._connection.execute(
                "INSERT OR REPLACE INTO generations (key, text, created_at) VALUES (?, ?, ?)",
                (key, text, time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._connection.execute("SELECT COUNT(*) FROM generations").fetchone()
            return int(count)

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def __enter__(self) -> GenerationCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def llm_cache_key(llm: LLM, prompt: str) -> str:
    return cache_key(prompt, llm.model, llm.name, llm.params)


def cached_complete(
    llm: LLM, prompt: str, cache: GenerationCache | None, *, refresh: bool = False
) -> tuple[str, bool]:
    """`llm.complete(prompt)` through the cache; returns (text, was_cached).

    `refresh=True` skips the lookup and overwrites the entry: a retry of an output that turned
    out to be unusable needs it, or the cache would serve that output forever.
    """
    if cache is None:
        return llm.complete(prompt), False
    key = llm_cache_key(llm, prompt)
    if not refresh:
        cached = cache.get(key)
        if cached is not None:
            return cached, True
    text = llm.complete(prompt)
    cache.put(key, text)
    return text, False
