"""Local search: seed 000's graph retrieval over a hybrid (vector + full-text) candidate list.

The two rankings are fused with Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009):
``score(d) = Σ 1 / (k + rank_i(d))``. RRF needs no score calibration between cosine similarity
and BM25, which live on different scales, and is robust to one list being empty.

We use k = 10 rather than the paper's 60: with k = 60 a record that only one list ranks first
loses to records both lists rank in the middle, and exact identifiers (volume numbers, dates)
are precisely what the dense model misses and BM25 gets right. On the real records' titles this
moved the right "Volume N" file unit from rank 6 to the top 2 (see tests/e2e).

Filters (:class:`~nara_kg.retrieval.filters.SearchFilters`: level of description, record type,
authority type, type of materials, dates, "within" a record group, series, file unit or
collection) run inside both candidate queries, which are widened until enough records pass; a
filter too selective for the approximate vector index is answered by exact scores over the
records that pass it. A filtered search therefore returns k records whenever k records match.

A question that names a person, organization or other authority gets a third ranking, the records
around those authorities (:mod:`~nara_kg.retrieval.entity_path`: the chunks that mention them and
the records they are creators or subjects of), fused with the same RRF. It runs beside the
full-text query, and not under filters (its records would bypass them).
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import cache
from threading import Lock
from typing import Any

from neo4j import Driver

from nara_kg.errors import QueryError
from nara_kg.graph import search as cypher
from nara_kg.retrieval.entity_path import EntityPath
from nara_kg.retrieval.entity_path import entity_path as find_entity_path
from nara_kg.retrieval.filters import NO_FILTERS, SearchFilters, filter_parameters
from nara_kg.retrieval.query_understanding import (
    NARROW_DATE_DAYS,
    QueryFacts,
    RecordFacts,
    record_facts,
    rerank,
    title_phrase_query,
    understand,
)

RRF_K = 10
#: Candidates fetched from each index per requested result: chunks of one record collapse into
#: one result, so asking for more keeps k distinct records in the answer.
CANDIDATES_PER_RESULT = 4

_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')
_WORD = re.compile(r"\w+", re.UNICODE)


#: Most terms a full-text query keeps (Lucene refuses more than 1,024 clauses; a long pasted
#: text gains nothing from its 65th word). Documented in the README.
MAX_QUERY_TERMS = 64
#: Lucene's own operators, never sent as words.
_OPERATORS = frozenset({"AND", "OR", "NOT", "TO"})
#: Words that carry no information in a catalog query; dropped only from over-long queries.
_STOP_WORDS = frozenset(
    (  # noqa: SIM905 - a sentence of words reads better than a column of them
        "a an and are as at be by for from has have in is it its of on or that the this to was "
        "were which with what who whom when where how about into than then there these those"
    ).split()
)


def informative_terms(text: str, limit: int = MAX_QUERY_TERMS) -> list[str]:
    """The query's words; past `limit`, the most informative ones in their original order:
    distinct words, no stop words, words with digits (identifiers, years) first, then longer
    words before shorter ones."""
    words = [w for w in _WORD.findall(text) if w.upper() not in _OPERATORS]
    if len(words) <= limit:
        return words
    distinct = list(dict.fromkeys(w.lower() for w in words))
    candidates = [w for w in distinct if w not in _STOP_WORDS] or distinct
    ranked = sorted(
        range(len(candidates)),
        key=lambda i: (not any(c.isdigit() for c in candidates[i]), -len(candidates[i]), i),
    )
    return [candidates[i] for i in sorted(ranked[:limit])]


def lucene_query(text: str) -> str:
    """A full-text query that matches any of at most MAX_QUERY_TERMS informative words, with
    Lucene syntax neutralized."""
    return " ".join(_LUCENE_SPECIAL.sub(r"\\\1", w) for w in informative_terms(text))


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], k: int = RRF_K
) -> list[tuple[str, float]]:
    """Fuse ranked lists of ids into one ranking, best first (ties by first appearance)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])


@dataclass
class SearchHit:
    naId: int
    title: str | None
    type: str
    score: float
    source: str | None
    is_stub: bool
    #: Root of the hierarchy first, the record itself last.
    hierarchy: list[dict[str, Any]] = field(default_factory=list)
    authorities: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
    chunk_id: str = ""
    vector_rank: int | None = None
    fulltext_rank: int | None = None
    #: `description` or `authority`.
    record_type: str | None = None
    #: ISO dates: inclusive, else coverage, else title-stated (a file unit's "June 6 - June 7,
    #: 1944"), else production dates; a record with none has
    #: those of its nearest dated ancestor (`dates_inherited`). See graph/search.py.
    date_start: str | None = None
    date_end: str | None = None
    dates_inherited: bool = False
    #: `generalRecordsTypes` ("Textual Records", "Photographs and other Graphic Materials", ...).
    materials: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SearchResult:
    query: str
    hits: list[SearchHit]
    latency_ms: float
    #: The anchors and edges of the entity ranking (None when it did not run).
    entity_path: EntityPath | None = None


#: Candidate lists are widened by this factor while too few records pass the filters; past
#: EXACT_AFTER index candidates the vector side scores the filtered records exactly instead
#: (every record is embedded, so that side alone finds k records whenever k match). The
#: full-text side stops widening at FULLTEXT_MAX_CANDIDATES: a common word under a selective
#: filter would otherwise walk the whole index.
WIDEN_FACTOR = 8
EXACT_AFTER = 2_000
FULLTEXT_MAX_CANDIDATES = 20_000


def _filtered_candidates(
    driver: Driver,
    database: str,
    vector: list[float],
    text_query: str,
    n_candidates: int,
    params: dict[str, Any],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Both candidate lists with the filters applied inside the index queries, widened until
    each holds `n_candidates` records or the whole index was asked, so a filter never cuts the
    k results short while enough records match it."""
    if params["withinIds"] is not None and not params["withinIds"]:
        return [], []  # nothing under the record searched within
    total = cypher.indexed_chunks(driver, database)
    within = params["withinIds"]
    if within is not None and len(within) <= EXACT_AFTER:
        # A small subtree: exact scores over its records beat any approximate search.
        by_vector = cypher.vector_exact_filtered(
            driver, database, vector, k=n_candidates, filters=params
        )
    else:
        size = n_candidates
        while True:
            by_vector = cypher.vector_candidates_filtered(
                driver, database, vector, size=size, k=n_candidates, filters=params
            )
            if len(by_vector) >= n_candidates or size >= total:
                break
            if size * WIDEN_FACTOR > EXACT_AFTER:
                by_vector = cypher.vector_exact_filtered(
                    driver, database, vector, k=n_candidates, filters=params
                )
                break
            size = min(size * WIDEN_FACTOR, total)
    if not by_vector:
        # The vector side saw every embedded record that passes (exactly, or the whole
        # index) and none does; every record is embedded but a few reference-only stubs, so
        # walking the full-text index for them is not worth the time.
        return [], []
    size = n_candidates
    while True:
        by_text = cypher.fulltext_candidates_filtered(
            driver, database, text_query, size=size, k=n_candidates, filters=params
        )
        if len(by_text) >= n_candidates or size >= min(total, FULLTEXT_MAX_CANDIDATES):
            break
        size = min(size * WIDEN_FACTOR, total, FULLTEXT_MAX_CANDIDATES)
    return by_vector, by_text


@cache
def _background() -> ThreadPoolExecutor:
    """Threads for the candidate queries that need no query vector (made on first use)."""
    return ThreadPoolExecutor(max_workers=6, thread_name_prefix="local-search")


#: Recent query vectors: the chat page asks and then searches the same words, and evaluation
#: and dashboards repeat their questions. Keyed by the encoder, so models never mix.
_QUERY_VECTOR_CACHE_SIZE = 1_024
_query_vectors: OrderedDict[tuple[str, str], list[float]] = OrderedDict()
_query_vectors_lock = Lock()


def _query_vector(encode: Callable[[list[str]], Any], query: str) -> list[float]:
    owner = getattr(encode, "__self__", encode)
    key = (str(getattr(owner, "key", None) or id(owner)), query)
    with _query_vectors_lock:
        vector = _query_vectors.get(key)
        if vector is not None:
            _query_vectors.move_to_end(key)
            return vector
    vector = [float(x) for x in encode([query])[0]]
    with _query_vectors_lock:
        _query_vectors[key] = vector
        while len(_query_vectors) > _QUERY_VECTOR_CACHE_SIZE:
            _query_vectors.popitem(last=False)
    return vector


def clear_query_vectors() -> None:
    """Forget the recent query vectors (the benchmark measures encoding, not the cache)."""
    with _query_vectors_lock:
        _query_vectors.clear()


def require_query(text: str) -> str:
    """The query, or a QueryError when it has no word to search for."""
    if not _WORD.search(text or ""):
        raise QueryError("the query is empty: give at least one word to search for")
    return text


#: naId -> (the record's facts, its first chunk's id), for candidates whose rows carried facts.
KnownRecords = dict[str, tuple[RecordFacts, str]]


def known_records(rows: Iterable[Mapping[str, Any]]) -> KnownRecords:
    """The facts of the records these candidate rows carry facts for (`firstChunkId` set).
    Worked out by the thread that read the rows, while the query is encoded: parsing the
    titles of a hundred candidates after the fusion was up to 5 ms of a search's critical
    path."""
    known: KnownRecords = {}
    for row in rows:
        key = str(row["naId"])
        if row.get("firstChunkId") is None or key in known:
            continue
        facts = record_facts(
            int(row["naId"]),
            row["title"],
            row["dateStart"],
            row["dateEnd"],
            [str(code) for code in row["codes"] if code],
            str(row["nodeType"] or ""),
        )
        known[key] = (facts, str(row["firstChunkId"]))
    return known


def _with_known_records(
    read: Callable[..., list[dict[str, Any]]], *args: Any, **kwargs: Any
) -> tuple[list[dict[str, Any]], KnownRecords]:
    rows = read(*args, **kwargs)
    return rows, known_records(rows)


def _exact_candidates(
    driver: Driver, database: str, facts: QueryFacts, n_candidates: int
) -> list[dict[str, Any]]:
    """The records the question names exactly: titles holding its phrases, its naIds, and for
    "began in ..." questions those starting within a narrow date; with their facts where the
    query read them. Needs no vector, so it runs beside the encoding."""
    rows = list(
        cypher.exact_title_candidates(driver, database, title_phrase_query(facts), n_candidates)
    )
    rows += [{"naId": na_id} for na_id in facts.na_ids]
    if facts.asks_start:
        for wanted in facts.dates:
            if wanted.days <= NARROW_DATE_DAYS:
                rows += cypher.starting_within(
                    driver,
                    database,
                    wanted.start.isoformat(),
                    wanted.end.isoformat(),
                    n_candidates,
                )
    return rows


def _entity_candidates(
    driver: Driver, database: str, query: str, n_candidates: int, *, with_facts: bool
) -> tuple[EntityPath, KnownRecords]:
    """The ranking through the authorities the question names and, `with_facts`, its records'
    facts, read while the query is encoded rather than after the fusion."""
    path = find_entity_path(driver, database, query, per_anchor=n_candidates)
    if not with_facts or not path.ranking:
        return path, {}
    na_ids = [int(na_id) for na_id, _ in path.ranking[:n_candidates]]
    return path, known_records(cypher.candidate_facts(driver, database, na_ids))


def _exact_rerank(
    driver: Driver,
    database: str,
    fused: list[tuple[str, float]],
    facts: QueryFacts,
    *,
    known: KnownRecords,
    extra: Sequence[dict[str, Any]] = (),
) -> tuple[list[tuple[str, float]], dict[str, str]]:
    """The fused candidates, joined by the `extra` records the question names exactly, reordered
    by :func:`~nara_kg.retrieval.query_understanding.rerank`. Facts come from `known`; the
    other candidates' are read in one query."""
    pool = dict(fused)
    for row in extra:
        pool.setdefault(str(row["naId"]), 0.0)
    unknown = [int(key) for key in pool if key not in known]
    if unknown:
        known = {**known, **known_records(cypher.candidate_facts(driver, database, unknown))}
    records = {key: known[key][0] for key in pool if key in known}
    first_chunk = {key: chunk for key, (_, chunk) in known.items()}
    present = [(key, score) for key, score in pool.items() if key in records]
    return rerank(present, facts, records), first_chunk


def local_search(
    driver: Driver,
    database: str,
    encode: Callable[[list[str]], Any],
    query: str,
    *,
    k: int = 5,
    filters: SearchFilters = NO_FILTERS,
    entity_path: bool = True,
) -> SearchResult:
    """The k best records for the query (fewer only when fewer records match the filters);
    `entity_path=False` leaves out the ranking through the authorities the question names."""
    require_query(query)
    started = time.perf_counter()
    n_candidates = max(k * CANDIDATES_PER_RESULT, 20)
    path: EntityPath | None = None
    facts = understand(query)
    exact: list[dict[str, Any]] = []
    known: KnownRecords = {}
    if filters.active:
        vector = _query_vector(encode, query)
        params = filter_parameters(driver, database, filters)
        by_vector, by_text = _filtered_candidates(
            driver, database, vector, lucene_query(query), n_candidates, params
        )
    else:
        # Everything that needs no vector runs while the query is encoded; the candidate
        # lists carry their records' facts when the question names identifiers or dates.
        text_side = _background().submit(
            _with_known_records,
            cypher.fulltext_candidates,
            driver,
            database,
            lucene_query(query),
            n_candidates,
            with_facts=facts.any,
        )
        exact_side = (
            _background().submit(
                _with_known_records, _exact_candidates, driver, database, facts, n_candidates
            )
            if facts.any
            else None
        )
        entity_side = (
            _background().submit(
                _entity_candidates, driver, database, query, n_candidates, with_facts=facts.any
            )
            if entity_path
            else None
        )
        vector = _query_vector(encode, query)
        by_vector = cypher.vector_candidates(
            driver, database, vector, n_candidates, with_facts=facts.any
        )
        by_text, text_known = text_side.result()
        exact, exact_known = exact_side.result() if exact_side is not None else ([], {})
        entity_known: KnownRecords = {}
        if entity_side is not None:
            path, entity_known = entity_side.result()
        if facts.any:
            known = {**entity_known, **text_known, **exact_known}
            known.update(known_records(row for row in by_vector if str(row["naId"]) not in known))

    # Rank records, not chunks: a record's best chunk stands for it in each list.
    def record_ranking(rows: list[dict[str, Any]]) -> tuple[list[str], dict[str, str]]:
        order: list[str] = []
        best_chunk: dict[str, str] = {}
        for row in rows:
            key = str(row["naId"])
            if key not in best_chunk:
                best_chunk[key] = row["chunkId"]
                order.append(key)
        return order, best_chunk

    vector_order, vector_chunk = record_ranking(by_vector)
    text_order, text_chunk = record_ranking(by_text)
    rankings = [vector_order, text_order]
    entity_chunk: dict[str, str] = {}
    if path is not None and path.ranking:
        entity_order = [str(na_id) for na_id, _ in path.ranking[:n_candidates]]
        entity_chunk = {str(na_id): chunk for na_id, chunk in path.ranking[:n_candidates]}
        rankings.append(entity_order)
    fused = reciprocal_rank_fusion(rankings)
    chunk_for = {**entity_chunk, **text_chunk, **vector_chunk}
    if facts.any:
        fused, exact_chunk = _exact_rerank(driver, database, fused, facts, known=known, extra=exact)
        chunk_for = {**exact_chunk, **chunk_for}
    fused = fused[:k]
    expanded = {
        str(row["naId"]): row
        for row in cypher.expand_hits(driver, database, [chunk_for[key] for key, _ in fused])
    }
    hits = []
    for key, score in fused:
        row = expanded.get(key)
        if row is None:  # deleted between the two queries
            continue
        hits.append(
            SearchHit(
                naId=int(row["naId"]),
                title=row["title"],
                type=row["nodeType"],
                score=round(score, 6),
                source=row["source"],
                is_stub=bool(row["isStub"]),
                hierarchy=[h for h in row["hierarchy"] if h],
                authorities=[a for a in row["authorities"] if a.get("naId") is not None],
                text="\n".join(t for t in row["textList"] if t),
                chunk_id=row["chunkId"],
                vector_rank=vector_order.index(key) + 1 if key in vector_chunk else None,
                fulltext_rank=text_order.index(key) + 1 if key in text_chunk else None,
                record_type=row["recordType"],
                date_start=row["dateStart"],
                date_end=row["dateEnd"],
                dates_inherited=bool(row["datesInherited"] and row["dateStart"]),
                materials=list(row["materials"] or []),
            )
        )
    return SearchResult(query, hits, (time.perf_counter() - started) * 1000.0, path)
