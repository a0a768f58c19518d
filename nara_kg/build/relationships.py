"""next_relationships, includes_relationships and authority_relationships: each computed from
the record links and written by difference (against the last complete write while the graph
still holds it, :mod:`nara_kg.graph.sync_state`; the full rebuild reads the graph back)."""

from __future__ import annotations

from neo4j import Driver

from nara_kg.graph.relationships import SyncResult, sync_edges
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import record_links
from nara_kg.ingest.stages.record_selection import read_aliases
from nara_kg.model import edges as edge_rules
from nara_kg.model.edges import Edge, RecordLinks
from nara_kg.model.schema import AUTHORITY_RELATIONSHIPS, Rel


def desired_next(links: list[RecordLinks]) -> set[Edge]:
    """The `Next` relationships the record links call for (each writer's desired set is shared
    with the first-load bulk import, :mod:`nara_kg.devserver.bulk_load`)."""
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
    return sync_edges(
        driver,
        database,
        Rel.NEXT,
        desired_next(record_links(layout)),
        layout,
        trust_snapshot=trust_snapshot,
    )


def sync_includes(
    driver: Driver, database: str, layout: WorkLayout, *, trust_snapshot: bool = True
) -> tuple[SyncResult, list[list[int]]]:
    """Includes by difference, and the ancestor cycles that were broken to build it."""
    desired, cycles = desired_includes(record_links(layout))
    synced = sync_edges(
        driver,
        database,
        Rel.INCLUDES,
        desired,
        layout,
        trust_snapshot=trust_snapshot,
    )
    return synced, cycles


def sync_authorities(
    driver: Driver, database: str, layout: WorkLayout, *, trust_snapshot: bool = True
) -> list[SyncResult]:
    desired = desired_authorities(record_links(layout), layout)
    return [
        sync_edges(driver, database, rel, desired[rel], layout, trust_snapshot=trust_snapshot)
        for rel in AUTHORITY_RELATIONSHIPS
    ]
