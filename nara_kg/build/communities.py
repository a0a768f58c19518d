"""graph_communities: hierarchical Leiden over first chunks, written by difference."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Any

from neo4j import Driver


@dataclass
class CommunityResult:
    nodes: int
    relationships: int
    levels: int
    modularities: list[float]
    communities_per_level: dict[int, int]
    size_distribution: dict[str, int]
    members_with_community: int
    write: dict[str, int]


def _size_bucket(size: int) -> str:
    for limit in (2, 5, 10, 50, 100, 500, 1000):
        if size <= limit:
            return f"<= {limit}"
    return "> 1000"


def detect_communities(driver: Driver, database: str, gds: Any) -> CommunityResult:
    """Hierarchical Leiden over first chunks; Community nodes and IN_COMMUNITY by difference."""
    from nara_kg.graph import communities as community_cypher
    from nara_kg.model.community_hierarchy import build_hierarchy

    leiden = community_cypher.run_leiden(gds)
    hierarchy = build_hierarchy(leiden.assignments)
    member_hashes = {
        c.id: hashlib.sha256(",".join(map(str, c.members)).encode()).hexdigest()[:16]
        for c in hierarchy.communities.values()
    }
    written = community_cypher.write_hierarchy(driver, database, hierarchy, member_hashes)
    per_level = Counter(c.level for c in hierarchy.communities.values())
    sizes = Counter(_size_bucket(c.size) for c in hierarchy.communities.values() if c.level == 0)
    return CommunityResult(
        nodes=leiden.nodes,
        relationships=leiden.relationships,
        levels=leiden.ran_levels,
        modularities=leiden.modularities,
        communities_per_level=dict(sorted(per_level.items())),
        size_distribution=dict(sizes),
        members_with_community=len(hierarchy.finest),
        write=written,
    )
