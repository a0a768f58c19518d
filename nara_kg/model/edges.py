"""The relationships the graph should have, computed from the chosen records (pure functions).

Writers then make Neo4j match these sets exactly, so a re-run converges to the same graph.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from nara_kg.model.schema import AUTHORITY_RELATIONSHIPS, Rel, chunk_id

Edge = tuple[str, str]


@dataclass(frozen=True, slots=True)
class RecordLinks:
    """What one chosen record contributes to relationships."""

    na_id: int
    chunk_count: int
    parent_na_id: int | None
    #: (relationship type, referenced naId) for every reference the record holds.
    references: tuple[tuple[str, int], ...] = ()


def next_edges(records: Iterable[RecordLinks]) -> set[Edge]:
    """Chunk k -> chunk k+1 of the same record."""
    return {
        (chunk_id(r.na_id, seq), chunk_id(r.na_id, seq + 1))
        for r in records
        for seq in range(r.chunk_count - 1)
    }


def parent_links(records: Iterable[RecordLinks], present: set[int]) -> dict[int, int]:
    """child naId -> parent naId, for parents in the graph (a self-parent is no link)."""
    return {
        r.na_id: r.parent_na_id
        for r in records
        if r.parent_na_id is not None and r.parent_na_id in present and r.parent_na_id != r.na_id
    }


def ancestor_cycles(parents: Mapping[int, int]) -> list[list[int]]:
    """Every cycle of the parent links (A's parent is B, ..., Z's parent is A), each listed from
    its smallest naId in parent order, sorted. Each record has one parent, so a walk up from
    any record either ends at a root or enters exactly one cycle."""
    state: dict[int, int] = {}  # 1: on the current walk, 2: finished
    cycles: list[list[int]] = []
    for start in sorted(parents):
        walk: list[int] = []
        node: int | None = start
        while node is not None and node not in state:
            state[node] = 1
            walk.append(node)
            node = parents.get(node)
        if node is not None and state.get(node) == 1:  # the walk closed on itself
            cycle = walk[walk.index(node) :]
            first = cycle.index(min(cycle))
            cycles.append(cycle[first:] + cycle[:first])
        for visited in walk:
            state[visited] = 2
    return sorted(cycles)


def break_cycles(parents: Mapping[int, int]) -> tuple[dict[int, int], list[list[int]]]:
    """The parent links with each cycle broken, and the cycles. The rule is deterministic: in
    each cycle the record with the smallest naId loses its parent link and becomes the root."""
    cycles = ancestor_cycles(parents)
    kept = dict(parents)
    for cycle in cycles:
        del kept[cycle[0]]
    return kept, cycles


def includes_edges(records: Iterable[RecordLinks], present: set[int]) -> set[Edge]:
    """Parent's first chunk -> child's first chunk, when the nearest ancestor is in the graph;
    ancestor cycles are broken (see `break_cycles`)."""
    parents, _ = break_cycles(parent_links(records, present))
    return {(chunk_id(parent, 0), chunk_id(child, 0)) for child, parent in parents.items()}


def resolve_authority(na_id: int, present: set[int], aliases: Mapping[int, int]) -> int | None:
    """The node a reference points at: the naId itself, or the organization whose nested
    `organizationNames[]` entry it is (descriptions' creators usually cite those)."""
    if na_id in present:
        return na_id
    owner = aliases.get(na_id)
    return owner if owner is not None and owner in present else None


def authority_edges(
    records: Iterable[RecordLinks], present: set[int], aliases: Mapping[int, int]
) -> dict[Rel, set[Edge]]:
    """Authority's first chunk -> referencing record's first chunk, one set per type."""
    edges: dict[Rel, set[Edge]] = {rel: set() for rel in AUTHORITY_RELATIONSHIPS}
    for record in records:
        for rel_name, referenced in record.references:
            target = resolve_authority(referenced, present, aliases)
            if target is None or target == record.na_id:
                continue
            edges[Rel(rel_name)].add((chunk_id(target, 0), chunk_id(record.na_id, 0)))
    return edges
