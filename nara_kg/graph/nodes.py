"""Chunk nodes: schema, idempotent upserts, and removal of nodes the input no longer has."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from neo4j import Driver

from nara_kg.graph.batches import write_batches, write_one
from nara_kg.model.schema import RECORD_TYPES, Index, Label, Prop, checked_label

#: Properties that the node writer must carry over: they are produced by later assets.
PRESERVED_PROPERTIES: tuple[str, ...] = (Prop.EMBEDDING, Prop.EMBEDDING_KEY)

SCHEMA_STATEMENTS: tuple[str, ...] = (
    f"CREATE CONSTRAINT {Index.CHUNK_ID_CONSTRAINT} IF NOT EXISTS "
    f"FOR (c:{Label.CHUNK}) REQUIRE c.{Prop.CHUNK_ID} IS UNIQUE",
    f"CREATE INDEX {Index.NA_ID} IF NOT EXISTS FOR (c:{Label.CHUNK}) ON (c.{Prop.NA_ID})",
    f"CREATE INDEX {Index.INCLUSIVE_START_DATE} IF NOT EXISTS "
    f"FOR (c:{Label.CHUNK}) ON (c.{Prop.INCLUSIVE_START_DATE})",
)


def ensure_node_schema(driver: Driver, database: str) -> None:
    for statement in SCHEMA_STATEMENTS:
        write_one(driver, database, statement)
    write_one(driver, database, "CALL db.awaitIndexes(300)")


def _upsert_statement(node_type: str) -> str:
    label = checked_label(node_type)
    others = [checked_label(t) for t in RECORD_TYPES if t != node_type]
    return f"""
UNWIND $rows AS row
MERGE (c:{Label.CHUNK} {{{Prop.CHUNK_ID}: row.props.{Prop.CHUNK_ID}}})
WITH c, row, c.{Prop.EMBEDDING} AS embedding, c.{Prop.EMBEDDING_KEY} AS embeddingKey
SET c = row.props
SET c.{Prop.EMBEDDING} = embedding, c.{Prop.EMBEDDING_KEY} = embeddingKey
SET c:{label}
REMOVE c:{":".join(others)}
FOREACH (_ IN CASE WHEN row.embed THEN [1] ELSE [] END | SET c:{Label.RECORD_WITH_TEXT})
FOREACH (_ IN CASE WHEN row.embed THEN [] ELSE [1] END | REMOVE c:{Label.RECORD_WITH_TEXT})
"""


#: The count the graph keeps of chunk nodes (answered from the count store).
CHUNK_COUNT = f"MATCH (c:{Label.CHUNK}) RETURN count(c) AS n"


def existing_row_hashes(driver: Driver, database: str) -> Iterator[tuple[str, str | None]]:
    """(chunkId, rowHash) of every chunk node, streamed (the graph may be large)."""
    with driver.session(database=database, default_access_mode="READ") as session:
        result = session.run(
            f"MATCH (c:{Label.CHUNK}) RETURN c.{Prop.CHUNK_ID} AS id, c.{Prop.ROW_HASH} AS h"
        )
        for record in result:
            yield record["id"], record["h"]


def upsert_nodes(
    driver: Driver, database: str, node_type: str, rows: Iterable[dict[str, Any]]
) -> int:
    """Rows are ``{"props": {...}, "embed": bool}``; props replace the node's properties except
    the embedding, which stays until the embedding asset decides it is stale."""
    return write_batches(driver, database, _upsert_statement(node_type), rows, batch_size=500)


def delete_chunks(driver: Driver, database: str, chunk_ids: Iterable[str]) -> int:
    return write_batches(
        driver,
        database,
        f"UNWIND $rows AS id MATCH (c:{Label.CHUNK} {{{Prop.CHUNK_ID}: id}}) DETACH DELETE c",
        chunk_ids,
        batch_size=2_000,
    )


#: What :func:`node_counts` counts per record type, in the order the table shows them.
NODE_COUNT_MEASURES: tuple[str, ...] = ("chunks", "records", "stubs")


def node_counts(driver: Driver, database: str) -> dict[str, int]:
    """Chunk nodes per record-type label, plus stubs and embedded-text nodes: a read of every
    chunk node (the node writer keeps them by difference between such reads,
    :mod:`nara_kg.build.node_tallies`)."""
    records, _, _ = driver.execute_query(
        f"""
MATCH (c:{Label.CHUNK})
RETURN c.{Prop.NODE_TYPE} AS type, count(*) AS chunks,
       sum(CASE WHEN c.{Prop.CHUNK_SEQ_ID} = 0 THEN 1 ELSE 0 END) AS records,
       sum(CASE WHEN c.{Prop.IS_STUB} THEN 1 ELSE 0 END) AS stubs
""",
        database_=database,
        routing_="r",
    )
    return {f"{r['type']}.{key}": r[key] for r in records for key in NODE_COUNT_MEASURES}


@dataclass(frozen=True)
class ExistingChunk:
    """What the graph holds of one chunk node: its row hash and what the node counts count."""

    row_hash: str | None
    node_type: str | None
    seq: int | None
    is_stub: bool


def chunks_of_records(driver: Driver, database: str, na_ids: list[int]) -> dict[str, ExistingChunk]:
    """chunkId -> the chunk nodes of the given records (through the naId index)."""
    records, _, _ = driver.execute_query(
        f"UNWIND $ids AS id MATCH (c:{Label.CHUNK} {{{Prop.NA_ID}: id}}) "
        f"RETURN c.{Prop.CHUNK_ID} AS id, c.{Prop.ROW_HASH} AS h, c.{Prop.NODE_TYPE} AS type, "
        f"c.{Prop.CHUNK_SEQ_ID} AS seq, coalesce(c.{Prop.IS_STUB}, false) AS stub",
        ids=na_ids,
        database_=database,
        routing_="r",
    )
    return {r["id"]: ExistingChunk(r["h"], r["type"], r["seq"], bool(r["stub"])) for r in records}


def type_label_counts(driver: Driver, database: str) -> dict[str, int]:
    """Chunk nodes per record-type label, each from the count store (no node is read)."""
    counts = {}
    for node_type in RECORD_TYPES:
        label = checked_label(node_type)
        records, _, _ = driver.execute_query(
            f"MATCH (c:{label}) RETURN count(c) AS n", database_=database, routing_="r"
        )
        counts[node_type] = int(records[0]["n"])
    return counts


def neighbour_records(
    driver: Driver, database: str, chunk_ids: list[str], rel_types: Iterable[str]
) -> set[int]:
    """The naIds of the chunks at the other end of the given chunk nodes' `rel_types`
    relationships (either direction)."""
    records, _, _ = driver.execute_query(
        f"UNWIND $ids AS id MATCH (:{Label.CHUNK} {{{Prop.CHUNK_ID}: id}})-[r]-"
        f"(other:{Label.CHUNK}) WHERE type(r) IN $types "
        f"RETURN DISTINCT other.{Prop.NA_ID} AS naId",
        ids=chunk_ids,
        types=list(rel_types),
        database_=database,
        routing_="r",
    )
    return {int(r["naId"]) for r in records if r["naId"] is not None}


def relationship_counts(driver: Driver, database: str, chunk_ids: list[str]) -> dict[str, int]:
    """Relationships per type that deleting the given chunk nodes would take with them."""
    records, _, _ = driver.execute_query(
        f"UNWIND $ids AS id MATCH (:{Label.CHUNK} {{{Prop.CHUNK_ID}: id}})-[r]-() "
        "WITH DISTINCT r RETURN type(r) AS type, count(r) AS n",
        ids=chunk_ids,
        database_=database,
        routing_="r",
    )
    return {str(r["type"]): int(r["n"]) for r in records}
