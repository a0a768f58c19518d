"""next_relationships, includes_relationships and authority_relationships, written by
difference.

After a change set (:mod:`nara_kg.ingest.stages.changes`) that the writer's last complete
write is the base of, each step reads only the records it names and their neighbours from the
record index (:mod:`nara_kg.ingest.stages.record_index`): Next, the changed records' own chunks;
Includes, the changed records, their children and the members of any ancestor cycle a changed
parent link reaches; the authority types, the changed records and the records citing a record
that was added or removed, one of its organization-name aliases, or an alias that moved.
Otherwise (the first build, the full rebuild, a state the graph no longer holds) each type is
compared whole. When the record index holds the whole selection (it confirms the change set),
that is a naId range of records at a time (:func:`record_ranges`): the index's rows in naId
order, each range's desired relationships against those the graph holds at that range's records
(where a Next starts; where an Includes or authority relationship ends, the child or citing
record), so that no set is held whole; the ancestor cycles Includes breaks are found in the index
first (:meth:`RecordIndex.cycle_links`). When it does not (a selection made before its files
were chunked, a damaged index), the whole sets are computed from every record link and compared
against the last complete write while the graph still holds it
(:mod:`nara_kg.build.sync_state`; the full rebuild reads the graph back).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping

from neo4j import Driver

from nara_kg.build.edge_sync import (
    EdgeRange,
    SyncResult,
    already_applied,
    edge_set,
    plan_edges,
    sync_by_record_ranges,
    sync_edges,
    sync_scoped,
)
from nara_kg.graph import relationships as edge_cypher
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.changes import ChangeSet
from nara_kg.ingest.stages.chunks import record_links
from nara_kg.ingest.stages.record_index import IndexedRecord, RecordIndex
from nara_kg.ingest.stages.record_selection import read_aliases
from nara_kg.model import edges as edge_rules
from nara_kg.model.edges import Edge, RecordLinks
from nara_kg.model.schema import AUTHORITY_RELATIONSHIPS, Rel, chunk_id

#: Records per naId range when a relationship type is compared whole (:func:`record_ranges`),
#: read back and written a range at a time.
RECORDS_PER_RANGE = 20_000

#: Longest parent chain walked up from one record before it is taken for a root (a deeper
#: hierarchy than any archive has; it bounds the walk on damaged input).
MAX_ANCESTOR_WALK = 10_000


def _links(records: Iterable[IndexedRecord]) -> list[RecordLinks]:
    return [RecordLinks(r.na_id, r.chunk_count, r.parent, r.references) for r in records]


def desired_next(links: list[RecordLinks]) -> set[Edge]:
    """The `Next` relationships the record links call for (each type's whole desired set is
    shared with the first-load bulk import, :mod:`nara_kg.devserver.bulk_load`)."""
    return edge_rules.next_edges(links)


def desired_includes(links: list[RecordLinks]) -> tuple[set[Edge], list[list[int]]]:
    """The `Includes` relationships, and the ancestor cycles broken to build them."""
    present = {link.na_id for link in links}
    _, cycles = edge_rules.break_cycles(edge_rules.parent_links(links, present))
    return edge_rules.includes_edges(links, present), cycles


def desired_authorities(links: list[RecordLinks], layout: WorkLayout) -> dict[Rel, set[Edge]]:
    """Each authority relationship type's desired set."""
    present = {link.na_id for link in links}
    return edge_rules.authority_edges(links, present, read_aliases(layout))


def sync_next(
    driver: Driver, database: str, layout: WorkLayout, *, trust_snapshot: bool = True
) -> SyncResult:
    synced = edge_set(driver, database, layout, Rel.NEXT)
    plan = plan_edges(synced, layout, full=not trust_snapshot)
    if plan.mode == "done":
        return already_applied(Rel.NEXT)
    if plan.mode == "changes" and plan.changes is not None:
        ids = list(plan.changes.na_ids)
        with RecordIndex(layout.record_index) as index:
            chosen = index.records(ids)
        desired = edge_rules.next_edges(_links(chosen.values()))
        current = edge_cypher.edges_from_records(driver, database, Rel.NEXT, ids) if ids else set()
        return sync_scoped(
            driver, database, synced, desired, current, plan.changes.generation, len(ids)
        )
    if plan.changes is None:
        links = record_links(layout)
        return sync_edges(
            driver,
            database,
            Rel.NEXT,
            desired_next(links),
            layout,
            trust_snapshot=trust_snapshot,
            generation=plan.generation,
            records_touched=len(links),
        )
    with RecordIndex(layout.record_index) as index:
        (result,) = sync_by_record_ranges(
            driver,
            database,
            {Rel.NEXT: plan.generation},
            record_ranges(index, next_by_type, references=False),
            layout,
            end="source",
        )
    return result


def next_by_type(index: RecordIndex, batch: list[IndexedRecord]) -> dict[str, set[Edge]]:
    """The `Next` relationships of a range of records."""
    return {str(Rel.NEXT): edge_rules.next_edges(_links(batch))}


def record_ranges(
    index: RecordIndex,
    desired: Callable[[RecordIndex, list[IndexedRecord]], Mapping[str, set[Edge]]],
    size: int = RECORDS_PER_RANGE,
    *,
    references: bool = True,
) -> Iterator[EdgeRange]:
    """The relationships `desired` gives for every chosen record, `size` records at a time in
    naId order (the records' references read only when `references`: the authority types
    need them, Next and Includes do not). The first range is open below and the last above,
    so that together they cover every naId: a record the index no longer holds loses its
    relationships."""
    after: int | None = None
    pending: EdgeRange | None = None
    for batch in index.batches(size, references=references):
        if pending is not None:
            yield pending
            after = pending.upto
        pending = EdgeRange(after, batch[-1].na_id, desired(index, batch), len(batch))
    if pending is None:
        yield EdgeRange(None, None, {}, 0)  # no record chosen: no relationship stays
    else:
        yield dataclasses.replace(pending, upto=None)


class _Parents:
    """Parent links read from the record index as a walk needs them (present parents only, a
    self-parent is no link: as :func:`nara_kg.model.edges.parent_links`)."""

    def __init__(self, index: RecordIndex) -> None:
        self.index = index
        self.known: dict[int, int | None] = {}
        #: The parent each record names, present or not.
        self.named: dict[int, int | None] = {}

    def load(self, na_ids: Iterable[int]) -> None:
        wanted = [n for n in na_ids if n not in self.known]
        if not wanted:
            return
        found = self.index.records(wanted)
        parents = {r.parent for r in found.values() if r.parent is not None}
        present = set(self.index.records(parents)) if parents else set()
        for na_id in wanted:
            record = found.get(na_id)
            parent = record.parent if record is not None else None
            self.named[na_id] = parent
            ok = parent is not None and parent in present and parent != na_id
            self.known[na_id] = parent if ok else None

    def walk_to(self, start: int, stops: set[int]) -> list[int]:
        """The records walked up from `start` until one of `stops` (or a record naming one as
        its parent) is reached, all of them; none when the walk never reaches one."""
        walk: list[int] = []
        node: int | None = start
        while node is not None and node not in walk and len(walk) < MAX_ANCESTOR_WALK:
            walk.append(node)
            if node in stops:
                return walk
            self.load([node])
            if self.named.get(node) in stops:
                return walk
            node = self.known[node]
        return []

    def parent(self, na_id: int) -> int | None:
        self.load([na_id])
        return self.known[na_id]

    def cycle_through(self, start: int) -> list[int] | None:
        """The ancestor cycle a walk up from `start` enters, if any (from its smallest naId)."""
        walk: list[int] = []
        seen: dict[int, int] = {}
        node: int | None = start
        while node is not None and node not in seen and len(walk) < MAX_ANCESTOR_WALK:
            seen[node] = len(walk)
            walk.append(node)
            node = self.parent(node)
        if node is None or node not in seen:
            return None
        cycle = walk[seen[node] :]
        first = cycle.index(min(cycle))
        return cycle[first:] + cycle[:first]


def includes_scope(
    index: RecordIndex, changes: ChangeSet
) -> tuple[set[int], dict[int, int], list[list[int]]]:
    """The records whose incoming Includes may change (the changed ones, their children, and
    the members of every ancestor cycle a walk from them or their old parents enters), each
    one's desired parent, and the cycles found."""
    changed = set(changes.na_ids)
    parents = _Parents(index)
    scope = changed | index.children(changed)
    starts = scope | {parent for _, parent in changes.old_parents}
    cycles: dict[tuple[int, ...], list[int]] = {}
    parents.load(starts)
    for start in sorted(starts):
        cycle = parents.cycle_through(start)
        if cycle is not None:
            cycles[tuple(cycle)] = cycle
    for cycle in cycles.values():
        scope.update(cycle)
    # A cycle the change broke: a walk up from a changed record's old parent that comes back
    # to a changed record went round that cycle, and its smallest member gets its link back.
    for _, old_parent in changes.old_parents:
        scope.update(parents.walk_to(old_parent, changed))
    losers = {cycle[0] for cycle in cycles.values()}
    parents.load(scope)
    desired = {
        child: parent
        for child in scope
        if (parent := parents.parent(child)) is not None and child not in losers
    }
    return scope, desired, sorted(cycles.values())


def sync_includes(
    driver: Driver, database: str, layout: WorkLayout, *, trust_snapshot: bool = True
) -> tuple[SyncResult, list[list[int]]]:
    """Includes by difference, and the ancestor cycles that were broken to build it (those
    the change set's records reach, after a change set)."""
    synced = edge_set(driver, database, layout, Rel.INCLUDES)
    plan = plan_edges(synced, layout, full=not trust_snapshot)
    if plan.mode == "done":
        return already_applied(Rel.INCLUDES), []
    if plan.mode == "changes" and plan.changes is not None:
        with RecordIndex(layout.record_index) as index:
            scope, parent_of, cycles = includes_scope(index, plan.changes)
        desired: set[Edge] = {(chunk_id(p, 0), chunk_id(c, 0)) for c, p in parent_of.items()}
        targets = sorted(chunk_id(c, 0) for c in scope)
        current = (
            edge_cypher.edges_into(driver, database, Rel.INCLUDES, targets) if targets else set()
        )
        result = sync_scoped(
            driver, database, synced, desired, current, plan.changes.generation, len(scope)
        )
        return result, cycles
    if plan.changes is None:
        links = record_links(layout)
        whole, cycles = desired_includes(links)
        synced_result = sync_edges(
            driver,
            database,
            Rel.INCLUDES,
            whole,
            layout,
            trust_snapshot=trust_snapshot,
            generation=plan.generation,
            records_touched=len(links),
        )
        return synced_result, cycles
    with RecordIndex(layout.record_index) as index:
        cycles, desired_in_range = includes_of_index(index)
        (result,) = sync_by_record_ranges(
            driver,
            database,
            {Rel.INCLUDES: plan.generation},
            record_ranges(index, desired_in_range, references=False),
            layout,
            end="target",
        )
    return result, cycles


def includes_of_index(
    index: RecordIndex,
) -> tuple[list[list[int]], Callable[[RecordIndex, list[IndexedRecord]], dict[str, set[Edge]]]]:
    """The ancestor cycles of the whole selection, found in the index, and the `Includes` of a
    range of child records with those cycles broken (:func:`includes_by_type`)."""
    cycles = edge_rules.ancestor_cycles(index.cycle_links())
    return cycles, includes_by_type({cycle[0] for cycle in cycles})


def includes_by_type(
    losers: set[int],
) -> Callable[[RecordIndex, list[IndexedRecord]], dict[str, set[Edge]]]:
    """The `Includes` relationships of a range of child records, given the records that lose
    their parent link to break an ancestor cycle (as :func:`nara_kg.model.edges.includes_edges`)."""

    def by_type(index: RecordIndex, batch: list[IndexedRecord]) -> dict[str, set[Edge]]:
        linked = [
            (r.na_id, r.parent)
            for r in batch
            if r.parent is not None and r.parent != r.na_id and r.na_id not in losers
        ]
        present = index.present(parent for _, parent in linked)
        return {
            str(Rel.INCLUDES): {
                (chunk_id(parent, 0), chunk_id(child, 0))
                for child, parent in linked
                if parent in present
            }
        }

    return by_type


def authority_scope(index: RecordIndex, changes: ChangeSet) -> dict[int, IndexedRecord]:
    """The chosen records whose authority relationships may change: the changed ones (their
    references), and those citing a record that was added or removed, one of its aliases, or
    an alias that moved. An edge follows from the citing record's references and the cited
    record's presence alone (:func:`nara_kg.model.edges.authority_edges`), so a record that
    stays chosen changes no edge of the records citing it."""
    appeared_or_gone = set(changes.added) | set(changes.removed)
    cited = appeared_or_gone | set(changes.aliases) | index.aliases_of(appeared_or_gone)
    return index.records(set(changes.na_ids) | index.citing(cited))


def scoped_authority_edges(
    index: RecordIndex, records: Mapping[int, IndexedRecord]
) -> dict[Rel, set[Edge]]:
    """:func:`nara_kg.model.edges.authority_edges` of `records`, with presence and aliases
    looked up in the index for the naIds they cite."""
    cited = {target for r in records.values() for _, target in r.references}
    present = set(index.records(cited))
    aliases = index.aliases(cited - present)
    present |= set(index.records(set(aliases.values())))
    return edge_rules.authority_edges(_links(records.values()), present, aliases)


def sync_authorities(
    driver: Driver, database: str, layout: WorkLayout, *, trust_snapshot: bool = True
) -> list[SyncResult]:
    results: dict[str, SyncResult] = {}
    # The types compared whole, with the change set each write will equal: they are compared
    # together, a range of citing records at a time (when the record index holds the selection).
    whole: dict[str, str | None] = {}
    # Worked out once for all eleven types, and only when a type needs it.
    scoped: tuple[dict[int, IndexedRecord], dict[Rel, set[Edge]]] | None = None
    every: tuple[int, dict[Rel, set[Edge]]] | None = None
    for rel in AUTHORITY_RELATIONSHIPS:
        synced = edge_set(driver, database, layout, rel)
        plan = plan_edges(synced, layout, full=not trust_snapshot)
        if plan.mode == "done":
            results[rel] = already_applied(rel)
            continue
        if plan.mode == "changes" and plan.changes is not None:
            if scoped is None:
                with RecordIndex(layout.record_index) as index:
                    scope = authority_scope(index, plan.changes)
                    scoped = (scope, scoped_authority_edges(index, scope))
            scope, desired = scoped[0], scoped[1][rel]
            targets = sorted(chunk_id(n, 0) for n in scope)
            current = edge_cypher.edges_into(driver, database, rel, targets) if targets else set()
            results[rel] = sync_scoped(
                driver, database, synced, desired, current, plan.changes.generation, len(scope)
            )
            continue
        if plan.changes is None:
            if every is None:
                links = record_links(layout)
                every = (len(links), desired_authorities(links, layout))
            results[rel] = sync_edges(
                driver,
                database,
                rel,
                every[1][rel],
                layout,
                trust_snapshot=trust_snapshot,
                generation=plan.generation,
                records_touched=every[0],
            )
            continue
        whole[rel] = plan.generation
    if whole:
        with RecordIndex(layout.record_index) as index:
            compared = sync_by_record_ranges(
                driver,
                database,
                whole,
                record_ranges(index, authorities_by_type),
                layout,
                end="target",
            )
        results.update((result.relationship, result) for result in compared)
    return [results[rel] for rel in AUTHORITY_RELATIONSHIPS]


def authorities_by_type(index: RecordIndex, batch: list[IndexedRecord]) -> dict[str, set[Edge]]:
    """The authority relationships of a range of citing records, by type."""
    by_type = scoped_authority_edges(index, {record.na_id: record for record in batch})
    return {str(rel): edges for rel, edges in by_type.items()}


def desired_by_ranges(index: RecordIndex) -> Iterator[tuple[str, set[Edge]]]:
    """Every relationship the writers would write, by type, a naId range of records at a time
    (a type comes once per range): what the first-load import writes, from the record index
    alone, as the whole comparison of each writer desires it."""
    _, includes_in_range = includes_of_index(index)
    for desired, references in (
        (next_by_type, False),
        (includes_in_range, False),
        (authorities_by_type, True),
    ):
        for edge_range in record_ranges(index, desired, references=references):
            yield from edge_range.desired.items()
