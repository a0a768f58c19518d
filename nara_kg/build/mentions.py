"""entity_mentions: authority records named in chunk text, written as MENTIONED_IN by difference.

The linker (:mod:`nara_kg.linking`) is built from the authority records among the chosen
chunks (their first chunks' properties: heading, useFor, variant and former names, dates). Each
chunk is linked with its record's context: the authorities the record cites, those its ancestors
cite, and its dates. The "Part of:" line of a chunk's header names the parent record, not this
one, so it is blanked before linking (same length: offsets stay valid).

Incremental: each chunk's mentions are kept in `WorkLayout.mentions_cache`
(:mod:`nara_kg.build.mention_cache`, read a chunk at a time), keyed by the chunk's
row hash, its record's context and the linker's fingerprint (everything linking follows from:
:meth:`nara_kg.linking.linker.EntityLinker.fingerprint`); a chunk whose key is unchanged is not
linked again when every chunk is linked. A change set links far fewer (the changed records'
chunks, those below them, those holding a changed authority's names): that, and writing the
result to the graph, is :mod:`nara_kg.build.mention_changes`.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from nara_kg.build.mention_cache import MentionCache, cached_chunks
from nara_kg.build.mention_sync import MentionSync
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import iter_chunks
from nara_kg.ingest.stages.record_selection import read_aliases
from nara_kg.linking.authorities import Authority, authority_from_properties
from nara_kg.linking.labels import LabelScore, load_labels, score_labels
from nara_kg.linking.linker import ChunkText, EntityLinker
from nara_kg.linking.normalize import NormalizedText, normalize
from nara_kg.model.schema import AUTHORITY_TYPES, Prop, chunk_id
from nara_kg.model.tables import Col

#: The header line that names the parent record (see `nara_kg.ingest.chunking.build_header`).
PARENT_LINE: Final = "Part of: "
#: Unlinked ambiguous surfaces shown in the sample table.
AMBIGUOUS_SAMPLE: Final = 20


class MentionSink(Protocol):
    """Where the linking pass puts each desired MENTIONED_IN, as a dict takes it: (authority's
    first chunk, chunk) -> (count, surface)."""

    def __setitem__(self, edge: tuple[str, str], value: tuple[int, str], /) -> None: ...


#: One mention as cached and written: (authority naId, authority type, surface, count).
CachedMention = tuple[int, str, str, int]
CachedAmbiguous = tuple[str, tuple[int, ...], int]


@dataclass(frozen=True, slots=True)
class RecordContext:
    references: frozenset[int]
    ancestors: tuple[int, ...]
    years: tuple[int | None, int | None] | None


@dataclass
class MentionsResult:
    """What one run found and wrote."""

    authorities: int = 0
    surface_forms: int = 0
    fingerprint: str = ""
    chunks: int = 0
    chunks_with_mentions: int = 0
    relinked: int = 0
    reused: int = 0
    by_type: Counter[str] = field(default_factory=Counter)
    ambiguous: list[dict[str, Any]] = field(default_factory=list)
    ambiguous_total: int = 0
    #: (record naId, authority naId) pairs, for the label check.
    record_pairs: set[tuple[int, int]] = field(default_factory=set)
    sync: MentionSync | None = None
    labels: LabelScore | None = None
    link_seconds: float = 0.0
    #: What MENTIONED_IN should hold, as :func:`desired_mentions` reads it from the cache
    #: (kept from the linking pass, which has every chunk's mentions decoded already).
    desired: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)
    #: Records whose chunks were read for linking (0 when nothing changed since the last run).
    records_touched: int = 0
    #: "whole" (every chunk), "changes" (the change set's chunks) or "done" (nothing to do).
    mode: str = "whole"
    #: Why a change set was not applied (the whole path's reason), when it was not.
    whole_reason: str = ""
    #: Chunks linked again by why: "own" (a changed record's), "below" (a record below one,
    #: or citing a moved alias), "name_match" (its text holds a changed authority's form).
    relinked_by: dict[str, int] = field(default_factory=dict)
    #: Authorities whose linking changed since the last complete write (a change set's run).
    authorities_changed: int = 0
    #: Records some of whose chunks a change set linked again (their label pairs may change).
    relinked_records: frozenset[int] = frozenset()
    #: Labelled records whose MENTIONED_IN the label score read from the graph (0 when it was
    #: scored from the linking itself or kept).
    label_records_read: int = 0
    #: The linker the chunks were linked with.
    linker: EntityLinker | None = field(default=None, repr=False)

    @property
    def mentions(self) -> int:
        return sum(self.by_type.values())

    @property
    def share_with_mentions(self) -> float:
        return self.chunks_with_mentions / self.chunks if self.chunks else 0.0


def linkable_text(text: str) -> str:
    """The chunk text with the header's parent line blanked (same length)."""
    head, separator, body = text.partition("\n\n")
    lines = [" " * len(line) if line.startswith(PARENT_LINE) else line for line in head.split("\n")]
    return "\n".join(lines) + separator + body


def normalized_chunk(text: str) -> NormalizedText:
    """A chunk's linkable text normalized: what the linker scans and the mention index keys.
    Worked out once per chunk and given to both (it was most of linking's time, twice)."""
    return normalize(linkable_text(text))


def record_years(props: Mapping[str, Any]) -> tuple[int | None, int | None] | None:
    """The earliest and latest year of the record's `logicalDate_*` properties, or None."""
    years: list[int] = []
    for key, value in props.items():
        if not key.startswith("logicalDate_"):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and len(item) >= 4 and item[:4].isdigit():
                years.append(int(item[:4]))
    return (min(years), max(years)) if years else None


def _cache_key(row_hash: str, context: str, fingerprint: str) -> str:
    return hashlib.sha256(f"{row_hash}|{context}|{fingerprint}".encode()).hexdigest()


def context_of(
    record: RecordContext | None, cites: Mapping[int, Collection[int]]
) -> tuple[frozenset[int], str]:
    """The ancestors' authorities (what each ancestor `cites`), and a digest of everything the
    record lends to linking."""
    if record is None:
        return frozenset(), ""
    ancestors: set[int] = set()
    for ancestor in record.ancestors:
        ancestors.update(cites.get(ancestor, ()))
    digest = json.dumps([sorted(record.references), sorted(ancestors), record.years])
    return frozenset(ancestors), digest


def build_linker(
    rows: Iterable[Mapping[str, Any]], aliases: Mapping[int, int]
) -> tuple[EntityLinker, list[Authority]]:
    """The linker over the authority records among `rows` (first chunks). An organization name's
    own naId (an alias) is not an authority of its own: its organization carries its names."""
    authorities: list[Authority] = []
    for row in rows:
        if row[Col.NODE_TYPE] not in AUTHORITY_TYPES or row[Col.NA_ID] in aliases:
            continue
        authority = authority_from_properties(json.loads(row[Col.PROPS]))
        if authority is not None:
            authorities.append(authority)
    return EntityLinker.from_authorities(authorities), authorities


def _aliases(layout: WorkLayout) -> dict[int, int]:
    return read_aliases(layout) if layout.aliases.exists() else {}


_RECORD_COLUMNS: Final = [Col.NA_ID, Col.NODE_TYPE, Col.PROPS, Col.REFERENCES]
_LINK_COLUMNS: Final = [Col.CHUNK_ID, Col.NA_ID, Col.CHUNK_SEQ_ID, Col.TEXT, Col.ROW_HASH]


def _linker_and_citations(
    layout: WorkLayout, aliases: Mapping[int, int]
) -> tuple[EntityLinker, list[Authority], dict[int, tuple[int, ...]]]:
    """The linker, and what each chosen record citing anything cites (aliases resolved: what
    its descendants take from it), from the first chunks only (read without their text). A
    record's own context is not kept: the linking pass reads it again beside its chunks."""
    cites: dict[int, tuple[int, ...]] = {}
    authority_rows: list[dict[str, Any]] = []
    for row in iter_chunks(layout, _RECORD_COLUMNS, first_only=True):
        if row[Col.NODE_TYPE] in AUTHORITY_TYPES:
            authority_rows.append(row)
        cited = cited_ids(row)
        if cited:
            cites[row[Col.NA_ID]] = tuple(sorted({aliases.get(na_id, na_id) for na_id in cited}))
    linker, authorities = build_linker(authority_rows, aliases)
    return linker, authorities, cites


def _first_row_of(first_rows: Iterator[dict[str, Any]], na_id: int) -> dict[str, Any]:
    """The next first chunk, which must be `na_id`'s: both reads follow the selection's order."""
    row = next(first_rows, None)
    if row is None or row[Col.NA_ID] != na_id:
        found = "none" if row is None else row[Col.NA_ID]
        raise RuntimeError(
            f"the chunks of record {na_id} came where the first chunks give {found}: the chunk "
            "parts changed during the run; run entity_mentions again"
        )
    return row


def cited_ids(row: Mapping[str, Any]) -> set[int]:
    """The naIds a first chunk's row cites (before aliases are resolved)."""
    return {int(na_id) for _, na_id, *_ in json.loads(row[Col.REFERENCES] or "[]")}


def record_context(row: Mapping[str, Any], aliases: Mapping[int, int]) -> RecordContext:
    """What a record lends to linking, from its first chunk's row (`aliases` must cover the
    naIds it cites)."""
    props = json.loads(row[Col.PROPS])
    is_authority = row[Col.NODE_TYPE] in AUTHORITY_TYPES
    ancestors = props.get(Prop.ANCESTORS) or []
    return RecordContext(
        frozenset(aliases.get(na_id, na_id) for na_id in cited_ids(row)),
        tuple(a for a in ancestors if isinstance(a, int)),
        None if is_authority else record_years(props),
    )


def link_mentions(
    layout: WorkLayout,
    *,
    labels_path: Path | None = None,
    on_chunk: Callable[[Mapping[str, Any], NormalizedText], None] | None = None,
    desired: MentionSink | None = None,
) -> MentionsResult:
    """Every chosen chunk's mentions (cached chunks reused), the cache rewritten; no Neo4j.
    `on_chunk` sees every chunk's row (naId, seq, text, ...), linked or reused, with its
    :func:`normalized_chunk` (which linking then reuses). The desired
    MENTIONED_IN go into `desired` when given (and neither `result.desired` nor the record
    pairs nor the label score are kept: the caller has them from `desired`), else into
    `result.desired`.

    Chunks are streamed file by file: only one chunk's text is held at a time."""
    aliases = _aliases(layout)
    linker, authorities, cites = _linker_and_citations(layout, aliases)
    result = MentionsResult(
        authorities=len(authorities),
        surface_forms=len(linker.matcher),
        fingerprint=linker.fingerprint(),
        linker=linker,
    )
    started = time.perf_counter()
    # A record's chunks come together, after its first chunk's row in the first chunks' read
    # (the same order), and share its context: worked out once per record.
    first_rows = iter_chunks(layout, _RECORD_COLUMNS, first_only=True)
    na_id: int | None = None
    with MentionCache(layout.mentions_cache) as cache:
        for row in iter_chunks(layout, _LINK_COLUMNS):
            normalized = None
            if on_chunk is not None:
                normalized = normalized_chunk(row[Col.TEXT])
                on_chunk(row, normalized)
            if na_id != row[Col.NA_ID]:
                na_id = row[Col.NA_ID]
                record = record_context(_first_row_of(first_rows, na_id), aliases)
                ancestor_authorities, digest = context_of(record, cites)
                result.records_touched += 1
            key = _cache_key(row[Col.ROW_HASH], digest, result.fingerprint)
            cached = cache.get(row[Col.CHUNK_ID])
            if cached is not None and cached[0] == key:
                mentions_json, ambiguous_json = cached[1], cached[2]
                mentions, ambiguous = _decoded(mentions_json), _decoded(ambiguous_json)
                result.reused += 1
            else:
                mentions, ambiguous = link_chunk(
                    linker, row, record, ancestor_authorities, normalized
                )
                mentions_json = json.dumps(mentions, ensure_ascii=False)
                ambiguous_json = json.dumps(ambiguous, ensure_ascii=False)
                result.relinked += 1
            cache.put(row[Col.CHUNK_ID], (key, mentions_json, ambiguous_json))
            count_chunk(result, row, mentions, ambiguous, desired)
        result.link_seconds = time.perf_counter() - started
        cache.finish()
    if desired is None and labels_path is not None and labels_path.exists():
        result.labels = score_labels(result.record_pairs, load_labels(labels_path))
    return result


def link_chunk(
    linker: EntityLinker,
    row: Mapping[str, Any],
    record: RecordContext | None,
    ancestor_authorities: frozenset[int],
    normalized: NormalizedText | None = None,
) -> tuple[list[list[Any]], list[list[Any]]]:
    """One chunk's mentions ([authority, type, surface, count]) and unresolved ambiguous
    forms ([surface, candidates, count]). `normalized`: the row's :func:`normalized_chunk`,
    where the caller has it."""
    if normalized is None:
        normalized = normalized_chunk(row[Col.TEXT])
    found, unresolved = linker.link(
        ChunkText(
            row[Col.CHUNK_ID],
            normalized.original,
            row[Col.NA_ID],
            record.references if record else frozenset(),
            ancestor_authorities,
            record.years if record else None,
            normalized,
        )
    )
    mentions = [[m.authority_na_id, m.authority_type, m.surface, m.count] for m in found]
    ambiguous = [[a.surface, list(a.candidates), a.count] for a in unresolved]
    return mentions, ambiguous


def _decoded(cached: str) -> list[Any]:
    # Most chunks name nothing ambiguous, and many nothing at all: 31,000 cached lists were
    # decoded per run, most of them "[]".
    return [] if cached == "[]" else json.loads(cached)


def count_chunk(
    result: MentionsResult,
    row: Mapping[str, Any],
    mentions: list[list[Any]],
    ambiguous: list[list[Any]],
    desired: MentionSink | None = None,
) -> None:
    """One linked chunk counted, its MENTIONED_IN put into `desired` (else into
    `result.desired`, with its record pairs)."""
    result.chunks += 1
    result.chunks_with_mentions += bool(mentions)
    for authority, kind, surface, count_in_chunk in mentions:
        result.by_type[kind] += 1
        edge = (chunk_id(authority, 0), row[Col.CHUNK_ID])
        if desired is not None:
            desired[edge] = (count_in_chunk, surface)
            continue
        result.record_pairs.add((row[Col.NA_ID], authority))
        result.desired[edge] = (count_in_chunk, surface)
    for surface, candidates, count in ambiguous:
        result.ambiguous_total += 1
        if len(result.ambiguous) < AMBIGUOUS_SAMPLE:
            result.ambiguous.append(
                {
                    "chunkId": row[Col.CHUNK_ID],
                    "surface": surface,
                    "candidates": ", ".join(map(str, candidates)),
                    "count": count,
                }
            )


def desired_mentions(layout: WorkLayout) -> dict[tuple[str, str], tuple[int, str]]:
    """(authority's first chunk, chunk) -> (count, surface), from the cache `link_mentions`
    wrote (for the chunks still chosen)."""
    desired: dict[tuple[str, str], tuple[int, str]] = {}
    for chunk, (_key, mentions_json, _ambiguous) in cached_chunks(layout.mentions_cache):
        for authority, _kind, surface, count in json.loads(mentions_json):
            desired[(chunk_id(authority, 0), chunk)] = (count, surface)
    return desired
