"""Retrieval through entities: the records around the people and organizations a question names.

The question is linked with the same :class:`~nara_kg.linking.linker.EntityLinker` that wrote
MENTIONED_IN (built from the graph's authority first chunks, once per process and authority
set). Each authority it names is an anchor; from each anchor the path takes

* the chunks that mention it (MENTIONED_IN, most mentions first), and
* one hop over the authority relationships (creator, subject, donor, ...): the records the
  anchor is cited by,

at most `PER_ANCHOR` of each. The anchors' own records lead the ranking (a question naming an
authority most often asks about it: "Who was Floyd Kimball?") unless the question asks for the
records that mention, name or cite it (:data:`MENTION_CUES`), where the authority's own record
is not what is wanted. An anchor with more than `MAX_ANCHOR_DEGREE` such edges is
skipped: an authority cited or named by thousands of records ("United States. Congress") says
nothing about which of them the question wants, and walking it would cost more than the rest of
the search. The records are ranked by how many anchors reach them, then by mentions, then by
relationships (:func:`rank_records`); :func:`~nara_kg.retrieval.search.local_search` fuses that
ranking with the vector and full-text ones.

The linker is cached per process, keyed by the database and the per-label counts of authority
nodes (read from the count store in constant time, at most once per
`SIGNATURE_CHECK_SECONDS`: the check was a sixth of a search's round trips). An edit to one
authority's names that adds or removes no node is seen after :func:`clear_entity_linkers` or a
restart. Each anchor's neighbourhood is remembered too (:func:`anchor_neighbourhoods`), keyed by
the graph's writer revisions and node and relationship counts, read the same way: every build
step that writes nodes, mentions or relationships changes a revision, and a hand edit that
adds or deletes a node or relationship changes a count; one that only changes a property is
seen after :func:`clear_anchor_neighbourhoods` or a restart.
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from threading import Lock
from typing import Any, Final, Generic, TypeVar

from neo4j import Driver

from nara_kg.graph import mentions as cypher
from nara_kg.graph import sync_state
from nara_kg.linking.authorities import Authority, authority_from_properties
from nara_kg.linking.linker import ChunkText, EntityLinker
from nara_kg.model.schema import Rel, chunk_id

#: Anchors with more outgoing MENTIONED_IN + authority-relationship edges are skipped.
MAX_ANCHOR_DEGREE: Final = 2_000
#: Most mentioning chunks, and most related records, taken from one anchor.
PER_ANCHOR: Final = 50
#: Most anchors one question contributes (in order of appearance).
MAX_ANCHORS: Final = 8
#: Words of a question that asks for the records naming an authority, not the authority itself.
MENTION_CUES: Final = re.compile(
    r"\b(?:mention\w*|nam(?:e|es|ed|ing)|appear\w*|refer\w*|cit(?:e|es|ed|ing)|"
    r"says? about|said about|writ(?:e|es|ten) about)\b",
    re.IGNORECASE,
)
#: The chunk id the question gets when it is linked (it is no record: no mention is dropped as
#: the record naming itself).
_QUESTION: Final = "question"


@dataclass(frozen=True, slots=True)
class Anchor:
    """An authority the question names."""

    na_id: int
    authority_type: str
    heading: str
    surface: str


@dataclass(frozen=True, slots=True)
class PathEdge:
    """One edge the path took: anchor -[rel]-> record (at `chunk_id`)."""

    anchor: int
    rel: str
    na_id: int
    chunk_id: str
    count: int = 0


@dataclass
class EntityPath:
    """What the path found: anchors, the skipped ones (naId -> degree), edges and ranking."""

    anchors: list[Anchor] = field(default_factory=list)
    skipped: dict[int, int] = field(default_factory=dict)
    edges: list[PathEdge] = field(default_factory=list)
    #: (record naId, its best chunk), best first.
    ranking: list[tuple[int, str]] = field(default_factory=list)

    def anchor(self, na_id: int) -> Anchor | None:
        return next((a for a in self.anchors if a.na_id == na_id), None)


def graph_linker(authority_rows: Iterable[Mapping[str, Any]]) -> EntityLinker:
    """The linker over the graph's authority first chunks. An organization name's own naId (an
    alias another authority lists) is no authority of its own, as in `entity_mentions`."""
    authorities = [a for a in map(authority_from_properties, authority_rows) if a is not None]
    aliases = {alias for a in authorities for alias in a.aliases}
    return EntityLinker.from_authorities(a for a in authorities if a.na_id not in aliases)


def question_anchors(linker: EntityLinker, question: str) -> list[Anchor]:
    """The authorities the question names (unambiguous or settled), in order of appearance."""
    mentions, _ = linker.link(ChunkText(_QUESTION, question, record_na_id=-1))
    anchors: list[Anchor] = []
    for mention in mentions[:MAX_ANCHORS]:
        authority: Authority = linker.authorities[mention.authority_na_id]
        anchors.append(
            Anchor(authority.na_id, authority.authority_type, authority.heading, mention.surface)
        )
    return anchors


def rank_records(edges: Iterable[PathEdge]) -> list[tuple[int, str]]:
    """Records reached by more anchors first, then by more mentions of them, then by more
    relationships; ties in order of first appearance. A record's chunk is the one that
    mentions the anchors most (its first chunk when only relationships reach it)."""
    anchors: dict[int, set[int]] = {}
    mentions: dict[int, int] = {}
    relations: dict[int, int] = {}
    best: dict[int, tuple[int, str]] = {}
    order: dict[int, int] = {}
    for edge in edges:
        order.setdefault(edge.na_id, len(order))
        anchors.setdefault(edge.na_id, set()).add(edge.anchor)
        if edge.rel == Rel.MENTIONED_IN:
            mentions[edge.na_id] = mentions.get(edge.na_id, 0) + edge.count
            current = best.get(edge.na_id)
            if current is None or current[0] < 0 or edge.count > current[0]:
                best[edge.na_id] = (edge.count, edge.chunk_id)
        else:
            relations[edge.na_id] = relations.get(edge.na_id, 0) + 1
            best.setdefault(edge.na_id, (-1, edge.chunk_id))
    ranked = sorted(
        order,
        key=lambda n: (-len(anchors[n]), -mentions.get(n, 0), -relations.get(n, 0), order[n]),
    )
    return [(na_id, best[na_id][1]) for na_id in ranked]


def path_ranking(
    question: str, anchors: Iterable[Anchor], edges: Iterable[PathEdge]
) -> list[tuple[int, str]]:
    """The anchors' own records first (unless the question asks for the records that mention
    them), then :func:`rank_records` of the edges."""
    own = (
        [] if MENTION_CUES.search(question) else [(a.na_id, chunk_id(a.na_id, 0)) for a in anchors]
    )
    first = {na_id for na_id, _ in own}
    return own + [record for record in rank_records(edges) if record[0] not in first]


#: How long a database's signatures (authority counts, writer revisions) are trusted before
#: they are read again.
SIGNATURE_CHECK_SECONDS = 1.0

T = TypeVar("T")


class _ThrottledRead(Generic[T]):
    """A per-database value read from the graph at most once per `SIGNATURE_CHECK_SECONDS`."""

    def __init__(self, read: Callable[[Driver, str], T]) -> None:
        self._read = read
        #: database -> (monotonic time read, value).
        self._known: dict[str, tuple[float, T]] = {}
        self._lock = Lock()

    def __call__(self, driver: Driver, database: str) -> T:
        now = time.monotonic()
        with self._lock:
            known = self._known.get(database)
        if known is not None and now - known[0] < SIGNATURE_CHECK_SECONDS:
            return known[1]
        value = self._read(driver, database)
        with self._lock:
            self._known[database] = (now, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._known.clear()


_linkers: dict[tuple[str, tuple[tuple[str, int], ...]], EntityLinker] = {}
_linkers_lock = Lock()
# The reads are looked up when called, not bound here, so that tests can stand in for them.
_authority_signature = _ThrottledRead(lambda driver, db: cypher.authority_signature(driver, db))


def clear_entity_linkers() -> None:
    """Forget the cached linkers (the next question rebuilds from the graph)."""
    with _linkers_lock:
        _linkers.clear()
    _authority_signature.clear()


def linker_for(driver: Driver, database: str) -> EntityLinker:
    """The graph's linker, built on first use and whenever the authority counts change."""
    key = (database, _authority_signature(driver, database))
    with _linkers_lock:
        linker = _linkers.get(key)
        if linker is None:
            linker = graph_linker(cypher.authority_properties(driver, database))
            for stale in [k for k in _linkers if k[0] == database]:
                del _linkers[stale]
            _linkers[key] = linker
        return linker


#: Most anchors whose neighbourhoods one process remembers (each is at most 2 x PER_ANCHOR
#: edges, a few kB).
NEIGHBOURHOOD_CACHE_SIZE: Final = 4_096

#: (database, graph signature, per_anchor, max_degree) -> anchor chunkId -> its row (None: no
#: such chunk), least recently used first.
_neighbourhoods: dict[tuple[Any, ...], OrderedDict[str, Mapping[str, Any] | None]] = {}
_neighbourhoods_lock = Lock()
_neighbourhood_signature = _ThrottledRead(lambda driver, db: sync_state.graph_signature(driver, db))


def clear_anchor_neighbourhoods() -> None:
    """Forget the remembered anchor neighbourhoods (the next questions read the graph)."""
    with _neighbourhoods_lock:
        _neighbourhoods.clear()
    _neighbourhood_signature.clear()


def anchor_neighbourhoods(
    driver: Driver, database: str, anchor_chunks: list[str], per_anchor: int, max_degree: int
) -> list[Mapping[str, Any]]:
    """The :func:`~nara_kg.graph.mentions.anchor_neighbours` rows of these anchors, each read
    once while the graph's neighbourhood signature stays the same. Popular authorities come
    back in question after question, and their walk was the costliest query of a search (up to
    10 ms for one cited a thousand times)."""
    key = (database, _neighbourhood_signature(driver, database), per_anchor, max_degree)
    with _neighbourhoods_lock:
        known = _neighbourhoods.get(key)
        if known is None:
            for stale in [k for k in _neighbourhoods if k[0] == database]:
                del _neighbourhoods[stale]
            known = _neighbourhoods[key] = OrderedDict()
        rows = {chunk: known[chunk] for chunk in anchor_chunks if chunk in known}
        for chunk in rows:
            known.move_to_end(chunk)
    missing = [chunk for chunk in dict.fromkeys(anchor_chunks) if chunk not in rows]
    if missing:
        read = {
            chunk_id(int(row["anchor"]), 0): row
            for row in cypher.anchor_neighbours(driver, database, missing, per_anchor, max_degree)
        }
        fetched = {chunk: read.get(chunk) for chunk in missing}
        with _neighbourhoods_lock:
            known.update(fetched)
            while len(known) > NEIGHBOURHOOD_CACHE_SIZE:
                known.popitem(last=False)
        rows.update(fetched)
    return [row for chunk in anchor_chunks if (row := rows.get(chunk)) is not None]


def entity_path(
    driver: Driver,
    database: str,
    question: str,
    *,
    per_anchor: int = PER_ANCHOR,
    max_degree: int = MAX_ANCHOR_DEGREE,
) -> EntityPath:
    """The anchors the question names and the records around them, ranked."""
    path = EntityPath(anchors=question_anchors(linker_for(driver, database), question))
    if not path.anchors:
        return path
    rows = anchor_neighbourhoods(
        driver, database, [chunk_id(a.na_id, 0) for a in path.anchors], per_anchor, max_degree
    )
    for row in rows:
        if row["degree"] > max_degree:
            path.skipped[int(row["anchor"])] = int(row["degree"])
        path.edges.extend(
            PathEdge(int(row["anchor"]), str(rel), int(na_id), str(chunk), int(count or 0))
            for na_id, chunk, rel, count in row["edges"]
            if na_id is not None
        )
    path.ranking = path_ranking(question, path.anchors, path.edges)
    return path
