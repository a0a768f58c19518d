"""Local search: seed 000's graph retrieval over a hybrid (vector + full-text) candidate list.

The two rankings are fused with Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009):
``score(d) = Σ 1 / (k + rank_i(d))``. RRF needs no score calibration between cosine similarity
and BM25, which live on different scales, and is robust to one list being empty.

We use k = 10 rather than the paper's 60: with k = 60 a record that only one list ranks first
loses to records both lists rank in the middle, and exact identifiers (volume numbers, dates)
are precisely what the dense model misses and BM25 gets right. On the real records' titles this
moved the right "Volume N" file unit from rank 6 to the top 2 (see tests/e2e).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from neo4j import Driver

from nara_kg.graph import search as cypher

RRF_K = 10
#: Candidates fetched from each index per requested result: chunks of one record collapse into
#: one result, so asking for more keeps k distinct records in the answer.
CANDIDATES_PER_RESULT = 4

_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')
_WORD = re.compile(r"\w+", re.UNICODE)


def lucene_query(text: str) -> str:
    """A full-text query that matches any of the words, with Lucene syntax neutralized."""
    words = [_LUCENE_SPECIAL.sub(r"\\\1", w) for w in _WORD.findall(text)]
    return " ".join(w for w in words if w.upper() not in {"AND", "OR", "NOT", "TO"})


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SearchResult:
    query: str
    hits: list[SearchHit]
    latency_ms: float


def local_search(
    driver: Driver,
    database: str,
    encode: Callable[[list[str]], Any],
    query: str,
    *,
    k: int = 5,
) -> SearchResult:
    started = time.perf_counter()
    n_candidates = max(k * CANDIDATES_PER_RESULT, 20)
    vector = [float(x) for x in encode([query])[0]]
    by_vector = cypher.vector_candidates(driver, database, vector, n_candidates)
    by_text = cypher.fulltext_candidates(driver, database, lucene_query(query), n_candidates)

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
    fused = reciprocal_rank_fusion([vector_order, text_order])[:k]
    chunk_for = {key: vector_chunk.get(key) or text_chunk[key] for key, _ in fused}
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
            )
        )
    return SearchResult(query, hits, (time.perf_counter() - started) * 1000.0)
