"""Graph stages: make Neo4j match the chunk Parquet (nodes, vectors, relationships).

Each stage computes what the graph should hold, compares it with what it holds, and writes only
the difference, so re-runs are cheap and converge to the same graph after any interruption.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nara_kg import edges as edge_rules
from nara_kg.embedding import Embedder
from nara_kg.graph import embeddings as embedding_cypher
from nara_kg.graph import nodes as node_cypher
from nara_kg.graph.relationships import SyncResult, sync_edges
from nara_kg.layout import WorkLayout
from nara_kg.pipeline import iter_chunks, read_aliases, record_links
from nara_kg.schema import AUTHORITY_RELATIONSHIPS, Rel
from neo4j import Driver

Log = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


@dataclass
class NodeSyncResult:
    desired: int = 0
    written: int = 0
    unchanged: int = 0
    deleted: int = 0
    written_by_type: Counter[str] = field(default_factory=Counter)


def sync_nodes(
    driver: Driver, database: str, layout: WorkLayout, *, log: Log = _quiet
) -> NodeSyncResult:
    node_cypher.ensure_node_schema(driver, database)
    existing = node_cypher.existing_row_hashes(driver, database)
    result = NodeSyncResult()
    desired_ids: set[str] = set()
    pending: dict[str, list[dict[str, Any]]] = {}
    flush_at = 2_000

    def flush(node_type: str) -> None:
        rows = pending.pop(node_type, [])
        if rows:
            node_cypher.upsert_nodes(driver, database, node_type, rows)
            result.written += len(rows)
            result.written_by_type[node_type] += len(rows)

    started = time.monotonic()
    for row in iter_chunks(layout, ["chunkId", "nodeType", "embed", "props", "rowHash"]):
        result.desired += 1
        desired_ids.add(row["chunkId"])
        if existing.get(row["chunkId"]) == row["rowHash"]:
            result.unchanged += 1
            continue
        props = json.loads(row["props"])
        props[node_cypher.ROW_HASH] = row["rowHash"]
        batch = pending.setdefault(row["nodeType"], [])
        batch.append({"props": props, "embed": row["embed"]})
        if len(batch) >= flush_at:
            flush(row["nodeType"])
            log(f"wrote {result.written} nodes ({time.monotonic() - started:.1f}s)")
    for node_type in list(pending):
        flush(node_type)
    stale = [chunk_id for chunk_id in existing if chunk_id not in desired_ids]
    if stale:
        result.deleted = node_cypher.delete_chunks(driver, database, stale)
        log(f"deleted {result.deleted} chunk nodes no longer in the input")
    return result


@dataclass
class EmbeddingResult:
    embedded: int = 0
    already_current: int = 0
    seconds_encoding: float = 0.0
    seconds_total: float = 0.0
    model_key: str = ""
    dimension: int = 0

    @property
    def chunks_per_second(self) -> float:
        return self.embedded / self.seconds_encoding if self.seconds_encoding else 0.0


def embed_pending(
    driver: Driver,
    database: str,
    embedder: Embedder,
    *,
    page_size: int = 512,
    log: Log = _quiet,
) -> EmbeddingResult:
    """Embed every chunk whose text or model changed since it was last embedded."""
    started = time.perf_counter()
    result = EmbeddingResult(model_key=embedder.key, dimension=embedder.dimension)
    total_pending = embedding_cypher.count_pending(driver, database, embedder.key)
    log(f"{total_pending} chunks need an embedding (model {embedder.key})")
    while True:
        page = embedding_cypher.fetch_pending(driver, database, embedder.key, page_size)
        if not page:
            break
        encode_started = time.perf_counter()
        vectors = embedder.encode([row["text"] for row in page])
        result.seconds_encoding += time.perf_counter() - encode_started
        embedding_cypher.write_vectors(
            driver,
            database,
            embedder.key,
            [
                {"id": r["id"], "hash": r["hash"], "vector": v}
                for r, v in zip(page, vectors, strict=True)
            ],
        )
        result.embedded += len(page)
        log(
            f"embedded {result.embedded}/{total_pending} chunks "
            f"({result.chunks_per_second:.0f} chunks/s encoding)"
        )
        if result.embedded > total_pending * 2 + page_size:
            raise RuntimeError("embedding loop is not converging: vectors are not being stored")
    result.seconds_total = time.perf_counter() - started
    return result


def sync_next(driver: Driver, database: str, layout: WorkLayout) -> SyncResult:
    return sync_edges(driver, database, Rel.NEXT, edge_rules.next_edges(record_links(layout)))


def sync_includes(driver: Driver, database: str, layout: WorkLayout) -> SyncResult:
    links = record_links(layout)
    present = {link.na_id for link in links}
    return sync_edges(driver, database, Rel.INCLUDES, edge_rules.includes_edges(links, present))


def sync_authorities(driver: Driver, database: str, layout: WorkLayout) -> list[SyncResult]:
    links = record_links(layout)
    present = {link.na_id for link in links}
    desired = edge_rules.authority_edges(links, present, read_aliases(layout))
    return [sync_edges(driver, database, rel, desired[rel]) for rel in AUTHORITY_RELATIONSHIPS]


@dataclass
class CommunityResult:
    nodes: int
    relationships: int
    levels: int
    modularities: list[float]
    communities_per_level: dict[int, int]
    size_distribution: dict[str, int]
    members_with_community: int
    write: dict[str, int]


def _size_bucket(size: int) -> str:
    for limit in (2, 5, 10, 50, 100, 500, 1000):
        if size <= limit:
            return f"<= {limit}"
    return "> 1000"


def detect_communities(driver: Driver, database: str, gds: Any) -> CommunityResult:
    """Hierarchical Leiden over first chunks; Community nodes and IN_COMMUNITY by difference."""
    import hashlib

    from nara_kg.communities import build_hierarchy
    from nara_kg.graph import communities as community_cypher

    leiden = community_cypher.run_leiden(gds)
    hierarchy = build_hierarchy(leiden.assignments)
    member_hashes = {
        c.id: hashlib.sha256(",".join(map(str, c.members)).encode()).hexdigest()[:16]
        for c in hierarchy.communities.values()
    }
    written = community_cypher.write_hierarchy(driver, database, hierarchy, member_hashes)
    per_level = Counter(c.level for c in hierarchy.communities.values())
    sizes = Counter(_size_bucket(c.size) for c in hierarchy.communities.values() if c.level == 0)
    return CommunityResult(
        nodes=leiden.nodes,
        relationships=leiden.relationships,
        levels=leiden.ran_levels,
        modularities=leiden.modularities,
        communities_per_level=dict(sorted(per_level.items())),
        size_distribution=dict(sizes),
        members_with_community=len(hierarchy.finest),
        write=written,
    )
