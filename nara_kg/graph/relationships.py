"""Making the relationships of one type in Neo4j equal a desired set, by difference."""

from __future__ import annotations

from dataclasses import dataclass

from neo4j import Driver

from nara_kg.graph.batches import write_batches
from nara_kg.model.edges import Edge
from nara_kg.model.schema import Label, Prop, checked_relationship


@dataclass(frozen=True)
class SyncResult:
    relationship: str
    desired: int
    added: int
    removed: int

    @property
    def unchanged(self) -> int:
        return self.desired - self.added


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


def sync_edges(driver: Driver, database: str, rel: str, desired: set[Edge]) -> SyncResult:
    rel_type = checked_relationship(rel)
    current = existing_edges(driver, database, rel_type)
    to_add = sorted(desired - current)
    to_remove = sorted(current - desired)
    # Both endpoints are looked up through the chunkId uniqueness constraint: no label scans.
    write_batches(
        driver,
        database,
        f"UNWIND $rows AS e "
        f"MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[0]}}) "
        f"MATCH (b:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[1]}}) "
        f"MERGE (a)-[:{rel_type}]->(b)",
        [list(e) for e in to_add],
        batch_size=5_000,
    )
    write_batches(
        driver,
        database,
        f"UNWIND $rows AS e "
        f"MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[0]}})-[r:{rel_type}]->"
        f"(b:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[1]}}) DELETE r",
        [list(e) for e in to_remove],
        batch_size=5_000,
    )
    return SyncResult(rel_type, len(desired), len(to_add), len(to_remove))
