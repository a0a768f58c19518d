"""Relationships between chunk nodes: read back (all of a type, or those of some records),
merged and deleted by chunkId pairs, counted from the count store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from neo4j import Driver

from nara_kg.graph.batches import write_batches
from nara_kg.model.edges import Edge
from nara_kg.model.schema import Label, Prop, checked_relationship


def existing_edges(driver: Driver, database: str, rel: str) -> set[Edge]:
    rel_type = checked_relationship(rel)
    edges: set[Edge] = set()
    with driver.session(database=database, default_access_mode="READ") as session:
        result = session.run(
            f"MATCH (a:{Label.CHUNK})-[:{rel_type}]->(b:{Label.CHUNK}) "
            f"RETURN a.{Prop.CHUNK_ID} AS a, b.{Prop.CHUNK_ID} AS b"
        )
        for record in result:
            edges.add((record["a"], record["b"]))
    return edges


def edges_into(driver: Driver, database: str, rel: str, targets: Sequence[str]) -> set[Edge]:
    """The `rel` relationships ending at the given chunks (looked up by chunkId)."""
    rel_type = checked_relationship(rel)
    records, _, _ = driver.execute_query(
        f"UNWIND $ids AS id MATCH (a:{Label.CHUNK})-[:{rel_type}]->"
        f"(b:{Label.CHUNK} {{{Prop.CHUNK_ID}: id}}) "
        f"RETURN a.{Prop.CHUNK_ID} AS a, b.{Prop.CHUNK_ID} AS b",
        ids=list(targets),
        database_=database,
        routing_="r",
    )
    return {(r["a"], r["b"]) for r in records}


def edges_from_records(driver: Driver, database: str, rel: str, na_ids: Sequence[int]) -> set[Edge]:
    """The `rel` relationships leaving any chunk of the given records (through the naId index)."""
    rel_type = checked_relationship(rel)
    records, _, _ = driver.execute_query(
        f"UNWIND $ids AS id MATCH (a:{Label.CHUNK} {{{Prop.NA_ID}: id}})-[:{rel_type}]->"
        f"(b:{Label.CHUNK}) RETURN a.{Prop.CHUNK_ID} AS a, b.{Prop.CHUNK_ID} AS b",
        ids=list(na_ids),
        database_=database,
        routing_="r",
    )
    return {(r["a"], r["b"]) for r in records}


#: Which end of a relationship names the record a range is of (:func:`edges_at_record_range`).
RangeEnd = Literal["source", "target"]


def edges_at_record_range(
    driver: Driver,
    database: str,
    rels: Sequence[str],
    after: int | None,
    upto: int | None,
    *,
    end: RangeEnd,
) -> dict[str, set[Edge]]:
    """The relationships of the types `rels` whose `end` is a chunk of a record with a naId
    above `after` and at most `upto` (None: unbounded), by type: one range seek on the naId
    index for all the types, so that a range costs one query however many types it compares."""
    rel_types = [checked_relationship(rel) for rel in rels]
    node = {"source": "a", "target": "b"}[end]
    bounds = [
        *([f"{node}.{Prop.NA_ID} > $after"] if after is not None else []),
        *([f"{node}.{Prop.NA_ID} <= $upto"] if upto is not None else []),
    ]
    where = f"WHERE {' AND '.join(bounds)} " if bounds else ""
    records, _, _ = driver.execute_query(
        f"MATCH (a:{Label.CHUNK})-[r:{'|'.join(rel_types)}]->(b:{Label.CHUNK}) {where}"
        f"RETURN type(r) AS rel, a.{Prop.CHUNK_ID} AS a, b.{Prop.CHUNK_ID} AS b",
        after=after,
        upto=upto,
        database_=database,
        routing_="r",
    )
    by_type: dict[str, set[Edge]] = {rel: set() for rel in rel_types}
    for record in records:
        by_type[record["rel"]].add((record["a"], record["b"]))
    return by_type


def merge_edges(driver: Driver, database: str, rel: str, edges: Sequence[Edge]) -> int:
    """MERGE each edge; both ends are looked up through the chunkId constraint."""
    rel_type = checked_relationship(rel)
    return write_batches(
        driver,
        database,
        f"UNWIND $rows AS e "
        f"MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[0]}}) "
        f"MATCH (b:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[1]}}) "
        f"MERGE (a)-[:{rel_type}]->(b)",
        [list(e) for e in edges],
        batch_size=5_000,
    )


def delete_edges(driver: Driver, database: str, rel: str, edges: Sequence[Edge]) -> int:
    rel_type = checked_relationship(rel)
    return write_batches(
        driver,
        database,
        f"UNWIND $rows AS e "
        f"MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[0]}})-[r:{rel_type}]->"
        f"(b:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[1]}}) DELETE r",
        [list(e) for e in edges],
        batch_size=5_000,
    )


def count_statement(rel: str) -> str:
    """The count the graph keeps of relationships of one type (the count store answers)."""
    return f"MATCH ()-[r:{checked_relationship(rel)}]->() RETURN count(r) AS n"


def edge_concern(rel_type: str) -> str:
    """The writer's concern in :mod:`nara_kg.build.sync_state` for one relationship type."""
    return f"relationships-{checked_relationship(rel_type)}"
