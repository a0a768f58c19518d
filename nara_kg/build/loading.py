"""Graph stages: make Neo4j match the chunk Parquet (nodes, vectors, relationships).

Each stage computes what the graph should hold, compares it with what it holds, and writes only
the difference, so re-runs are cheap and converge to the same graph after any interruption.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from neo4j import Driver

from nara_kg.model import edges as edge_rules
from nara_kg.embedding.encoder import Embedder, release_free_memory
from nara_kg.graph import embeddings as embedding_cypher
from nara_kg.graph import nodes as node_cypher
from nara_kg.graph import reports as report_cypher
from nara_kg.graph.relationships import SyncResult, sync_edges
from nara_kg.ingest.inputs import file_id_of
from nara_kg.ingest.layout import WorkLayout
from nara_kg.generation.llm import describe
from nara_kg.ingest.stages import iter_chunks, read_aliases, read_vector_part, record_links
from nara_kg.generation.reports import (
    CommunityReport,
    MemberInfo,
    RelationshipInfo,
    ReportContext,
    SubReport,
    build_context,
    generate_report,
)
from nara_kg.model.schema import AUTHORITY_RELATIONSHIPS, Prop, Rel

Log = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


@dataclass
class NodeSyncResult:
    desired: int = 0
    written: int = 0
    unchanged: int = 0
    deleted: int = 0
    records_written: int = 0
    records_removed: int = 0
    written_by_type: Counter[str] = field(default_factory=Counter)


def sync_nodes(
    driver: Driver,
    database: str,
    layout: WorkLayout,
    *,
    rewrite_all: bool = False,
    log: Log = _quiet,
) -> NodeSyncResult:
    """Write the chosen chunks whose row changed (every one with `rewrite_all`, the full
    rebuild) and delete the chunk nodes the input no longer has."""
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
        if not rewrite_all and existing.get(row["chunkId"]) == row["rowHash"]:
            result.unchanged += 1
            continue
        props = json.loads(row["props"])
        props[node_cypher.ROW_HASH] = row["rowHash"]
        if props[Prop.CHUNK_SEQ_ID] == 0:
            result.records_written += 1
        batch = pending.setdefault(row["nodeType"], [])
        batch.append({"props": props, "embed": row["embed"]})
        if len(batch) >= flush_at:
            flush(row["nodeType"])
            log(f"wrote {result.written} nodes ({time.monotonic() - started:.1f}s)")
    for node_type in list(pending):
        flush(node_type)
    stale = [chunk_id for chunk_id in existing if chunk_id not in desired_ids]
    result.records_removed = sum(1 for chunk_id in stale if chunk_id.endswith("-0"))
    if stale:
        result.deleted = node_cypher.delete_chunks(driver, database, stale)
        log(f"deleted {result.deleted} chunk nodes no longer in the input")
    return result


@dataclass
class EmbeddingResult:
    embedded: int = 0
    #: Of `embedded`: vectors taken from the per-file `chunk_embeddings` parts.
    from_parts: int = 0
    #: Of `embedded`: vectors encoded here (chosen stubs, or chunks whose part is missing).
    encoded: int = 0
    already_current: int = 0
    seconds_encoding: float = 0.0
    seconds_total: float = 0.0
    model_key: str = ""
    dimension: int = 0

    @property
    def chunks_per_second(self) -> float:
        return self.encoded / self.seconds_encoding if self.seconds_encoding else 0.0


class _PartVectors:
    """Vectors of the per-file parts, looked up by the chunk's file (one part per file)."""

    def __init__(self, layout: WorkLayout | None, model_key: str) -> None:
        self._layout = layout
        self._model_key = model_key
        self._parts: dict[str, dict[tuple[str, str], Any]] = {}

    def find(self, row: dict[str, Any]) -> Any:
        if self._layout is None or not row.get("file"):
            return None
        # A zip member is named "<archive>!<member>": the part belongs to the archive.
        file_id = file_id_of(str(row["file"]).split("!", 1)[0])
        if file_id not in self._parts:
            self._parts[file_id] = read_vector_part(
                self._layout.vector_part(file_id), self._model_key
            )
        return self._parts[file_id].get((row["id"], row["hash"]))

    def forget(self) -> None:
        self._parts.clear()


def embed_pending(
    driver: Driver,
    database: str,
    embedder: Embedder,
    *,
    layout: WorkLayout | None = None,
    page_size: int = 512,
    round_size: int = 16_384,
    log: Log = _quiet,
) -> EmbeddingResult:
    """Give every chunk whose text or model changed its vector.

    Vectors come from the per-file parts that `chunk_embeddings` made (when `layout` is given);
    what no part holds is encoded here, longest first, `page_size` per call. Pending chunks are
    read `round_size` at a time, and each page is written as soon as it is ready, so an
    interrupted run keeps its finished pages.
    """
    started = time.perf_counter()
    result = EmbeddingResult(model_key=embedder.key)
    total_pending = embedding_cypher.count_pending(driver, database, embedder.key)
    log(f"{total_pending} chunks need an embedding (model {embedder.key})")
    parts = _PartVectors(layout, embedder.key)

    def write(page: list[dict[str, Any]], vectors: Sequence[Any]) -> int:
        embedding_cypher.write_vectors(
            driver,
            database,
            embedder.key,
            [
                {"id": r["id"], "hash": r["hash"], "vector": v}
                for r, v in zip(page, vectors, strict=True)
            ],
        )
        return len(page)

    # One page is written while the next is encoded: the model releases the GIL, so packing
    # and sending vectors costs no model time. At most one write is in flight, and a round
    # ends only when its writes have landed, so the next read sees them.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="vector-writer") as writer:
        in_flight: Future[int] | None = None

        def landed() -> None:
            nonlocal in_flight
            if in_flight is not None:
                result.embedded += in_flight.result()
                in_flight = None
                release_free_memory()
                log(f"embedded {result.embedded}/{total_pending} chunks")

        while True:
            pending = embedding_cypher.fetch_pending(driver, database, embedder.key, round_size)
            if not pending:
                break
            found: list[tuple[dict[str, Any], Any]] = []
            missing: list[dict[str, Any]] = []
            for row in pending:
                vector = parts.find(row)
                if vector is None:
                    missing.append(row)
                else:
                    found.append((row, vector))
            parts.forget()
            for offset in range(0, len(found), page_size):
                page = found[offset : offset + page_size]
                landed()
                in_flight = writer.submit(write, [r for r, _ in page], [v for _, v in page])
                result.from_parts += len(page)
            missing.sort(key=lambda row: -len(row["text"]))
            for offset in range(0, len(missing), page_size):
                page_rows = missing[offset : offset + page_size]
                encode_started = time.perf_counter()
                vectors = embedder.encode([row["text"] for row in page_rows])
                result.seconds_encoding += time.perf_counter() - encode_started
                result.encoded += len(page_rows)
                landed()
                in_flight = writer.submit(write, page_rows, list(vectors))
            landed()
            if result.embedded > total_pending * 2 + round_size:
                raise RuntimeError("embedding loop is not converging: vectors are not being stored")
    if result.encoded or result.from_parts:
        result.dimension = embedder.dimension
    result.seconds_total = time.perf_counter() - started
    return result


def sync_next(driver: Driver, database: str, layout: WorkLayout) -> SyncResult:
    return sync_edges(driver, database, Rel.NEXT, edge_rules.next_edges(record_links(layout)))


def sync_includes(
    driver: Driver, database: str, layout: WorkLayout
) -> tuple[SyncResult, list[list[int]]]:
    """Includes by difference, and the ancestor cycles that were broken to build it."""
    links = record_links(layout)
    present = {link.na_id for link in links}
    _, cycles = edge_rules.break_cycles(edge_rules.parent_links(links, present))
    synced = sync_edges(driver, database, Rel.INCLUDES, edge_rules.includes_edges(links, present))
    return synced, cycles


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
    from nara_kg.model.community_hierarchy import build_hierarchy
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


@dataclass
class ReportRunResult:
    communities: int = 0
    generated: int = 0
    cached: int = 0
    used_sub_reports: int = 0
    truncated: int = 0
    #: Communities with the same members as their only sub-community, given its report.
    copied_from_sub_community: int = 0
    summaries_embedded: int = 0
    #: Distinct summary texts encoded (equal summaries share one vector).
    summaries_encoded: int = 0
    per_level: Counter[int] = field(default_factory=Counter)
    preview: list[dict[str, Any]] = field(default_factory=list)


def _excerpt(text: str | None, limit: int = 300) -> str | None:
    """The body of a chunk without its search header (the header only repeats the title)."""
    if not text:
        return None
    body = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    body = " ".join(body.split())
    return body[:limit] or None


def _same_level_batches(
    communities: Sequence[dict[str, Any]], *, max_communities: int = 200, max_members: int = 20_000
) -> Iterator[list[dict[str, Any]]]:
    """Consecutive communities of one level, few enough (and with few enough members between
    them) to read their contexts in one query; levels never mix, so a batch's sub-communities
    are all done before it."""
    batch: list[dict[str, Any]] = []
    members = 0
    for community in communities:
        size = int(community["size"] or 0)
        if batch and (
            community["level"] != batch[-1]["level"]
            or len(batch) >= max_communities
            or members + size > max_members
        ):
            yield batch
            batch, members = [], 0
        batch.append(community)
        members += size
    if batch:
        yield batch


def _report_context(
    community: dict[str, Any],
    members: Sequence[dict[str, Any]],
    relationships: Sequence[dict[str, Any]],
    done: dict[str, tuple[CommunityReport, frozenset[int]]],
    *,
    token_budget: int,
    count_tokens: Callable[[str], int],
    row_costs: dict[str, int],
) -> ReportContext:
    return build_context(
        community["id"],
        int(community["level"]),
        [
            MemberInfo(
                na_id=int(m["naId"]),
                title=m["title"],
                node_type=m["nodeType"] or "record",
                degree=int(m["degree"]),
                excerpt=_excerpt(m["text"]),
                source=m["source"],
            )
            for m in members
        ],
        [
            RelationshipInfo(
                source_na_id=int(r["source"]),
                target_na_id=int(r["target"]),
                rel_type=r["type"],
                source_title=r["sourceTitle"],
                target_title=r["targetTitle"],
                degree=int(r["degree"]),
            )
            for r in relationships
        ],
        [
            SubReport(child, len(done[child][1]), done[child][0], done[child][1])
            for child in community["children"]
            if child in done
        ],
        token_budget=token_budget,
        count_tokens=count_tokens,
        row_costs=row_costs,
    )


def _context_key(generator: str, context_text: str) -> str:
    """What a report was made from: the generator and its exact context."""
    return hashlib.sha256(f"{generator}\n{context_text}".encode()).hexdigest()[:16]


def _report_row(community_id: str, report: CommunityReport, context_key: str) -> dict[str, Any]:
    return {
        "id": community_id,
        "title": report.title,
        "summary": report.summary,
        "rating": float(report.rating),
        "rating_explanation": report.rating_explanation,
        "findings": json.dumps(
            [{"summary": f.summary, "explanation": f.explanation} for f in report.findings],
            ensure_ascii=False,
        ),
        "report": report.to_json(),
        "generatedBy": report.generated_by,
        "contextKey": context_key,
    }


def generate_community_reports(
    driver: Driver,
    database: str,
    llm: Any,
    cache: Any,
    embedder: Embedder,
    *,
    token_budget: int,
    log: Log = _quiet,
) -> ReportRunResult:
    """One report per community, finest level first, so that a coarser community whose members
    do not fit the budget can use its sub-communities' reports instead."""
    result = ReportRunResult()
    #: community id -> (its report, its members' naIds)
    done: dict[str, tuple[CommunityReport, frozenset[int]]] = {}
    context_keys: dict[str, str] = {}
    row_costs: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    communities = report_cypher.communities(driver, database)
    generator = describe(llm)
    position = 0
    for batch in _same_level_batches(communities):
        # A community whose only sub-community has all of its members is that sub-community
        # seen one level up: it takes the sub-community's report instead of a second
        # generation (an LLM call with a real backend) that could only say the same.
        copies = {
            c["id"]: c["children"][0]
            for c in batch
            if len(c["children"]) == 1
            and c["children"][0] in done
            and len(done[c["children"][0]][1]) == int(c["size"] or 0)
        }
        to_read = [c["id"] for c in batch if c["id"] not in copies]
        members_of = report_cypher.members_of_many(driver, database, to_read)
        relationships_of = report_cypher.relationships_within(
            driver,
            database,
            {cid: [int(m["naId"]) for m in members_of[cid]] for cid in to_read},
        )
        for community in batch:
            position += 1
            community_id = community["id"]
            level = int(community["level"])
            child = copies.get(community_id)
            if child is not None:
                child_report, na_ids = done[child]
                report = replace(child_report, community_id=community_id, level=level)
                context_key = context_keys[child]
                result.copied_from_sub_community += 1
            else:
                context = _report_context(
                    community,
                    members_of[community_id],
                    relationships_of[community_id],
                    done,
                    token_budget=token_budget,
                    count_tokens=embedder.count_tokens,
                    row_costs=row_costs,
                )
                report, was_cached = generate_report(context, llm, cache)
                na_ids = frozenset(int(m["naId"]) for m in members_of[community_id])
                context_key = _context_key(generator, context.text)
                result.cached += int(was_cached)
                result.generated += int(not was_cached)
                result.used_sub_reports += int(context.used_sub_reports)
                result.truncated += int(context.truncated)
            done[community_id] = (report, na_ids)
            context_keys[community_id] = context_key
            result.communities += 1
            result.per_level[level] += 1
            rows.append(_report_row(community_id, report, context_key))
            if len(result.preview) < 15:
                result.preview.append(
                    {
                        "id": community_id,
                        "size": len(na_ids),
                        "title": report.title,
                        "rating": report.rating,
                    }
                )
            if position % 200 == 0:
                log(f"reports: {position}/{len(communities)} ({result.cached} from cache)")
    report_cypher.write_reports(driver, database, rows)

    report_cypher.ensure_summary_index(driver, database, embedder.dimension)
    pending = list(report_cypher.pending_summary_embeddings(driver, database, embedder.key))
    if pending:
        # A community with the same members as its only sub-community gets the same report,
        # so many summaries repeat across levels; each distinct text is encoded once.
        texts = sorted({row["text"] for row in pending})
        vectors = dict(zip(texts, embedder.encode(texts), strict=True))
        report_cypher.write_summary_embeddings(
            driver,
            database,
            [
                {
                    "id": row["id"],
                    "vector": vectors[row["text"]],
                    "key": f"{embedder.key}|{row['key']}",
                }
                for row in pending
            ],
        )
        result.summaries_encoded = len(texts)
        release_free_memory()
    result.summaries_embedded = len(pending)
    return result
