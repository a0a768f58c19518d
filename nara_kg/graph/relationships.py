"""Making the relationships of one type in Neo4j equal a desired set, by difference."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from neo4j import Driver

from nara_kg.graph import sync_state
from nara_kg.graph.batches import write_batches
from nara_kg.ingest.layout import WorkLayout
from nara_kg.model.edges import Edge
from nara_kg.model.schema import Label, Prop, checked_relationship


@dataclass(frozen=True)
class SyncResult:
    relationship: str
    desired: int
    added: int
    removed: int
    #: "snapshot" (the last complete write, which the graph still holds) or "graph" (read back).
    existing_from: str = "graph"

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


def count_statement(rel: str) -> str:
    """The count the graph keeps of relationships of one type (the count store answers)."""
    return f"MATCH ()-[r:{checked_relationship(rel)}]->() RETURN count(r) AS n"


def edge_concern(rel_type: str) -> str:
    """The writer's concern in :mod:`nara_kg.graph.sync_state` for one relationship type."""
    return f"relationships-{checked_relationship(rel_type)}"


#: The snapshot's columns: the chunkIds of both ends.
_EDGE_COLUMNS = ("source", "target")


def _current(
    driver: Driver, database: str, rel_type: str, synced: sync_state.SyncedSet | None
) -> tuple[set[Edge], str]:
    table = synced.trusted() if synced is not None else None
    if table is not None:
        source, target = (table[name].to_pylist() for name in _EDGE_COLUMNS)
        pairs = zip(source, target, strict=True)
        return set(pairs), "snapshot"
    return existing_edges(driver, database, rel_type), "graph"


def sync_edges(
    driver: Driver,
    database: str,
    rel: str,
    desired: set[Edge],
    layout: WorkLayout | None = None,
    *,
    trust_snapshot: bool = True,
) -> SyncResult:
    """Make the graph's `rel` relationships equal `desired`. With `layout`, the current ones
    come from the last complete write when the graph still holds it
    (:mod:`nara_kg.graph.sync_state`; not with `trust_snapshot` False), and this write is
    recorded there for the next run."""
    rel_type = checked_relationship(rel)
    synced = (
        sync_state.SyncedSet(
            driver,
            database,
            layout,
            edge_concern(rel_type),
            count_statement(rel_type),
            endpoint_columns=_EDGE_COLUMNS,
        )
        if layout is not None
        else None
    )
    current, existing_from = _current(
        driver, database, rel_type, synced if trust_snapshot else None
    )
    if synced is not None:
        synced.begin()
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
    if synced is not None:
        ordered = sorted(desired)
        synced.commit(
            pa.table(
                {
                    _EDGE_COLUMNS[0]: pa.array([a for a, _ in ordered], type=pa.string()),
                    _EDGE_COLUMNS[1]: pa.array([b for _, b in ordered], type=pa.string()),
                }
            )
        )
    return SyncResult(rel_type, len(desired), len(to_add), len(to_remove), existing_from)
