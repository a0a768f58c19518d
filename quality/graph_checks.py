"""Checks of the written graph, in Cypher: every statement of the quality checks is here.

Statements are parameterized; labels, relationship types and property names come from
:mod:`nara_kg.model.schema` only. A *probe* is a statement that returns the offending rows
(no ORDER BY, no LIMIT): it is run once wrapped in ``count(*)`` and once with ``LIMIT $limit``
for a sample.

The scoped statements (`..._OF`) take `$ids`, the naIds of the records a change can reach, and
find each record's nodes through the naId index: what they read grows with the change, not the
graph. The totals they are checked with come from Neo4j's count store (`MATCH (n:Label)` and
`MATCH ()-[r:TYPE]->()` counted alone are answered without reading nodes or relationships).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, LiteralString, cast

from neo4j import Driver, Query

from nara_kg.graph import embeddings as embedding_cypher
from nara_kg.graph.embeddings import count_pending
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import iter_chunks, record_links
from nara_kg.model import edges
from nara_kg.model.schema import RECORD_TYPES, CommunityProp, Index, Label, Prop, Rel
from nara_kg.model.tables import Col
from quality.names import SAMPLE_SIZE

CHUNK = Label.CHUNK.value
WITH_TEXT = Label.RECORD_WITH_TEXT.value
COMMUNITY = Label.COMMUNITY.value
NEXT = Rel.NEXT.value
INCLUDES = Rel.INCLUDES.value
NA_ID = Prop.NA_ID
CHUNK_ID = Prop.CHUNK_ID
SEQ = Prop.CHUNK_SEQ_ID
NODE_TYPE = Prop.NODE_TYPE
ANCESTORS = Prop.ANCESTORS
EMBEDDING = Prop.EMBEDDING


@dataclass(frozen=True)
class Probe:
    name: str
    description: str
    cypher: str


@dataclass
class GraphCheckOutcome:
    passed: bool
    #: Numbers worth a metadata entry of their own.
    measures: dict[str, Any] = field(default_factory=dict)
    #: One row per sub-check: what it tests, how many offenders, passed.
    findings: list[dict[str, Any]] = field(default_factory=list)
    #: Offending rows, up to SAMPLE_SIZE per failed probe.
    sample: list[dict[str, Any]] = field(default_factory=list)
    #: Extra tables (name -> rows), e.g. counts per type.
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _read(driver: Driver, database: str, statement: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(
        Query(cast(LiteralString, statement)), params, database_=database, routing_="r"
    )
    return [record.data() for record in records]


def run_probes(
    driver: Driver, database: str, probes: list[Probe], limit: int = SAMPLE_SIZE, **params: Any
) -> GraphCheckOutcome:
    outcome = GraphCheckOutcome(passed=True)
    for probe in probes:
        count = _read(
            driver, database, f"CALL () {{ {probe.cypher} }} RETURN count(*) AS n", **params
        )[0]["n"]
        outcome.findings.append(
            {"check": probe.name, "what": probe.description, "offending": count, "ok": count == 0}
        )
        outcome.measures[probe.name] = count
        if count:
            outcome.passed = False
            for row in _read(
                driver, database, f"{probe.cypher} LIMIT $limit", limit=limit, **params
            ):
                outcome.sample.append({"check": probe.name, **row})
    return outcome


# --------------------------------------------------------------------------- nodes vs Parquet
GRAPH_COUNTS = f"""
MATCH (c:{CHUNK})
RETURN c.{NODE_TYPE} AS type, count(*) AS chunks,
       count(CASE WHEN c:{WITH_TEXT} THEN 1 END) AS withText
"""

MISLABELLED = Probe(
    "mislabelled_nodes",
    "Chunk nodes without a nodeType or without their record-type label",
    f"MATCH (c:{CHUNK}) WHERE c.{NODE_TYPE} IS NULL OR NOT c.{NODE_TYPE} IN labels(c) "
    f"RETURN c.{CHUNK_ID} AS chunkId, c.{NODE_TYPE} AS nodeType, labels(c) AS labels",
)


def parquet_chunk_counts(layout: WorkLayout) -> dict[str, dict[str, int]]:
    """nodeType -> {chunks, embed} over the chunks of the chosen records."""
    counts: dict[str, Counter[str]] = {}
    for row in iter_chunks(layout, [Col.NODE_TYPE, Col.EMBED]):
        entry = counts.setdefault(row[Col.NODE_TYPE], Counter())
        entry["chunks"] += 1
        entry["embed"] += int(bool(row[Col.EMBED]))
    return {t: {"chunks": c["chunks"], "embed": c["embed"]} for t, c in counts.items()}


def compare_counts(
    parquet: Mapping[str, Mapping[str, int]], graph: Mapping[str, Mapping[str, int]]
) -> list[dict[str, Any]]:
    """One row per type: chunk rows vs chunk nodes, embeddable rows vs recordWithText nodes."""
    rows = []
    for node_type in sorted(set(parquet) | set(graph), key=str):
        p = parquet.get(node_type, {})
        g = graph.get(node_type, {})
        row = {
            "type": node_type,
            "parquet_chunks": p.get("chunks", 0),
            "graph_chunks": g.get("chunks", 0),
            "parquet_embed": p.get("embed", 0),
            "graph_recordWithText": g.get("withText", 0),
        }
        row["ok"] = (
            row["parquet_chunks"] == row["graph_chunks"]
            and row["parquet_embed"] == row["graph_recordWithText"]
        )
        rows.append(row)
    return rows


def check_node_counts(
    driver: Driver,
    database: str,
    layout: WorkLayout,
    parquet: Mapping[str, Mapping[str, int]] | None = None,
) -> GraphCheckOutcome:
    """Every chunk node against the chosen chunk rows (`parquet`: their counts per type, read
    from `layout` when not given)."""
    parquet = parquet_chunk_counts(layout) if parquet is None else parquet
    graph = {
        row["type"]: {"chunks": row["chunks"], "withText": row["withText"]}
        for row in _read(driver, database, GRAPH_COUNTS)
    }
    by_type = compare_counts(parquet, graph)
    outcome = run_probes(driver, database, [MISLABELLED])
    parquet_total = sum(p["chunks"] for p in parquet.values())
    graph_total = sum(g["chunks"] for g in graph.values())
    outcome.passed = outcome.passed and all(row["ok"] for row in by_type)
    outcome.measures.update(
        {
            "parquet_chunk_rows": parquet_total,
            "graph_chunk_nodes": graph_total,
            "parquet_embeddable_rows": sum(p["embed"] for p in parquet.values()),
            "graph_recordWithText_nodes": sum(g["withText"] for g in graph.values()),
            "types_mismatched": sum(1 for row in by_type if not row["ok"]),
        }
    )
    outcome.findings.insert(
        0,
        {
            "check": "counts_by_type",
            "what": "chunk nodes and recordWithText nodes per type = chunk rows per type",
            "offending": outcome.measures["types_mismatched"],
            "ok": outcome.measures["types_mismatched"] == 0,
        },
    )
    outcome.tables["counts_by_type"] = by_type
    return outcome


#: Chunk nodes per record-type label, each count from the count store.
LABEL_COUNTS = (
    "CALL () { "
    + " UNION ALL ".join(
        f"MATCH (c:{node_type}) RETURN '{node_type}' AS type, count(c) AS chunks"
        for node_type in RECORD_TYPES
    )
    + " } RETURN type, chunks"
)
COUNT_CHUNKS = f"MATCH (c:{CHUNK}) RETURN count(c) AS n"

MISLABELLED_OF = Probe(
    MISLABELLED.name,
    MISLABELLED.description + " (among the changed records' nodes)",
    f"UNWIND $ids AS id MATCH (c:{CHUNK} {{{NA_ID}: id}}) "
    f"WHERE c.{NODE_TYPE} IS NULL OR NOT c.{NODE_TYPE} IN labels(c) "
    f"RETURN c.{CHUNK_ID} AS chunkId, c.{NODE_TYPE} AS nodeType, labels(c) AS labels",
)
NODES_OF_RECORDS = f"""
UNWIND $ids AS id
MATCH (c:{CHUNK} {{{NA_ID}: id}})
RETURN c.{CHUNK_ID} AS chunkId, c.{NODE_TYPE} AS nodeType, c:{WITH_TEXT} AS withText
"""


def compare_records(
    parquet: list[dict[str, Any]], graph: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The chunks of the changed records that differ between their chunk rows (chunkId,
    nodeType, embed) and their nodes (chunkId, nodeType, recordWithText): missing nodes, nodes
    of no row, nodes of another type or marking."""
    rows = {row["chunkId"]: row for row in parquet}
    nodes = {row["chunkId"]: row for row in graph}
    offending: list[dict[str, Any]] = []
    for chunk in sorted(set(rows) | set(nodes)):
        row, node = rows.get(chunk), nodes.get(chunk)
        if node is None:
            offending.append({"chunkId": chunk, "problem": "no node for the chunk row"})
        elif row is None:
            offending.append({"chunkId": chunk, "problem": "node of no chosen chunk row"})
        elif node["nodeType"] != row["nodeType"] or bool(node["withText"]) != bool(row["embed"]):
            offending.append(
                {
                    "chunkId": chunk,
                    "problem": "type or recordWithText differs from the row",
                    "row": f"{row['nodeType']} embed={bool(row['embed'])}",
                    "node": f"{node['nodeType']} recordWithText={bool(node['withText'])}",
                }
            )
    return offending


def _finding(check: str, what: str, offending: int) -> dict[str, Any]:
    return {"check": check, "what": what, "offending": offending, "ok": offending == 0}


def check_node_counts_of(
    driver: Driver,
    database: str,
    ids: list[int],
    rows: list[dict[str, Any]],
    expected: Mapping[str, Mapping[str, int]],
) -> GraphCheckOutcome:
    """The changed records' nodes against their chunk rows (`rows`: chunkId, nodeType, embed),
    and the whole graph's chunk nodes per type label and recordWithText nodes, from the count
    store, against `expected` (type -> chunks, embed: every chosen chunk row)."""
    outcome = run_probes(driver, database, [MISLABELLED_OF], ids=ids)
    offending = compare_records(rows, _read(driver, database, NODES_OF_RECORDS, ids=ids))
    labels = {row["type"]: row["chunks"] for row in _read(driver, database, LABEL_COUNTS)}
    by_type = []
    for node_type in sorted(set(expected) | {t for t, n in labels.items() if n}, key=str):
        row = {
            "type": node_type,
            "parquet_chunks": expected.get(node_type, {}).get("chunks", 0),
            "graph_chunks": labels.get(node_type, 0),
        }
        row["ok"] = row["parquet_chunks"] == row["graph_chunks"]
        by_type.append(row)
    embeddable = sum(e.get("embed", 0) for e in expected.values())
    with_text = _read(driver, database, EMBEDDING_TOTALS)[0]["n"]
    mismatched = sum(1 for row in by_type if not row["ok"])
    outcome.findings[0:0] = [
        _finding(
            "counts_by_type",
            "chunk nodes per record-type label (count store) = chunk rows per type",
            mismatched,
        ),
        _finding(
            "recordWithText_total",
            "recordWithText nodes (count store) = rows marked for embedding",
            abs(with_text - embeddable),
        ),
        _finding(
            "changed_records_match",
            "the changed records' nodes = their chunk rows (chunkId, type, recordWithText)",
            len(offending),
        ),
    ]
    outcome.sample.extend({"check": "changed_records_match", **o} for o in offending[:SAMPLE_SIZE])
    outcome.passed = all(f["ok"] for f in outcome.findings)
    outcome.measures.update(
        {
            "parquet_chunk_rows": sum(e.get("chunks", 0) for e in expected.values()),
            "graph_chunk_nodes": _read(driver, database, COUNT_CHUNKS)[0]["n"],
            "parquet_embeddable_rows": embeddable,
            "graph_recordWithText_nodes": with_text,
            "types_mismatched": mismatched,
            "changed_records_match": len(offending),
        }
    )
    outcome.tables["counts_by_type"] = by_type
    return outcome


# --------------------------------------------------------------------------- embeddings
EMBEDDING_TOTALS = f"MATCH (c:{WITH_TEXT}) RETURN count(c) AS n"

MISSING_EMBEDDING = Probe(
    "missing_embedding",
    "recordWithText nodes without textEmbedding",
    f"MATCH (c:{WITH_TEXT}) WHERE c.{EMBEDDING} IS NULL "
    f"RETURN c.{CHUNK_ID} AS chunkId, c.{NODE_TYPE} AS nodeType",
)
WRONG_DIMENSION = Probe(
    "wrong_dimension",
    "recordWithText nodes whose textEmbedding is not of the model's dimension",
    f"MATCH (c:{WITH_TEXT}) WHERE c.{EMBEDDING} IS NOT NULL AND size(c.{EMBEDDING}) <> $dimension "
    f"RETURN c.{CHUNK_ID} AS chunkId, c.{NODE_TYPE} AS nodeType, size(c.{EMBEDDING}) AS dimension",
)


def check_embeddings(
    driver: Driver, database: str, dimension: int, model_key: str
) -> GraphCheckOutcome:
    outcome = run_probes(
        driver, database, [MISSING_EMBEDDING, WRONG_DIMENSION], dimension=dimension
    )
    # Stale = embedded from another text or model: the embedding writer's own definition.
    stale = count_pending(driver, database, model_key)
    outcome.findings.append(
        {
            "check": "stale_embedding",
            "what": "recordWithText nodes whose embedding is not of their current text and model",
            "offending": stale,
            "ok": stale == 0,
        }
    )
    outcome.passed = outcome.passed and stale == 0
    outcome.measures.update(
        {
            "recordWithText_nodes": _read(driver, database, EMBEDDING_TOTALS)[0]["n"],
            "dimension_expected": dimension,
            "stale_embedding": stale,
        }
    )
    return outcome


MISSING_EMBEDDING_OF = Probe(
    MISSING_EMBEDDING.name,
    MISSING_EMBEDDING.description + " (among the changed records' chunks)",
    f"UNWIND $ids AS id MATCH (c:{CHUNK}:{WITH_TEXT} {{{NA_ID}: id}}) "
    f"WHERE c.{EMBEDDING} IS NULL "
    f"RETURN c.{CHUNK_ID} AS chunkId, c.{NODE_TYPE} AS nodeType",
)
WRONG_DIMENSION_OF = Probe(
    WRONG_DIMENSION.name,
    WRONG_DIMENSION.description + " (among the changed records' chunks)",
    f"UNWIND $ids AS id MATCH (c:{CHUNK}:{WITH_TEXT} {{{NA_ID}: id}}) "
    f"WHERE c.{EMBEDDING} IS NOT NULL AND size(c.{EMBEDDING}) <> $dimension "
    f"RETURN c.{CHUNK_ID} AS chunkId, c.{NODE_TYPE} AS nodeType, size(c.{EMBEDDING}) AS dimension",
)
#: Stale as the embedding writer defines it (its own condition, not a copy).
STALE_EMBEDDING_OF = Probe(
    "stale_embedding",
    "recordWithText nodes whose embedding is not of their current text and model "
    "(among the changed records' chunks)",
    f"UNWIND $ids AS id MATCH (c:{CHUNK}:{WITH_TEXT} {{{NA_ID}: id}}) "
    f"WHERE {embedding_cypher._STALE} "
    f"RETURN c.{CHUNK_ID} AS chunkId, c.{NODE_TYPE} AS nodeType",
)
COUNT_WITH_TEXT_OF = (
    f"UNWIND $ids AS id MATCH (c:{CHUNK}:{WITH_TEXT} {{{NA_ID}: id}}) RETURN count(c) AS n"
)


def check_embeddings_of(
    driver: Driver, database: str, ids: list[int], dimension: int, model_key: str
) -> GraphCheckOutcome:
    """:func:`check_embeddings` over the chunks of the records `ids`."""
    outcome = run_probes(
        driver,
        database,
        [MISSING_EMBEDDING_OF, WRONG_DIMENSION_OF, STALE_EMBEDDING_OF],
        ids=ids,
        dimension=dimension,
        model=model_key,
    )
    outcome.measures.update(
        {
            "recordWithText_nodes": _read(driver, database, EMBEDDING_TOTALS)[0]["n"],
            "recordWithText_nodes_checked": _read(driver, database, COUNT_WITH_TEXT_OF, ids=ids)[0][
                "n"
            ],
            "dimension_expected": dimension,
        }
    )
    return outcome


# --------------------------------------------------------------------------- indexes
SHOW_INDEXES = """
SHOW INDEXES YIELD name, type, state, populationPercent, labelsOrTypes, properties, options
WHERE name IN $names
RETURN name, type, state, populationPercent, labelsOrTypes, properties, options
"""


def check_indexes(driver: Driver, database: str, dimension: int) -> GraphCheckOutcome:
    """The vector and full-text indexes exist and are ONLINE; the vector index has the model's
    dimension (an index of another width would match nothing)."""
    found = {
        row["name"]: row
        for row in _read(driver, database, SHOW_INDEXES, names=[Index.VECTOR, Index.FULLTEXT])
    }
    outcome = GraphCheckOutcome(passed=True)
    for name, kind in ((Index.VECTOR, "VECTOR"), (Index.FULLTEXT, "FULLTEXT")):
        info = found.get(name)
        config = ((info or {}).get("options") or {}).get("indexConfig") or {}
        dims = config.get("vector.dimensions")
        problems = []
        if info is None:
            problems.append("missing")
        else:
            if info["type"] != kind:
                problems.append(f"type {info['type']}, expected {kind}")
            if info["state"] != "ONLINE":
                problems.append(f"state {info['state']}")
            if kind == "VECTOR" and dims is not None and int(dims) != dimension:
                problems.append(f"{dims} dimensions, model has {dimension}")
        outcome.findings.append(
            {
                "index": name,
                "type": (info or {}).get("type"),
                "state": (info or {}).get("state"),
                "populationPercent": (info or {}).get("populationPercent"),
                "labelsOrTypes": (info or {}).get("labelsOrTypes"),
                "properties": (info or {}).get("properties"),
                "dimensions": dims,
                "problems": "; ".join(problems) or "none",
                "ok": not problems,
            }
        )
        outcome.measures[f"{name}_state"] = (info or {}).get("state") or "MISSING"
        outcome.passed = outcome.passed and not problems
    outcome.measures["vector_dimensions_expected"] = dimension
    return outcome


# --------------------------------------------------------------------------- Includes
MULTIPLE_PARENTS = Probe(
    "more_than_one_includes",
    "records with more than one incoming Includes",
    f"MATCH (c:{CHUNK})<-[r:{INCLUDES}]-(:{CHUNK}) WITH c, count(r) AS incoming "
    f"WHERE incoming > 1 "
    f"RETURN c.{CHUNK_ID} AS chunkId, c.{NA_ID} AS naId, incoming",
)
MISSING_INCLUDES = Probe(
    "missing_includes",
    "first chunks whose nearest ancestor (ancestors[0]) is in the graph but does not Include "
    "them (but for the links broken to break an ancestor cycle, `$brokenLinks`)",
    f"MATCH (c:{CHUNK}) WHERE c.{SEQ} = 0 AND size(coalesce(c.{ANCESTORS}, [])) > 0 "
    f"AND c.{ANCESTORS}[0] <> c.{NA_ID} AND NOT [c.{NA_ID}, c.{ANCESTORS}[0]] IN $brokenLinks "
    f"MATCH (p:{CHUNK} {{{NA_ID}: c.{ANCESTORS}[0], {SEQ}: 0}}) "
    f"WHERE NOT (p)-[:{INCLUDES}]->(c) "
    f"RETURN c.{CHUNK_ID} AS chunkId, p.{CHUNK_ID} AS expectedParent",
)
WRONG_INCLUDES = Probe(
    "wrong_includes",
    "Includes that do not link the nearest ancestor's first chunk to the record's first chunk",
    f"MATCH (p:{CHUNK})-[:{INCLUDES}]->(c:{CHUNK}) "
    f"WHERE p.{SEQ} <> 0 OR c.{SEQ} <> 0 OR c.{ANCESTORS} IS NULL "
    f"OR size(c.{ANCESTORS}) = 0 OR c.{ANCESTORS}[0] <> p.{NA_ID} "
    f"RETURN p.{CHUNK_ID} AS fromChunk, c.{CHUNK_ID} AS toChunk",
)
INCLUDES_PROBES: list[Probe] = [MULTIPLE_PARENTS, MISSING_INCLUDES, WRONG_INCLUDES]
#: Every Includes links two chunks: counted alone, from the count store.
COUNT_INCLUDES = f"MATCH ()-[r:{INCLUDES}]->() RETURN count(r) AS n"


def broken_ancestor_links(layout: WorkLayout) -> dict[int, int]:
    """child naId -> parent naId of each parent link the Includes writer drops to break an
    ancestor cycle (the same rule: `edges.break_cycles`)."""
    links = record_links(layout)
    parents = edges.parent_links(links, {link.na_id for link in links})
    _, cycles = edges.break_cycles(parents)
    return {cycle[0]: parents[cycle[0]] for cycle in cycles}


def check_includes(
    driver: Driver, database: str, broken_links: Mapping[int, int] | None = None
) -> GraphCheckOutcome:
    """`broken_links`: child naId -> parent naId of the links dropped to break ancestor cycles
    (`nara_kg.model.edges.break_cycles`); those records keep `ancestors[0]` but no Includes."""
    broken = [[child, parent] for child, parent in sorted((broken_links or {}).items())]
    outcome = run_probes(driver, database, INCLUDES_PROBES, brokenLinks=broken)
    outcome.measures["ancestor_links_broken"] = len(broken)
    outcome.measures["includes_relationships"] = _read(driver, database, COUNT_INCLUDES)[0]["n"]
    return outcome


MULTIPLE_PARENTS_OF = Probe(
    MULTIPLE_PARENTS.name,
    MULTIPLE_PARENTS.description + " (among the records the change reaches)",
    f"UNWIND $ids AS id MATCH (c:{CHUNK} {{{NA_ID}: id}})<-[r:{INCLUDES}]-(:{CHUNK}) "
    f"WITH c, count(r) AS incoming WHERE incoming > 1 "
    f"RETURN c.{CHUNK_ID} AS chunkId, c.{NA_ID} AS naId, incoming",
)
MISSING_INCLUDES_OF = Probe(
    MISSING_INCLUDES.name,
    MISSING_INCLUDES.description + " (among the records the change reaches)",
    f"UNWIND $ids AS id MATCH (c:{CHUNK} {{{NA_ID}: id}}) "
    f"WHERE c.{SEQ} = 0 AND size(coalesce(c.{ANCESTORS}, [])) > 0 "
    f"AND c.{ANCESTORS}[0] <> c.{NA_ID} AND NOT [c.{NA_ID}, c.{ANCESTORS}[0]] IN $brokenLinks "
    f"MATCH (p:{CHUNK} {{{NA_ID}: c.{ANCESTORS}[0], {SEQ}: 0}}) "
    f"WHERE NOT (p)-[:{INCLUDES}]->(c) "
    f"RETURN c.{CHUNK_ID} AS chunkId, p.{CHUNK_ID} AS expectedParent",
)
WRONG_INCLUDES_OF = Probe(
    WRONG_INCLUDES.name,
    WRONG_INCLUDES.description + " (into or out of the records the change reaches)",
    f"UNWIND $ids AS id MATCH (x:{CHUNK} {{{NA_ID}: id}}) "
    f"CALL (x) {{ MATCH (x)-[:{INCLUDES}]->(c:{CHUNK}) RETURN x AS p, c "
    f"UNION MATCH (p:{CHUNK})-[:{INCLUDES}]->(x) RETURN p, x AS c }} "
    f"WITH DISTINCT p, c "
    f"WHERE p.{SEQ} <> 0 OR c.{SEQ} <> 0 OR c.{ANCESTORS} IS NULL "
    f"OR size(c.{ANCESTORS}) = 0 OR c.{ANCESTORS}[0] <> p.{NA_ID} "
    f"RETURN p.{CHUNK_ID} AS fromChunk, c.{CHUNK_ID} AS toChunk",
)
INCLUDES_PROBES_OF: list[Probe] = [MULTIPLE_PARENTS_OF, MISSING_INCLUDES_OF, WRONG_INCLUDES_OF]


def check_includes_of(
    driver: Driver, database: str, ids: list[int], broken_links: Mapping[int, int]
) -> GraphCheckOutcome:
    """:func:`check_includes` over the Includes into and out of the records `ids`
    (`broken_links`: those of the cycles among them)."""
    broken = [[child, parent] for child, parent in sorted(broken_links.items())]
    outcome = run_probes(driver, database, INCLUDES_PROBES_OF, ids=ids, brokenLinks=broken)
    outcome.measures["ancestor_links_broken"] = len(broken)
    outcome.measures["includes_relationships"] = _read(driver, database, COUNT_INCLUDES)[0]["n"]
    return outcome


# --------------------------------------------------------------------------- Next
WRONG_NEXT = Probe(
    "dangling_next",
    "Next that does not link chunk k to chunk k+1 of the same naId",
    f"MATCH (a:{CHUNK})-[:{NEXT}]->(b:{CHUNK}) "
    f"WHERE a.{NA_ID} <> b.{NA_ID} OR b.{SEQ} <> a.{SEQ} + 1 "
    f"RETURN a.{CHUNK_ID} AS fromChunk, b.{CHUNK_ID} AS toChunk",
)
MISSING_NEXT = Probe(
    "missing_next",
    "chunks k > 0 without an incoming Next",
    f"MATCH (c:{CHUNK}) WHERE c.{SEQ} > 0 AND NOT (:{CHUNK})-[:{NEXT}]->(c) "
    f"RETURN c.{CHUNK_ID} AS chunkId, c.{NA_ID} AS naId, c.{SEQ} AS chunkSeqId",
)
BRANCHING_NEXT = Probe(
    "branching_next",
    "chunks with more than one incoming or outgoing Next",
    f"MATCH (c:{CHUNK}) "
    f"WITH c, COUNT {{ (c)-[:{NEXT}]->() }} AS outgoing, COUNT {{ ()-[:{NEXT}]->(c) }} AS incoming "
    f"WHERE outgoing > 1 OR incoming > 1 "
    f"RETURN c.{CHUNK_ID} AS chunkId, incoming, outgoing",
)
NEXT_PROBES: list[Probe] = [WRONG_NEXT, MISSING_NEXT, BRANCHING_NEXT]
#: Every Next links two chunks: counted alone, from the count store.
COUNT_NEXT = f"MATCH ()-[r:{NEXT}]->() RETURN count(r) AS n"


def check_next(driver: Driver, database: str) -> GraphCheckOutcome:
    outcome = run_probes(driver, database, NEXT_PROBES)
    outcome.measures["next_relationships"] = _read(driver, database, COUNT_NEXT)[0]["n"]
    return outcome


WRONG_NEXT_OF = Probe(
    WRONG_NEXT.name,
    WRONG_NEXT.description + " (into or out of the changed records' chunks)",
    f"UNWIND $ids AS id MATCH (x:{CHUNK} {{{NA_ID}: id}}) "
    f"CALL (x) {{ MATCH (x)-[:{NEXT}]->(b:{CHUNK}) RETURN x AS a, b "
    f"UNION MATCH (a:{CHUNK})-[:{NEXT}]->(x) RETURN a, x AS b }} "
    f"WITH DISTINCT a, b "
    f"WHERE a.{NA_ID} <> b.{NA_ID} OR b.{SEQ} <> a.{SEQ} + 1 "
    f"RETURN a.{CHUNK_ID} AS fromChunk, b.{CHUNK_ID} AS toChunk",
)
MISSING_NEXT_OF = Probe(
    MISSING_NEXT.name,
    MISSING_NEXT.description + " (among the changed records' chunks)",
    f"UNWIND $ids AS id MATCH (c:{CHUNK} {{{NA_ID}: id}}) "
    f"WHERE c.{SEQ} > 0 AND NOT (:{CHUNK})-[:{NEXT}]->(c) "
    f"RETURN c.{CHUNK_ID} AS chunkId, c.{NA_ID} AS naId, c.{SEQ} AS chunkSeqId",
)
BRANCHING_NEXT_OF = Probe(
    BRANCHING_NEXT.name,
    BRANCHING_NEXT.description + " (among the changed records' chunks)",
    f"UNWIND $ids AS id MATCH (c:{CHUNK} {{{NA_ID}: id}}) "
    f"WITH c, COUNT {{ (c)-[:{NEXT}]->() }} AS outgoing, COUNT {{ ()-[:{NEXT}]->(c) }} AS incoming "
    f"WHERE outgoing > 1 OR incoming > 1 "
    f"RETURN c.{CHUNK_ID} AS chunkId, incoming, outgoing",
)
NEXT_PROBES_OF: list[Probe] = [WRONG_NEXT_OF, MISSING_NEXT_OF, BRANCHING_NEXT_OF]


def check_next_of(
    driver: Driver, database: str, ids: list[int], expected_total: int
) -> GraphCheckOutcome:
    """:func:`check_next` over the chains of the records `ids`, and the whole graph's Next
    count (count store) against `expected_total` (chunks less records, over every chosen
    record)."""
    outcome = run_probes(driver, database, NEXT_PROBES_OF, ids=ids)
    total = _read(driver, database, COUNT_NEXT)[0]["n"]
    outcome.findings.append(
        _finding(
            "next_total",
            "Next relationships (count store) = chunks less records, over every chosen record",
            abs(total - expected_total),
        )
    )
    outcome.passed = outcome.passed and total == expected_total
    outcome.measures["next_relationships"] = total
    outcome.measures["next_relationships_expected"] = expected_total
    return outcome


# --------------------------------------------------------------------------- communities
COUNT_COMMUNITIES = f"MATCH (c:{COMMUNITY}) RETURN count(c) AS n"
COMMUNITY_WITHOUT_REPORT = Probe(
    "community_without_report",
    "Community nodes without a report (report property missing or blank)",
    f"MATCH (c:{COMMUNITY}) "
    f"WHERE c[$reportProperty] IS NULL OR trim(toString(c[$reportProperty])) = '' "
    f"RETURN c[$idProperty] AS community, c.{CommunityProp.LEVEL} AS level, "
    f"c.{CommunityProp.SIZE} AS size",
)


def check_community_reports(
    driver: Driver,
    database: str,
    report_property: str = CommunityProp.SUMMARY,
    id_property: str = CommunityProp.ID,
) -> GraphCheckOutcome:
    """Every Community node has a report. Property names travel as parameters (`c[$name]`)."""
    outcome = run_probes(
        driver,
        database,
        [COMMUNITY_WITHOUT_REPORT],
        reportProperty=report_property,
        idProperty=id_property,
    )
    outcome.measures["communities"] = _read(driver, database, COUNT_COMMUNITIES)[0]["n"]
    outcome.measures["report_property"] = report_property
    return outcome
