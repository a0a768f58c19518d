"""What entity_mentions' last complete write knew, on disk, so that an authority change relinks
only the chunks whose mentions it can change.

A chunk's mentions follow from its text, its record's context and the linker
(:mod:`nara_kg.build.mention_changes`). Of the linker, a chunk that does not contain any surface
form of an authority depends on nothing of that authority: the matcher finds only forms present
in the text (a longer form shadows only forms inside its own span), the shared forms are settled
among their own candidates (the record's and ancestors' authorities, the chunk's other
unambiguous matches, the candidates' years), and a mention carries its authority's naId and
type. So when an authority's linker entry changes (forms, type, years, aliases:
:meth:`nara_kg.linking.linker.EntityLinker.entry`), or an alias goes to another authority, the
chunks that may link differently are those whose text holds one of the old or new forms of the
authorities concerned. This module keeps, in one SQLite file (`WorkLayout.mention_index`):

* `authorities`: each authority's entry digest and forms as the last write's linker had them
  (the old forms of a changed or removed authority, read by naId);
* `canonical`: each alias naId's authority in that linker;
* `tokens`: an inverted index of the words of every chunk's linkable text (tokenized as the
  matcher matches: :func:`nara_kg.linking.normalize.normalize`), word -> (naId, chunk seq).
  A chunk holding a form holds every word of it, so the chunks holding all of a form's words
  are a superset of those holding the form; they are all linked again. Words in
  `GENERIC_PHRASE_WORDS` and numbers are not indexed (they are most of the rows, and every
  form the linker keeps has a word outside them: `surface_forms.is_specific`). Words are kept
  as 64-bit hashes: a collision only adds a chunk to the superset.
* `meta`: the change-set generation the state equals and the linking code's version.

Why SQLite (the standard library's `sqlite3`): the reads are lookups by key (an authority's
forms, a word's chunks) and the updates replace a few records' rows, in one transaction that a
killed run rolls back whole; nothing of the index is held in memory beyond a lookup's rows.
Kept by difference on a change set (the changed records' words, the changed authorities), made
again on every whole linking (into a new file that replaces the old one once complete).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Final

from nara_kg.build import mentions as mentions_module
from nara_kg.linking import (
    authorities,
    common_words,
    disambiguate,
    linker,
    matcher,
    normalize,
    surface_forms,
)
from nara_kg.linking.common_words import GENERIC_PHRASE_WORDS
from nara_kg.linking.linker import EntityLinker
from nara_kg.model.source_digest import source_digest

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS authorities (
  na_id INTEGER PRIMARY KEY, entry TEXT NOT NULL, forms TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS canonical (alias INTEGER PRIMARY KEY, na_id INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
  tok INTEGER NOT NULL, na_id INTEGER NOT NULL, seq INTEGER NOT NULL,
  PRIMARY KEY (tok, na_id, seq)
) WITHOUT ROWID;
"""
#: Made after a whole index's rows are in (one sort, not one B-tree insert per row).
INDEXES: Final = """
CREATE INDEX IF NOT EXISTS tokens_by_record ON tokens (na_id);
"""
#: Keys per `IN (...)` (SQLite's default limit on bound parameters is 32,766).
KEYS_PER_QUERY: Final = 10_000
_ROWS_PER_INSERT: Final = 50_000

#: One chunk's indexed word: (word hash, record naId, chunk seq).
TokenRow = tuple[int, int, int]


@cache
def linking_version() -> str:
    """A digest of the code a chunk's mentions follow from: the linker's modules, the chunk
    text and context rules (`nara_kg.build.mentions`) and this index's tokenizing. Another
    version is a linker change: the state is not used and the next write links every chunk."""
    modules = (
        authorities,
        common_words,
        disambiguate,
        linker,
        matcher,
        normalize,
        surface_forms,
        mentions_module,
    )
    return source_digest((*(Path(str(m.__file__)) for m in modules), Path(__file__)))


def word_key(word: str) -> int:
    """A normalized word's 64-bit key."""
    return int.from_bytes(
        hashlib.blake2b(word.encode(), digest_size=8).digest(), "big", signed=True
    )


def indexed(word: str) -> bool:
    """Whether a normalized word is indexed (see the module's notes)."""
    return not (word.isdigit() or word in GENERIC_PHRASE_WORDS)


def chunk_words(text: str) -> set[int]:
    """The keys of a chunk's indexed words, from its linkable text as the matcher reads it."""
    return normalized_words(mentions_module.normalized_chunk(text).text)


def normalized_words(normalized: str) -> set[int]:
    """The keys of the indexed words of a chunk's normalized linkable text (what the linker
    scanned, so that linking and indexing normalize each chunk once)."""
    return {word_key(word) for word in set(normalized.split(" ")) if word and indexed(word)}


def form_words(form: str) -> tuple[int, ...]:
    """The keys of a normalized form's indexed words (empty when it has none: such a form
    cannot be looked up, and the caller links every chunk)."""
    return tuple(sorted({word_key(w) for w in form.split(" ") if w and indexed(w)}))


def changed_keys(
    stored: Iterable[tuple[int, str]], current: Iterable[tuple[int, str]]
) -> Iterator[int]:
    """The keys whose value differs between two key-sorted streams (present in one only, or
    with another value), in key order; neither stream is held in memory."""
    old, new = iter(stored), iter(current)
    a, b = next(old, None), next(new, None)
    while a is not None or b is not None:
        if b is None or (a is not None and a[0] < b[0]):
            assert a is not None
            yield a[0]
            a = next(old, None)
        elif a is None or b[0] < a[0]:
            yield b[0]
            b = next(new, None)
        else:
            if a[1] != b[1]:
                yield a[0]
            a, b = next(old, None), next(new, None)


@dataclass
class LinkerChange:
    """How the linker differs from the one the last complete write used."""

    #: Authorities whose entry differs (added, removed or changed).
    changed: set[int] = field(default_factory=set)
    #: Alias naIds whose authority differs, and the authorities they went from and to.
    aliases: set[int] = field(default_factory=set)
    #: Every authority whose forms' chunks are linked again (changed, and both ends of a
    #: moved alias).
    affected: set[int] = field(default_factory=set)
    #: Their old and new forms.
    forms: set[str] = field(default_factory=set)


class MentionIndex:
    """The state at `path` (created on first use)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.executescript(SCHEMA + INDEXES)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> MentionIndex:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def equals(self, generation: str | None) -> bool:
        """Whether the state is the one the complete write at `generation` left, by this
        version of the linking code."""
        return (
            generation is not None
            and self._meta("generation") == generation
            and self._meta("version") == linking_version()
        )

    def advance(self, base: str | None, generation: str) -> None:
        """After an empty change set from `base`: the state equals `generation` as well."""
        self.db.execute("BEGIN")
        try:
            if self.equals(base):
                _set_meta(self.db, generation)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------------ the linker's side
    def linker_change(self, current: EntityLinker) -> LinkerChange:
        """The authorities and aliases whose linking differs between the stored linker and
        `current`, and the forms whose chunks may link differently (both streamed by key)."""
        change = LinkerChange()
        stored = self.db.execute("SELECT na_id, entry FROM authorities ORDER BY na_id")
        change.changed = set(changed_keys(stored, current.entries()))
        stored_aliases = self.db.execute("SELECT alias, na_id FROM canonical ORDER BY alias")
        now = dict(current.canonical_map())
        change.aliases = set(
            changed_keys(
                ((a, str(n)) for a, n in stored_aliases),
                ((a, str(n)) for a, n in current.canonical_map()),
            )
        )
        change.affected = set(change.changed)
        for _, was in self._rows("canonical", "alias", "na_id", change.aliases):
            change.affected.add(int(was))
        change.affected |= {now[a] for a in change.aliases if a in now}
        for _, forms in self._rows("authorities", "na_id", "forms", change.affected):
            change.forms.update(json.loads(forms))
        for na_id in change.affected:
            change.forms.update(current.forms.get(na_id, ()))
        return change

    def _rows(
        self, table: str, key: str, value: str, keys: Iterable[int]
    ) -> Iterator[tuple[int, str]]:
        """(key, value) of the rows of `table` whose `key` is one of `keys`."""
        ordered = sorted(set(keys))
        for start in range(0, len(ordered), KEYS_PER_QUERY):
            batch = ordered[start : start + KEYS_PER_QUERY]
            marks = ",".join("?" * len(batch))
            yield from self.db.execute(
                f"SELECT {key}, {value} FROM {table} WHERE {key} IN ({marks})", batch
            )

    # ------------------------------------------------------------------ the chunks' side
    def chunks_naming(self, forms: Iterable[str]) -> set[tuple[int, int]] | None:
        """(naId, seq) of every chunk holding all the indexed words of one of `forms` (None
        when a form has no indexed word: it cannot be looked up)."""
        found: set[tuple[int, int]] = set()
        for words in sorted({form_words(form) for form in forms}):
            if not words:
                return None
            marks = ",".join("?" * len(words))
            found.update(
                self.db.execute(
                    f"SELECT na_id, seq FROM tokens WHERE tok IN ({marks}) "
                    "GROUP BY na_id, seq HAVING COUNT(*) = ?",
                    (*words, len(words)),
                )
            )
        return found

    def apply(
        self,
        generation: str,
        records: Iterable[int],
        words: Iterable[TokenRow],
        current: EntityLinker,
        change: LinkerChange,
    ) -> None:
        """After a change set's complete write, in one transaction: the words of `records`
        (the changed ones) replaced by `words`, the changed authorities' entries and the moved
        aliases made the current linker's, and the state marked as equal to `generation`."""
        now = dict(current.canonical_map())
        self.db.execute("BEGIN")
        try:
            ordered = sorted(set(records))
            for start in range(0, len(ordered), KEYS_PER_QUERY):
                batch = ordered[start : start + KEYS_PER_QUERY]
                marks = ",".join("?" * len(batch))
                self.db.execute(f"DELETE FROM tokens WHERE na_id IN ({marks})", batch)
            self.db.executemany("INSERT OR IGNORE INTO tokens VALUES (?, ?, ?)", words)
            for na_id in sorted(change.changed):
                self.db.execute("DELETE FROM authorities WHERE na_id = ?", (na_id,))
                if na_id in current.authorities:
                    self.db.execute(
                        "INSERT INTO authorities VALUES (?, ?, ?)",
                        (na_id, current.entry(na_id), json.dumps(current.forms[na_id])),
                    )
            for alias in sorted(change.aliases):
                self.db.execute("DELETE FROM canonical WHERE alias = ?", (alias,))
                if alias in now:
                    self.db.execute("INSERT INTO canonical VALUES (?, ?)", (alias, now[alias]))
            _set_meta(self.db, generation)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise


def _set_meta(db: sqlite3.Connection, generation: str | None) -> None:
    db.execute("DELETE FROM meta")
    if generation is not None:
        db.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [("generation", generation), ("version", linking_version())],
        )


class IndexBuilder:
    """A whole state written into a new file beside `path`, which replaces it on
    :meth:`finish` (a run killed before leaves the old one, which then equals no generation
    the graph's writes record)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.building = path.with_name(f"{path.name}.building")
        self.building.unlink(missing_ok=True)
        self.db = sqlite3.connect(self.building, isolation_level=None)
        self.db.executescript(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
            + SCHEMA
            # The rows as they come (chunk by chunk), in SQLite's temporary file; copied into
            # `tokens` in its key order once all are in.
            + "CREATE TEMP TABLE staging (tok INTEGER, na_id INTEGER, seq INTEGER);"
        )
        self.db.execute("BEGIN")
        self._pending: list[TokenRow] = []

    def add_normalized(self, na_id: int, seq: int, normalized: str) -> None:
        """A chunk's words, from its normalized linkable text (:func:`normalized_words`)."""
        self._pending.extend((word, na_id, seq) for word in normalized_words(normalized))
        if len(self._pending) >= _ROWS_PER_INSERT:
            self._flush()

    def _flush(self) -> None:
        self.db.executemany("INSERT INTO staging VALUES (?, ?, ?)", self._pending)
        self._pending = []

    def finish(self, current: EntityLinker, generation: str | None) -> None:
        """The linker's entries and aliases written, the indexes made, the file put in place."""
        self._flush()
        self.db.execute("INSERT OR IGNORE INTO tokens SELECT * FROM staging ORDER BY 1, 2, 3")
        self.db.execute("DROP TABLE staging")
        self.db.executemany(
            "INSERT INTO authorities VALUES (?, ?, ?)",
            (
                (na_id, entry, json.dumps(current.forms[na_id]))
                for na_id, entry in current.entries()
            ),
        )
        self.db.executemany("INSERT INTO canonical VALUES (?, ?)", current.canonical_map())
        _set_meta(self.db, generation)
        self.db.execute("COMMIT")
        self.db.executescript(INDEXES)
        self.db.close()
        self.building.replace(self.path)

    def abandon(self) -> None:
        self.db.close()
        self.building.unlink(missing_ok=True)


def relinked_chunks(
    named: Iterable[tuple[int, int]], scoped: Mapping[int, object]
) -> dict[int, frozenset[int]]:
    """The chunks found naming a changed form, by record, less the records whose every chunk
    is linked anyway (`scoped`)."""
    by_record: dict[int, set[int]] = {}
    for na_id, seq in named:
        if na_id not in scoped:
            by_record.setdefault(na_id, set()).add(seq)
    return {na_id: frozenset(seqs) for na_id, seqs in by_record.items()}
