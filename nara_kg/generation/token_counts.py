"""Token counts of report-context texts, remembered between runs.

Building every community's context counts the tokens of each member, relationship and sub-report
row and of the contexts it tries: a quarter of `community_reports` when every report then comes
from the cache. The rows of unchanged records read the same in every run, so their counts are
kept in one SQLite table beside the generation cache, keyed by the counter and a digest of the
text, and a run counts only the texts it has not seen. A complete run that built every context
drops the entries it did not use, so the table holds about one such run's texts; a run that kept
some reports without building their contexts keeps every entry, for the run that next builds
them.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from nara_kg.ingest.chunking import TokenCounter, TokensCounter

#: Digests looked up per query (SQLite's default limit of bound parameters is 32,766).
_LOOKUP_BATCH = 900


class RememberedTokenCounts:
    """`count` and `count_many` of one counter, answered from the table where it knows the text.

    `counter_key` names the counter (the embedder's key: model, backend, weights), so counts of
    different tokenizers never mix. Not thread-safe: one per run.
    """

    def __init__(
        self,
        connection: sqlite3.Connection,
        counter_key: str,
        count: TokenCounter,
        count_many: TokensCounter,
    ) -> None:
        self._connection = connection
        self._prefix = counter_key.encode("utf-8") + b"\0"
        self._count = count
        self._count_many = count_many
        self._known: dict[bytes, int] = {}
        self._new: dict[bytes, int] = {}
        self.looked_up = 0
        self.counted = 0
        #: Whether the run's completion drops the texts it never asked for: a run that did not
        #: build every context sets it False.
        self.drop_unused_when_done = True

    def _digest(self, text: str) -> bytes:
        return hashlib.blake2b(self._prefix + text.encode("utf-8"), digest_size=16).digest()

    def _load(self, digests: Sequence[bytes]) -> None:
        wanted = [d for d in dict.fromkeys(digests) if d not in self._known]
        for start in range(0, len(wanted), _LOOKUP_BATCH):
            batch = wanted[start : start + _LOOKUP_BATCH]
            marks = ",".join("?" * len(batch))
            rows = self._connection.execute(
                f"SELECT key, tokens FROM token_counts WHERE key IN ({marks})", batch
            )
            for key, tokens in rows:
                self._known[bytes(key)] = int(tokens)
        self.looked_up += len(wanted)

    def count(self, text: str) -> int:
        return self.count_many([text])[0]

    def count_many(self, texts: list[str]) -> list[int]:
        digests = [self._digest(text) for text in texts]
        self._load(digests)
        missing = [i for i, d in enumerate(digests) if d not in self._known]
        if missing:
            unique = list(dict.fromkeys(texts[i] for i in missing))
            counts = self._count_many(unique) if len(unique) > 1 else [self._count(unique[0])]
            self.counted += len(unique)
            for text, tokens in zip(unique, counts, strict=True):
                digest = self._digest(text)
                self._known[digest] = tokens
                self._new[digest] = tokens
        return [self._known[d] for d in digests]

    def release(self) -> None:
        """Store the new counts and let go of those looked up so far, noting them as used: a
        report run's tree groups share no rows, so what one group asked for is not asked
        again, and the run holds one group's counts at a time. The used keys are noted even in a
        run that will end up keeping the unused ones: which it is is known only at its end."""
        with self._connection:
            self._store_new()
            self._connection.execute(
                "CREATE TEMP TABLE IF NOT EXISTS used (key BLOB PRIMARY KEY) WITHOUT ROWID"
            )
            self._connection.executemany(
                "INSERT OR IGNORE INTO used (key) VALUES (?)", [(k,) for k in self._known]
            )
        self._known.clear()

    def save(self, *, drop_unused: bool) -> None:
        """Store the new counts; with `drop_unused` (after a complete run) forget the texts this
        run never asked for."""
        if drop_unused:
            self.release()
            with self._connection:
                self._connection.execute(
                    "DELETE FROM token_counts WHERE key NOT IN (SELECT key FROM used)"
                )
                self._connection.execute("DELETE FROM used")
            return
        with self._connection:
            self._store_new()

    def _store_new(self) -> None:
        self._connection.executemany(
            "INSERT OR REPLACE INTO token_counts (key, tokens) VALUES (?, ?)",
            list(self._new.items()),
        )
        self._new.clear()


@contextmanager
def remembered_token_counts(
    path: Path, counter_key: str, count: TokenCounter, count_many: TokensCounter
) -> Iterator[RememberedTokenCounts]:
    """The counts kept at `path` (created on first use) for one run; the new ones are stored,
    and the unused dropped, when the run completes. A failed run stores what it counted."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(str(path), timeout=30.0)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute(
            "CREATE TABLE IF NOT EXISTS token_counts (key BLOB PRIMARY KEY, tokens INTEGER) "
            "WITHOUT ROWID"
        )
        counts = RememberedTokenCounts(connection, counter_key, count, count_many)
        try:
            yield counts
        except BaseException:
            counts.save(drop_unused=False)
            raise
        counts.save(drop_unused=counts.drop_unused_when_done)
    finally:
        connection.close()
