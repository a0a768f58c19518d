"""Making the relationships of one type equal a desired set, by difference: over the whole
type (`sync_edges`), or over the relationships of the records a change set names
(`sync_scoped`)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from neo4j import Driver

from nara_kg.build import sync_state
from nara_kg.build.projection_changes import ends_of, mark_touched
from nara_kg.graph import relationships as edge_cypher
from nara_kg.graph.communities import COMMUNITY_RELATIONSHIPS
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.changes import WriterPlan, plan_for, read_changes
from nara_kg.model.edges import Edge
from nara_kg.model.schema import checked_relationship


@dataclass(frozen=True)
class SyncResult:
    relationship: str
    #: The desired relationships compared: all of the type, or those of the touched records.
    desired: int
    added: int
    removed: int
    #: "snapshot" (the last complete write, which the graph still holds), "graph" (read back)
    #: or "changes" (the change set's records only).
    existing_from: str = "graph"
    records_touched: int = 0

    @property
    def unchanged(self) -> int:
        return self.desired - self.added


#: The snapshot's columns: the chunkIds of both ends.
_EDGE_COLUMNS = ("source", "target")


def edge_set(driver: Driver, database: str, layout: WorkLayout, rel: str) -> sync_state.SyncedSet:
    rel_type = checked_relationship(rel)
    return sync_state.SyncedSet(
        driver,
        database,
        layout,
        edge_cypher.edge_concern(rel_type),
        edge_cypher.count_statement(rel_type),
        endpoint_columns=_EDGE_COLUMNS,
        rel_types=(rel_type,),
    )


def plan_edges(synced: sync_state.SyncedSet, layout: WorkLayout, *, full: bool) -> WriterPlan:
    """Whether this writer applies the current change set, or compares whole."""
    changes = read_changes(layout)
    at = None if full or changes is None else synced.generation(changes.generation)
    return plan_for(changes, at, full=full)


def _current(
    driver: Driver, database: str, rel_type: str, synced: sync_state.SyncedSet | None
) -> tuple[set[Edge], str]:
    table = synced.trusted() if synced is not None else None
    if table is not None:
        source, target = (table[name].to_pylist() for name in _EDGE_COLUMNS)
        return set(zip(source, target, strict=True)), "snapshot"
    return edge_cypher.existing_edges(driver, database, rel_type), "graph"


def _write(
    driver: Driver,
    database: str,
    layout: WorkLayout | None,
    rel_type: str,
    to_add: list[Edge],
    to_remove: list[Edge],
) -> None:
    """Add and remove edges; the ends of a projected type's are first noted for
    graph_communities (:mod:`nara_kg.build.projection_changes`)."""
    if rel_type in COMMUNITY_RELATIONSHIPS:
        mark_touched(layout, ends_of([*to_add, *to_remove]))
    edge_cypher.merge_edges(driver, database, rel_type, to_add)
    edge_cypher.delete_edges(driver, database, rel_type, to_remove)


def sync_edges(
    driver: Driver,
    database: str,
    rel: str,
    desired: set[Edge],
    layout: WorkLayout | None = None,
    *,
    trust_snapshot: bool = True,
    generation: str | None = None,
    records_touched: int = 0,
) -> SyncResult:
    """Make the graph's `rel` relationships equal `desired`. With `layout`, the current ones
    come from the last complete write when the graph still holds it
    (:mod:`nara_kg.build.sync_state`; not with `trust_snapshot` False), and this write is
    recorded there for the next run (as equal to the change set `generation`)."""
    rel_type = checked_relationship(rel)
    synced = edge_set(driver, database, layout, rel_type) if layout is not None else None
    current, existing_from = _current(
        driver, database, rel_type, synced if trust_snapshot else None
    )
    if synced is not None:
        synced.begin()
    to_add = sorted(desired - current)
    to_remove = sorted(current - desired)
    _write(driver, database, layout, rel_type, to_add, to_remove)
    if synced is not None:
        ordered = sorted(desired)
        synced.commit(
            pa.table(
                {
                    _EDGE_COLUMNS[0]: pa.array([a for a, _ in ordered], type=pa.string()),
                    _EDGE_COLUMNS[1]: pa.array([b for _, b in ordered], type=pa.string()),
                }
            ),
            generation,
        )
    return SyncResult(
        rel_type, len(desired), len(to_add), len(to_remove), existing_from, records_touched
    )


def sync_scoped(
    driver: Driver,
    database: str,
    synced: sync_state.SyncedSet,
    desired: set[Edge],
    current: set[Edge],
    generation: str,
    records_touched: int,
) -> SyncResult:
    """Make the relationships of the touched records (`current`, as the graph has them) equal
    `desired`; the rest of the type is left as it is."""
    rel_type = synced.rel_types[0]
    if not desired and not current:
        # Nothing of the type to compare (an empty change set): the last write stands.
        synced.advance(generation)
        return SyncResult(rel_type, 0, 0, 0, "changes", records_touched)
    synced.begin()
    to_add = sorted(desired - current)
    to_remove = sorted(current - desired)
    _write(driver, database, synced.layout, rel_type, to_add, to_remove)
    synced.commit_changes(generation)
    return SyncResult(
        rel_type, len(desired), len(to_add), len(to_remove), "changes", records_touched
    )


def already_applied(rel: str) -> SyncResult:
    """What a writer reports when the graph already holds the current change set."""
    return SyncResult(checked_relationship(rel), 0, 0, 0, "changes", 0)
