"""GDS projection and Leiden, and the Community nodes written from its result."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from neo4j import Driver

from nara_kg.graph.batches import read_all, unlogged, write_batches, write_one
from nara_kg.model.community_hierarchy import Hierarchy

if TYPE_CHECKING:  # the client loads pandas: `nara-kg ask` reads reports without it
    from graphdatascience import GraphDataScience
from nara_kg.model.schema import (
    AUTHORITY_RELATIONSHIPS,
    GDS_PROJECTION,
    CommunityProp,
    Index,
    Label,
    MentionProp,
    Prop,
    Rel,
)

#: Fixed seed and a single thread: Leiden is then deterministic, so the same graph gives the
#: same communities on every rebuild (and cached reports stay valid).
LEIDEN_CONFIG: dict[str, Any] = {
    "include_intermediate_communities": True,
    "random_seed": 42,
    "concurrency": 1,
    "max_levels": 10,
    "gamma": 1.0,
    "theta": 0.01,
    "tolerance": 0.0001,
    "relationship_weight_property": "weight",
}

COMMUNITY_RELATIONSHIPS: tuple[str, ...] = (
    Rel.INCLUDES.value,
    *(rel.value for rel in AUTHORITY_RELATIONSHIPS),
)
_REL_PATTERN = "|".join(COMMUNITY_RELATIONSHIPS)

#: First chunks only (one node per record, stub or authority); undirected. An Includes or a
#: reference says "these belong together" with no strength to weigh: weight 1. An authority
#: named in a record's text (MENTIONED_IN, from any of the record's chunks) joins the two with
#: the number of times the record names it. The naId rides along as a node property so results
#: map back without a lookup per node. Rows are sorted by naId (then weight) so GDS numbers the
#: nodes and edges in the same order whatever the store's internal ids are: Leiden's seeded
#: randomness then sees the same graph after an incremental update as after a rebuild from
#: scratch.
_PROJECTION_ROWS = f"""
MATCH (source:{Label.CHUNK} {{{Prop.CHUNK_SEQ_ID}: 0}})
CALL {{
  WITH source
  OPTIONAL MATCH (source)-[:{_REL_PATTERN}]->(target:{Label.CHUNK} {{{Prop.CHUNK_SEQ_ID}: 0}})
  RETURN target, 1.0 AS weight
  UNION ALL
  WITH source
  MATCH (source)-[m:{Rel.MENTIONED_IN}]->(chunk:{Label.CHUNK})
  WITH chunk.{Prop.NA_ID} AS record, sum(m.{MentionProp.COUNT}) AS total
  MATCH (target:{Label.CHUNK} {{{Prop.CHUNK_ID}: toString(record) + '-0'}})
  RETURN target, toFloat(total) AS weight
}}
WITH source, target, weight ORDER BY source.{Prop.NA_ID}, target.{Prop.NA_ID}, weight
"""
PROJECT = (
    _PROJECTION_ROWS
    + f"""
RETURN gds.graph.project(
    $graph_name, source, target,
    {{sourceNodeProperties: {{naId: source.{Prop.NA_ID}}},
      targetNodeProperties: CASE WHEN target IS NULL THEN null
                                 ELSE {{naId: target.{Prop.NA_ID}}} END,
      relationshipProperties: CASE WHEN target IS NULL THEN null
                                   ELSE {{weight: weight}} END}},
    {{undirectedRelationshipTypes: ['*']}}
)
"""
)
#: The rows the projection is made of, in its order: what Leiden would read.
PROJECTION_INPUT = (
    _PROJECTION_ROWS + f"RETURN collect([source.{Prop.NA_ID}, target.{Prop.NA_ID}, weight]) AS rows"
)
#: The same projection made from those rows once read (naIds as GDS's node ids, in the rows'
#: order, so Leiden numbers and sees the graph exactly as `PROJECT` would make it): the
#: traversal then runs once per run, for the digest, and not a second time to project.
PROJECT_FROM_ROWS = """
UNWIND $rows AS row
WITH row[0] AS source, row[1] AS target, row[2] AS weight
RETURN gds.graph.project(
    $graph_name, source, target,
    {relationshipProperties: CASE WHEN target IS NULL THEN null ELSE {weight: weight} END},
    {undirectedRelationshipTypes: ['*']}
) AS projection
"""
#: Above this many rows the projection is made by the traversal (`PROJECT`) rather than sent
#: back as one parameter, which the server holds whole in its heap (7.4 rows per record).
ROWS_SENT_BACK_AT_MOST = 1_000_000

#: The communities in the graph, their members' hashes, how many records point at one and how
#: many communities at a parent.
COMMUNITY_STATE = f"""
MATCH (c:{Label.COMMUNITY})
WITH c ORDER BY c.{CommunityProp.ID}
WITH collect([c.{CommunityProp.ID}, c.{CommunityProp.MEMBER_HASH}]) AS communities
CALL () {{
  MATCH (:{Label.CHUNK})-[r:{Rel.IN_COMMUNITY}]->(:{Label.COMMUNITY})
  RETURN count(r) AS members
}}
CALL () {{
  MATCH (:{Label.COMMUNITY})-[r:{Rel.IN_COMMUNITY}]->(:{Label.COMMUNITY})
  RETURN count(r) AS parentLinks
}}
RETURN communities, members, parentLinks
"""

UPSERT_COMMUNITIES = f"""
UNWIND $rows AS row
MERGE (c:{Label.COMMUNITY} {{{CommunityProp.ID}: row.id}})
SET c.{CommunityProp.LEVEL} = row.level, c.{CommunityProp.SIZE} = row.size
"""

#: Written after the memberships, so that a hash on a node says its members are written: a run
#: stopped half-way leaves the old hashes, and the next one compares memberships again.
SET_MEMBER_HASHES = f"""
UNWIND $rows AS row
MATCH (c:{Label.COMMUNITY} {{{CommunityProp.ID}: row.id}})
SET c.{CommunityProp.MEMBER_HASH} = row.memberHash
"""

DELETE_STALE_COMMUNITIES = f"""
MATCH (c:{Label.COMMUNITY}) WHERE NOT c.{CommunityProp.ID} IN $ids
DETACH DELETE c
"""

EXISTING_MEMBERSHIP = f"""
MATCH (m)-[:{Rel.IN_COMMUNITY}]->(c:{Label.COMMUNITY})
RETURN coalesce(m.{Prop.CHUNK_ID}, 'community:' + m.{CommunityProp.ID}) AS member,
       c.{CommunityProp.ID} AS community
"""

ADD_MEMBERS = f"""
UNWIND $rows AS row
MATCH (m:{Label.CHUNK} {{{Prop.CHUNK_ID}: row[0]}})
MATCH (c:{Label.COMMUNITY} {{{CommunityProp.ID}: row[1]}})
MERGE (m)-[:{Rel.IN_COMMUNITY}]->(c)
"""

ADD_PARENTS = f"""
UNWIND $rows AS row
MATCH (child:{Label.COMMUNITY} {{{CommunityProp.ID}: row[0]}})
MATCH (parent:{Label.COMMUNITY} {{{CommunityProp.ID}: row[1]}})
MERGE (child)-[:{Rel.IN_COMMUNITY}]->(parent)
"""

REMOVE_MEMBERSHIP = f"""
UNWIND $rows AS row
MATCH (m)-[r:{Rel.IN_COMMUNITY}]->(c:{Label.COMMUNITY} {{{CommunityProp.ID}: row[1]}})
WHERE coalesce(m.{Prop.CHUNK_ID}, 'community:' + m.{CommunityProp.ID}) = row[0]
DELETE r
"""

COMMUNITY_SCHEMA = (
    f"CREATE CONSTRAINT {Index.COMMUNITY_ID_CONSTRAINT} IF NOT EXISTS "
    f"FOR (c:{Label.COMMUNITY}) REQUIRE c.{CommunityProp.ID} IS UNIQUE",
)


#: The in-memory property Leiden writes each node's community ids into, finest level first.
_LEIDEN_LEVELS: Final = "leidenLevels"

#: Each projected node's naId, Leiden levels and undirected degree, in one pass. A projection
#: made from rows has the naIds as its node ids; one made by the traversal has the store's ids
#: and carries the naId as a property.
LEIDEN_ASSIGNMENTS = f"""
CALL gds.degree.stream($graph_name) YIELD nodeId, score
RETURN CASE WHEN $from_rows THEN nodeId
            ELSE gds.util.nodeProperty($graph_name, nodeId, 'naId') END AS naId,
       gds.util.nodeProperty($graph_name, nodeId, '{_LEIDEN_LEVELS}') AS levels,
       score AS degree
"""


@dataclass
class LeidenResult:
    nodes: int
    relationships: int
    #: (naId, intermediateCommunityIds) per node; index 0 = finest level.
    assignments: list[tuple[int, list[int]]]
    #: naId -> degree in the projection (undirected).
    degrees: dict[int, int]
    ran_levels: int
    modularities: list[float]


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, separators=(",", ":")).encode()).hexdigest()


def projection_rows(driver: Driver, database: str) -> list[list[Any]]:
    """[source naId, target naId or None, weight], in the projection's order."""
    rows: list[list[Any]] = read_all(driver, database, PROJECTION_INPUT)[0]["rows"]
    return rows


def leiden_input_digest(rows: Sequence[Sequence[Any]]) -> str:
    """A digest of everything Leiden's result depends on: the projection's rows and the
    configuration (Leiden is deterministic, see LEIDEN_CONFIG)."""
    return _digest([LEIDEN_CONFIG, rows])


def community_state(driver: Driver, database: str) -> dict[str, Any]:
    """The Community nodes' ids and member hashes (`communities`, by id) and the numbers of
    memberships (`members`) and of parent links (`parentLinks`) in the graph now."""
    state: dict[str, Any] = dict(read_all(driver, database, COMMUNITY_STATE)[0])
    return state


def community_state_digest(driver: Driver, database: str) -> str:
    """A digest of the Community nodes and memberships in the graph now."""
    state = community_state(driver, database)
    return _digest([state["communities"], state["members"], state["parentLinks"]])


def hierarchy_is_written(
    state: dict[str, Any], hierarchy: Hierarchy, member_hashes: dict[str, str]
) -> bool:
    """Whether the graph holds `hierarchy` already, judged from :func:`community_state`: every
    community with its members' hash (written only once its memberships were) and no other,
    and as many memberships and parent links as the hierarchy has."""
    return (
        dict(map(tuple, state["communities"])) == member_hashes
        and state["members"] == len(hierarchy.finest)
        and state["parentLinks"] == sum(1 for c in hierarchy.communities.values() if c.parent)
    )


def projection_exists(gds: GraphDataScience) -> bool:
    return bool(gds.graph.exists(GDS_PROJECTION))


def _project(gds: GraphDataScience, rows: Sequence[Sequence[Any]] | None) -> tuple[Any, int, int]:
    """The projection as (graph, nodes, relationships): from `rows` when given, else by the
    traversal."""
    if rows is None:
        graph, projected = gds.graph.project.cypher(PROJECT, graph_name=GDS_PROJECTION)
        return graph, projected.node_count, projected.relationship_count
    made = gds.run_cypher(
        PROJECT_FROM_ROWS, params=unlogged({"rows": rows, "graph_name": GDS_PROJECTION})
    )["projection"][0]
    return gds.graph.get(GDS_PROJECTION), made["nodeCount"], made["relationshipCount"]


def run_leiden(
    gds: GraphDataScience,
    rows: Sequence[Sequence[Any]] | None = None,
    *,
    rows_sent_back_at_most: int = ROWS_SENT_BACK_AT_MOST,
) -> LeidenResult:
    """Project (from `rows`, the projection's rows already read, when there are not too many
    of them; else by the traversal), cluster and drop the projection again, also when
    anything fails."""
    if projection_exists(gds):
        gds.graph.drop(GDS_PROJECTION)
    if rows is not None and len(rows) > rows_sent_back_at_most:
        rows = None
    graph, node_count, relationship_count = _project(gds, rows)
    try:
        if relationship_count == 0:
            # Leiden needs edges; with none every record is its own singleton community.
            return LeidenResult(node_count, 0, [], {}, 0, [])
        # Leiden runs once, into the projection, and one query reads its levels, the naIds and
        # the degrees back: streaming each (and running `stats` for the levels) cost three
        # times as much, most of it turning rows into data frames.
        mutated = gds.leiden.mutate(graph, mutate_property=_LEIDEN_LEVELS, **LEIDEN_CONFIG)
        found = gds.run_cypher(
            LEIDEN_ASSIGNMENTS,
            params={"graph_name": GDS_PROJECTION, "from_rows": rows is not None},
        )
        return LeidenResult(
            nodes=node_count,
            relationships=relationship_count,
            assignments=[
                (int(na_id), [int(x) for x in levels])
                for na_id, levels in zip(found["naId"], found["levels"], strict=True)
            ],
            degrees={
                int(na_id): int(degree)
                for na_id, degree in zip(found["naId"], found["degree"], strict=True)
            },
            ran_levels=int(mutated.ran_levels),
            modularities=[float(m) for m in mutated.modularities],
        )
    finally:
        gds.graph.drop(graph)


def write_hierarchy(
    driver: Driver, database: str, hierarchy: Hierarchy, member_hashes: dict[str, str]
) -> dict[str, int]:
    """Make Community nodes and IN_COMMUNITY relationships equal `hierarchy`, by difference.
    When the graph's communities carry the hierarchy's member hashes and its numbers of
    memberships (Leiden ran again on changed weights and found the same communities), the
    memberships are not read back."""
    desired_members = {(f"{na_id}-0", cid) for na_id, cid in hierarchy.finest.items()}
    desired_parents = {
        (f"community:{c.id}", c.parent) for c in hierarchy.communities.values() if c.parent
    }
    if hierarchy_is_written(community_state(driver, database), hierarchy, member_hashes):
        return {
            "memberships": len(desired_members),
            "parent_links": len(desired_parents),
            "added": 0,
            "removed": 0,
        }
    for statement in COMMUNITY_SCHEMA:
        write_one(driver, database, statement)
    rows = [{"id": c.id, "level": c.level, "size": c.size} for c in hierarchy.communities.values()]
    write_batches(driver, database, UPSERT_COMMUNITIES, rows)
    write_one(driver, database, DELETE_STALE_COMMUNITIES, ids=list(hierarchy.communities))
    current = {
        (r["member"], r["community"]) for r in read_all(driver, database, EXISTING_MEMBERSHIP)
    }
    desired = desired_members | desired_parents
    to_remove = sorted(current - desired)
    write_batches(driver, database, REMOVE_MEMBERSHIP, [list(e) for e in to_remove])
    write_batches(
        driver, database, ADD_MEMBERS, [list(e) for e in sorted(desired_members - current)]
    )
    write_batches(
        driver,
        database,
        ADD_PARENTS,
        [[m.removeprefix("community:"), c] for m, c in sorted(desired_parents - current)],
    )
    write_batches(
        driver,
        database,
        SET_MEMBER_HASHES,
        [{"id": cid, "memberHash": digest} for cid, digest in member_hashes.items()],
    )
    return {
        "memberships": len(desired_members),
        "parent_links": len(desired_parents),
        "added": len(desired - current),
        "removed": len(to_remove),
    }
