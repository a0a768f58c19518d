"""graph_communities: hierarchical Leiden over first chunks, written by difference."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from neo4j import Driver

from nara_kg.ingest.stages.common import read_json, write_json


@dataclass
class CommunityResult:
    nodes: int
    relationships: int
    levels: int
    modularities: list[float]
    communities_per_level: dict[int, int]
    size_distribution: dict[str, int]
    members_with_community: int
    write: dict[str, int] = field(default_factory=lambda: {"added": 0, "removed": 0})
    #: False when the projection and the graph's communities were as the last run left them,
    #: so that Leiden (deterministic) could only have found the same communities again.
    leiden_ran: bool = True


def _size_bucket(size: int) -> str:
    for limit in (2, 5, 10, 50, 100, 500, 1000):
        if size <= limit:
            return f"<= {limit}"
    return "> 1000"


def detect_communities(
    driver: Driver,
    database: str,
    gds: Any,
    *,
    state_path: Path | None = None,
    force: bool = False,
) -> CommunityResult:
    """Hierarchical Leiden over first chunks; Community nodes and IN_COMMUNITY by difference.

    With `state_path`, what the run read and left is remembered there, and the next run whose
    projection and communities are unchanged (an edit that named no new authority, say) reports
    the remembered result without projecting the graph, unless `force`."""
    from nara_kg.graph import communities as community_cypher
    from nara_kg.model.community_hierarchy import build_hierarchy

    rows = community_cypher.projection_rows(driver, database)
    input_digest = community_cypher.leiden_input_digest(rows)
    known = read_json(state_path) if state_path is not None else None
    if (
        not force
        and known is not None
        and known.get("input") == input_digest
        and known.get("graph") == community_cypher.community_state_digest(driver, database)
    ):
        remembered = dict(known["result"])
        remembered["communities_per_level"] = {
            int(level): count for level, count in remembered["communities_per_level"].items()
        }
        return CommunityResult(**remembered, leiden_ran=False)

    leiden = community_cypher.run_leiden(gds, rows)
    hierarchy = build_hierarchy(leiden.assignments)
    member_hashes = {
        c.id: hashlib.sha256(",".join(map(str, c.members)).encode()).hexdigest()[:16]
        for c in hierarchy.communities.values()
    }
    written = community_cypher.write_hierarchy(driver, database, hierarchy, member_hashes)
    per_level = Counter(c.level for c in hierarchy.communities.values())
    sizes = Counter(_size_bucket(c.size) for c in hierarchy.communities.values() if c.level == 0)
    result = CommunityResult(
        nodes=leiden.nodes,
        relationships=leiden.relationships,
        levels=leiden.ran_levels,
        modularities=leiden.modularities,
        communities_per_level=dict(sorted(per_level.items())),
        size_distribution=dict(sizes),
        members_with_community=len(hierarchy.finest),
        write=written,
    )
    if state_path is not None:
        remembered = {k: v for k, v in asdict(result).items() if k not in ("write", "leiden_ran")}
        write_json(
            state_path,
            {
                "input": input_digest,
                "graph": community_cypher.community_state_digest(driver, database),
                "result": remembered,
            },
        )
    return result
