"""Making the relationships of one type equal a desired set, by difference: over the whole
type at once (`sync_edges`) or a naId range of records at a time (`sync_by_record_ranges`), or
over the relationships of the records a change set names (`sync_scoped`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pyarrow as pa
from neo4j import Driver

from nara_kg.build import sync_state
from nara_kg.build.projection_changes import ends_of, mark_touched
from nara_kg.graph import relationships as edge_cypher
from nara_kg.graph.communities import COMMUNITY_RELATIONSHIPS
from nara_kg.graph.relationships import RangeEnd
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
_EDGE_SCHEMA = pa.schema([(name, pa.string()) for name in _EDGE_COLUMNS])


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


@dataclass(frozen=True)
class EdgeRange:
    """The desired relationships, by type, at the records whose naId is above `after` and at
    most `upto` (None: unbounded), and how many records those are."""

    after: int | None
    upto: int | None
    desired: Mapping[str, set[Edge]]
    records: int


def sync_by_record_ranges(
    driver: Driver,
    database: str,
    generations: Mapping[str, str | None],
    ranges: Iterable[EdgeRange],
    layout: WorkLayout,
    *,
    end: RangeEnd,
) -> list[SyncResult]:
    """:func:`sync_edges` for the types `generations` names (each with the change set its
    write will equal), for types whose relationships are each decided by the record at one
    `end` (where a `Next` starts; the child of an `Includes`, the citing record of an
    authority type, where they end): one naId range of
    those records at a time, so that neither the desired nor the current set is held whole.
    The ranges must follow one another and cover every naId: each of the graph's
    relationships of these types is then read back, and compared, once. The desired sets
    stream into the types' snapshots."""
    rel_types = [checked_relationship(rel) for rel in generations]
    synced = {rel: edge_set(driver, database, layout, rel) for rel in rel_types}
    #: Relationships desired, added and removed, by type.
    totals = {rel: (0, 0, 0) for rel in rel_types}
    records = 0
    for one in synced.values():
        one.begin()
    with contextlib.ExitStack() as stack:
        snapshots = {
            rel: stack.enter_context(synced[rel].snapshot_writer(_EDGE_SCHEMA)) for rel in rel_types
        }
        for edge_range in ranges:
            records += edge_range.records
            current_by_type = edge_cypher.edges_at_record_range(
                driver, database, rel_types, edge_range.after, edge_range.upto, end=end
            )
            for rel in rel_types:
                desired = edge_range.desired.get(rel, set())
                current = current_by_type[rel]
                to_add, to_remove = sorted(desired - current), sorted(current - desired)
                _write(driver, database, layout, rel, to_add, to_remove)
                for source, target in sorted(desired):
                    snapshots[rel].add(source, target)
                wanted, added, removed = totals[rel]
                totals[rel] = (
                    wanted + len(desired),
                    added + len(to_add),
                    removed + len(to_remove),
                )
    for rel in rel_types:
        synced[rel].commit_snapshot(snapshots[rel], generations[rel])
    return [
        SyncResult(rel, *totals[rel], existing_from="graph", records_touched=records)
        for rel in rel_types
    ]


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
