"""Neo4j writes: the project's batched writers against the seed's per-node writes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Log, quiet, rounded, wipe_database

SEED_LABEL = "SeedBenchChunk"
SEED_INCLUDES = "SeedBenchIncludes"


def _write_sample(work_dir: Path, size: int) -> list[dict[str, Any]]:
    """`size` chunk rows of the chosen records, descriptions first and in file order, so that
    parents and children travel together and the sample has Includes relationships."""
    import pyarrow.parquet as pq

    from nara_kg.ingest.layout import WorkLayout
    from nara_kg.ingest.records import iter_rows
    from nara_kg.ingest.stages.record_selection import chosen_rows_by_file
    from nara_kg.model.tables import Col

    layout = WorkLayout(work_dir)
    index = pq.read_table(layout.parsed_index, columns=[Col.FILE_ID, Col.REL_PATH]).to_pylist()
    descriptions = {r[Col.FILE_ID] for r in index if r[Col.REL_PATH].startswith("descriptions")}
    ordered = sorted(chosen_rows_by_file(layout), key=lambda entry: entry[0] not in descriptions)
    rows: list[dict[str, Any]] = []
    columns = [Col.CHUNK_ID, Col.NA_ID, Col.CHUNK_SEQ_ID, Col.NODE_TYPE, Col.EMBED, Col.PROPS]
    columns += [Col.ROW_HASH, Col.PARENT_NA_ID, Col.RECORD_ROW]
    for file_id, rows_of_file in ordered:
        chosen = set(rows_of_file.tolist())
        for row in iter_rows(layout.chunk_part(file_id), columns):
            if row.pop(Col.RECORD_ROW) not in chosen:
                continue
            rows.append(row)
            if 0 < size <= len(rows):
                return rows
    return rows


def measure_writes(
    driver: Any, database: str, work_dir: Path, sample_size: int, log: Log = quiet
) -> dict[str, Any]:
    """The project's batched writers vs the seed's per-node writes on the same chunk rows.

    Batched: `nodes.upsert_nodes` (UNWIND + MERGE through the chunkId constraint, 500 rows per
    transaction) and `relationships.sync_edges` for Includes (endpoints looked up through the
    constraint). Seed: one auto-commit `MERGE ... ON CREATE SET` per node on a label with no
    constraint or index (as the seed's notebook did, the constraint came after), and Includes as
    one cartesian `MATCH (a), (b) WHERE a.naId = b.parentNaId` join without an index.
    Both run on an empty database, one after the other.
    """
    from nara_kg.build.edge_sync import sync_edges
    from nara_kg.graph import nodes as node_cypher
    from nara_kg.model import edges as edge_rules
    from nara_kg.model.schema import Prop, Rel
    from nara_kg.model.tables import Col

    rows = _write_sample(work_dir, sample_size)
    first_rows = [r for r in rows if r[Col.CHUNK_SEQ_ID] == 0]
    present = {r[Col.NA_ID] for r in first_rows}
    links = [
        edge_rules.RecordLinks(na_id=r[Col.NA_ID], chunk_count=1, parent_na_id=r[Col.PARENT_NA_ID])
        for r in first_rows
    ]
    edges = edge_rules.includes_edges(links, present)

    # ---- batched (the project's own functions)
    wipe_database(driver, database)
    node_cypher.ensure_node_schema(driver, database)
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        props = json.loads(row[Col.PROPS])
        props[Prop.ROW_HASH] = row[Col.ROW_HASH]
        groups.setdefault(row[Col.NODE_TYPE], []).append({"props": props, "embed": row[Col.EMBED]})
    started = time.perf_counter()
    for node_type, group in groups.items():
        node_cypher.upsert_nodes(driver, database, node_type, group)
    batched_nodes_s = time.perf_counter() - started
    started = time.perf_counter()
    synced = sync_edges(driver, database, Rel.INCLUDES, edges)
    batched_rels_s = time.perf_counter() - started
    log(f"batched: {len(rows)} nodes {batched_nodes_s:.2f}s, {synced.added} rels")

    # ---- the seed's way
    wipe_database(driver, database)
    seed_statement = f"MERGE (c:{SEED_LABEL} {{chunkId: $id}}) ON CREATE SET c += $props"
    started = time.perf_counter()
    with driver.session(database=database) as session:
        for row in rows:
            props = json.loads(row[Col.PROPS])
            if row[Col.CHUNK_SEQ_ID] == 0 and row[Col.PARENT_NA_ID] is not None:
                props["parentNaId"] = row[Col.PARENT_NA_ID]
            session.run(seed_statement, id=row[Col.CHUNK_ID], props=props).consume()
    seed_nodes_s = time.perf_counter() - started
    join = (
        f"MATCH (a:{SEED_LABEL}), (b:{SEED_LABEL}) "
        f"WHERE a.{Prop.CHUNK_SEQ_ID} = 0 AND b.{Prop.CHUNK_SEQ_ID} = 0 "
        f"AND a.{Prop.NA_ID} = b.parentNaId AND a <> b "
        f"CREATE (a)-[:{SEED_INCLUDES}]->(b)"
    )
    started = time.perf_counter()
    with driver.session(database=database) as session:
        summary = session.run(join).consume()
    seed_rels_s = time.perf_counter() - started
    seed_rels = summary.counters.relationships_created
    log(f"seed: {len(rows)} nodes {seed_nodes_s:.2f}s, {seed_rels} rels {seed_rels_s:.2f}s")
    wipe_database(driver, database)

    n_nodes, n_rels = len(rows), len(edges)

    def rate(count: int, seconds: float) -> float:
        return count / seconds if seconds > 0 else float("inf")

    batched_total = batched_nodes_s + batched_rels_s
    seed_total = seed_nodes_s + seed_rels_s
    return {
        "sample_nodes": n_nodes,
        "sample_includes": n_rels,
        "seed_includes_created": seed_rels,
        "batched": {
            "nodes_seconds": rounded(batched_nodes_s),
            "rels_seconds": rounded(batched_rels_s),
            "nodes_per_second": rounded(rate(n_nodes, batched_nodes_s), 1),
            "rels_per_second": rounded(rate(n_rels, batched_rels_s), 1),
        },
        "seed": {
            "nodes_seconds": rounded(seed_nodes_s),
            "rels_seconds": rounded(seed_rels_s),
            "nodes_per_second": rounded(rate(n_nodes, seed_nodes_s), 1),
            "rels_per_second": rounded(rate(seed_rels, seed_rels_s), 1),
        },
        "nodes_ratio": rounded(seed_nodes_s / batched_nodes_s if batched_nodes_s else None, 2),
        "rels_ratio": rounded(seed_rels_s / batched_rels_s if batched_rels_s else None, 2),
        #: Same nodes and relationships written: the ratio of the two total times.
        "ratio": rounded(seed_total / batched_total if batched_total else None, 2),
    }
