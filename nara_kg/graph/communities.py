"""GDS projection and Leiden, the projection's digests and the communities' state in the graph
(written by :mod:`nara_kg.graph.community_memberships`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from neo4j import Driver

from nara_kg.graph.batches import read_all
from nara_kg.model import community_hierarchy
from nara_kg.model.community_hierarchy import NO_COMMUNITY, Assignments
from nara_kg.model.source_digest import source_digest

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
#: The GDS node property a seeded run starts from.
SEED_PROPERTY: Final = "seed"


def _project(rows: str, *, seeded: bool) -> str:
    """The GDS Cypher projection of `rows`: each node with its naId, and with its seed
    (`sourceSeed`, `targetSeed` of the rows) when `seeded`."""

    def node(end: str) -> str:
        seed = f", {SEED_PROPERTY}: {end}Seed" if seeded else ""
        return f"{{naId: {end}.{Prop.NA_ID}{seed}}}"

    return (
        rows
        + f"""
RETURN gds.graph.project(
    $graph_name, source, target,
    {{sourceNodeProperties: {node("source")},
      targetNodeProperties: CASE WHEN target IS NULL THEN null ELSE {node("target")} END,
      relationshipProperties: CASE WHEN target IS NULL THEN null
                                   ELSE {{weight: weight}} END}},
    {{undirectedRelationshipTypes: ['*']}}
)
"""
    )


#: The projection Leiden runs on, each node with its naId alone. The seeds' lookups (two per
#: edge row) took half of a seeded projection's time at 10^6 records (128 s against 68 s), so
#: they are made only for a seeded run.
PROJECT = _project(_PROJECTION_ROWS, seeded=False)
#: Each record's level-0 community of the last run, as the number in its id: what a seeded
#: run starts from. Ids are canonical (the smallest member's naId), so a record in none
#: starts alone under its own naId and never joins another community by accident of
#: numbering. Read before the ordering, so that the rows reach GDS in `_PROJECTION_ROWS`' order
#: (the unseeded projection's: the same nodes and edges, numbered alike).
_LEVEL_0 = f"{Label.COMMUNITY} {{{CommunityProp.LEVEL}: 0}}"
PROJECT_SEEDED = _project(
    _PROJECTION_ROWS.replace(
        "WITH source, target, weight ORDER BY",
        f"""OPTIONAL MATCH (source)-[:{Rel.IN_COMMUNITY}]->(sc:{_LEVEL_0})
OPTIONAL MATCH (target)-[:{Rel.IN_COMMUNITY}]->(tc:{_LEVEL_0})
WITH source, target, weight,
     coalesce(toInteger(split(sc.{CommunityProp.ID}, '-')[1]), source.{Prop.NA_ID}) AS sourceSeed,
     coalesce(toInteger(split(tc.{CommunityProp.ID}, '-')[1]), target.{Prop.NA_ID}) AS targetSeed
WITH source, target, weight, sourceSeed, targetSeed ORDER BY""",
    ),
    seeded=True,
)
#: The rows the projection is made of, in its order (what Leiden reads), one row per source
#: record with its edges ([target naId or null, weight], in order), its row hash and its face:
#: streamed into digests, never held whole. A row per record rather than per edge: decoding
#: the rows cost more than the query.
PROJECTION_STREAM = (
    _PROJECTION_ROWS
    + f"""WITH source, collect([target.{Prop.NA_ID}, weight]) AS edges
ORDER BY source.{Prop.NA_ID}
RETURN source.{Prop.NA_ID} AS source, edges, source.{Prop.ROW_HASH} AS rowHash,
       [coalesce(source.{Prop.HEADING}, source.{Prop.TITLE}), source.{Prop.NODE_TYPE}] AS face
"""
)
#: :data:`PROJECTION_STREAM` of the records whose naIds are in `$ids` alone: what an
#: incremental run reads of the records the writers touched.
PROJECTION_STREAM_OF_RECORDS = PROJECTION_STREAM.replace(
    f"MATCH (source:{Label.CHUNK} {{{Prop.CHUNK_SEQ_ID}: 0}})",
    f"UNWIND $ids AS id\nMATCH (source:{Label.CHUNK} {{{Prop.CHUNK_ID}: toString(id) + '-0'}})",
    1,
)

#: The communities in the graph, their members' hashes, how many records point at one and how
#: many communities at a parent. The two counts name one end's label only, so Neo4j answers them
#: from its count store: with both ends' labels it expanded every membership (0.49 s at 5 x 10^4
#: records and linear in them, twice a build: here and in community_reports). IN_COMMUNITY only
#: ever leaves a first chunk or a community for a community (nara_kg.graph.community_memberships).
COMMUNITY_STATE = f"""
MATCH (c:{Label.COMMUNITY})
WITH c ORDER BY c.{CommunityProp.ID}
WITH collect([c.{CommunityProp.ID}, c.{CommunityProp.MEMBER_HASH}]) AS communities
CALL () {{
  MATCH (:{Label.CHUNK})-[r:{Rel.IN_COMMUNITY}]->()
  RETURN count(r) AS members
}}
CALL () {{
  MATCH (:{Label.COMMUNITY})-[r:{Rel.IN_COMMUNITY}]->()
  RETURN count(r) AS parentLinks
}}
RETURN communities, members, parentLinks
"""

COMMUNITY_SCHEMA = (
    f"CREATE CONSTRAINT {Index.COMMUNITY_ID_CONSTRAINT} IF NOT EXISTS "
    f"FOR (c:{Label.COMMUNITY}) REQUIRE c.{CommunityProp.ID} IS UNIQUE",
)


#: The in-memory property Leiden writes each node's community ids into, finest level first.
_LEIDEN_LEVELS: Final = "leidenLevels"

#: Each projected node's naId (carried as a property: GDS numbers nodes by the store's ids)
#: and Leiden levels, in one pass over the projection's nodes.
LEIDEN_ASSIGNMENTS = f"""
CALL gds.degree.stream($graph_name) YIELD nodeId
RETURN gds.util.nodeProperty($graph_name, nodeId, 'naId') AS naId,
       gds.util.nodeProperty($graph_name, nodeId, '{_LEIDEN_LEVELS}') AS levels
"""


@dataclass
class LeidenResult:
    nodes: int
    relationships: int
    #: Each node's intermediateCommunityIds; index 0 = finest level.
    assignments: Assignments
    ran_levels: int
    modularities: list[float]
    #: Whether Leiden started from the last run's communities.
    seeded: bool = False


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class ProjectionDigests:
    """Digests of the projection Leiden runs on, combined from each projected record's."""

    #: Each record's edges (target, weight) and the configuration: equal, Leiden
    #: (deterministic, see LEIDEN_CONFIG) can only find what it found before.
    projection: str
    #: Each projected record's row hash: what the reports read of their members.
    content: str
    #: Projected records (first chunks).
    records: int


#: One projected record as the projection stream shows it: its naId, its row hash, its face
#: (what a report shows of it where it is not a member: its heading or title and its type) and
#: its edges ((target naId, weight), in the projection's order; empty for a record with none).
ProjectedRecord = tuple[int, str | None, Any, tuple[tuple[int, float], ...]]

#: Per-record digests are 128-bit numbers, combined by addition modulo 2**128.
_MODULUS: Final = 1 << 128


def _digest128(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "big")


def record_projection_digest(record: ProjectedRecord) -> int:
    """What Leiden reads of one record: its naId and its edges, in the projection's order."""
    na_id, _, _, edges = record
    return _digest128(f"{int(na_id)}:" + ";".join(f"{t},{float(w)!r}" for t, w in edges))


def record_content_digest(na_id: int, row_hash: str | None) -> int:
    """What the reports read of one record's own row: its naId and row hash."""
    return _digest128(f"{int(na_id)},{row_hash}")


@cache
def hierarchy_code_digest() -> str:
    """A digest of the code that turns Leiden's levels into the communities the graph holds
    (ids, sizes, parents, memberships): it is part of the projection's digest, so that after a
    change to that code Leiden runs again and writes what a full build would, rather than being
    skipped over communities the old code wrote."""
    return source_digest(
        [
            Path(community_hierarchy.__file__),
            Path(__file__).with_name("community_memberships.py"),
        ]
    )


@dataclass
class DigestSums:
    """The projection's digests as sums of its records' (:func:`record_projection_digest`,
    :func:`record_content_digest`) modulo 2**128: order-independent, so that a record that
    changed updates them alone (minus its old digest, plus its new one) and the result equals
    the sums a stream of the whole projection makes.

    Why a sum is safe enough: the digests are SHA-256 (truncated to 128 bits) of distinct
    inputs (each names its naId), so two projections give equal sums only when the changed
    records' differences cancel modulo 2**128, a chance of 2**-128 per change for data nobody
    crafted to collide. A sum, unlike an XOR, is not undone by linear algebra over a few
    hundred records, and a record counted twice does not cancel out. (The sum would not resist
    a forger with a generalized-birthday attack; archival records are not one, and a collision
    only skips a Leiden run.)"""

    projection: int = 0
    content: int = 0
    records: int = 0

    def add(self, projection: int, content: int) -> None:
        self.projection = (self.projection + projection) % _MODULUS
        self.content = (self.content + content) % _MODULUS
        self.records += 1

    def remove(self, projection: int, content: int) -> None:
        self.projection = (self.projection - projection) % _MODULUS
        self.content = (self.content - content) % _MODULUS
        self.records -= 1

    def add_record(self, record: ProjectedRecord) -> None:
        self.add(record_projection_digest(record), record_content_digest(record[0], record[1]))

    def digests(self) -> ProjectionDigests:
        return ProjectionDigests(
            projection=_digest(
                [_digest(LEIDEN_CONFIG), hierarchy_code_digest(), f"{self.projection:032x}"]
            ),
            content=_digest([self.records, f"{self.content:032x}"]),
            records=self.records,
        )


def projection_digests(
    rows: Iterable[Sequence[Any]],
    on_record: Callable[[ProjectedRecord], None] | None = None,
) -> ProjectionDigests:
    """:class:`ProjectionDigests` of `rows` ([source naId, target naId or None, weight, source
    row hash, optionally the source's face], grouped by source), taken one by one: nothing but
    the sums and one record's edges is held, whatever the graph's size. `on_record` is given
    each record as its rows end."""
    return projection_sums(rows, on_record).digests()


def projection_sums(
    rows: Iterable[Sequence[Any]],
    on_record: Callable[[ProjectedRecord], None] | None = None,
) -> DigestSums:
    """The :class:`DigestSums` behind :func:`projection_digests`."""
    sums = DigestSums()
    for record in projected_records(rows):
        sums.add_record(record)
        if on_record is not None:
            on_record(record)
    return sums


def projected_records(rows: Iterable[Sequence[Any]]) -> Iterator[ProjectedRecord]:
    """The records of `rows` (as :func:`projection_digests` takes them), one per source."""
    current: Any = None
    edges: list[tuple[int, float]] = []
    for source, target, weight, row_hash, *face in rows:
        if current is None or source != current[0]:
            if current is not None:
                yield (current[0], current[1], current[2], tuple(edges))
            current, edges = (source, row_hash, face[0] if face else None), []
        if target is not None:
            edges.append((int(target), float(weight)))
    if current is not None:
        yield (current[0], current[1], current[2], tuple(edges))


def _stream_rows(result: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    return (
        (r["source"], target, weight, r["rowHash"], r["face"])
        for r in result
        for target, weight in r["edges"]
    )


def read_projection_digests(
    driver: Driver,
    database: str,
    on_record: Callable[[ProjectedRecord], None] | None = None,
) -> ProjectionDigests:
    """:func:`projection_digests` of the graph's whole projection, read as one stream."""
    return read_projection_sums(driver, database, on_record).digests()


def read_projection_sums(
    driver: Driver,
    database: str,
    on_record: Callable[[ProjectedRecord], None] | None = None,
) -> DigestSums:
    """:func:`projection_sums` of the graph's whole projection, read as one stream."""
    with driver.session(database=database, default_access_mode="READ") as session:
        return projection_sums(_stream_rows(session.run(PROJECTION_STREAM)), on_record)


#: Keys per query of :func:`read_projected_records`.
RECORDS_PER_QUERY: Final = 5_000


def read_projected_records(
    driver: Driver, database: str, na_ids: Sequence[int]
) -> Iterator[tuple[list[int], list[ProjectedRecord]]]:
    """The projected records of `na_ids` (sorted), a batch at a time: each batch of naIds
    asked with the records of those the graph holds (through the chunkId constraint; a naId
    without a first chunk has none)."""
    with driver.session(database=database, default_access_mode="READ") as session:
        for start in range(0, len(na_ids), RECORDS_PER_QUERY):
            asked = list(na_ids[start : start + RECORDS_PER_QUERY])
            result = session.run(PROJECTION_STREAM_OF_RECORDS, ids=asked)
            yield asked, list(projected_records(_stream_rows(result)))


def community_state(driver: Driver, database: str) -> dict[str, Any]:
    """The Community nodes' ids and member hashes (`communities`, by id) and the numbers of
    memberships (`members`) and of parent links (`parentLinks`) in the graph now."""
    state: dict[str, Any] = dict(read_all(driver, database, COMMUNITY_STATE)[0])
    return state


def digest_of_state(state: dict[str, Any]) -> str:
    """A digest of a :func:`community_state`."""
    return _digest([state["communities"], state["members"], state["parentLinks"]])


def community_state_digest(driver: Driver, database: str) -> str:
    """A digest of the Community nodes and memberships in the graph now."""
    return digest_of_state(community_state(driver, database))


def projection_exists(gds: GraphDataScience) -> bool:
    return bool(gds.graph.exists(GDS_PROJECTION))


#: What GDS 2.13 raises when a seeded Leiden finds nothing to move (the seed is already a
#: local optimum): it then has no levels to report.
_SEED_ALREADY_OPTIMAL = "dendrogramManager"


@dataclass(frozen=True)
class Projection:
    """The GDS projection Leiden runs on, as :func:`project` made it."""

    graph: Any
    nodes: int
    relationships: int
    #: Whether the nodes carry their seeds (SEED_PROPERTY).
    seeded: bool


def project(gds: GraphDataScience, *, seeded: bool = False) -> Projection:
    """Project the graph Leiden reads (by the traversal), replacing one left behind. The
    caller drops it (:func:`cluster` does)."""
    if projection_exists(gds):
        gds.graph.drop(GDS_PROJECTION)
    graph, projected = gds.graph.project.cypher(
        PROJECT_SEEDED if seeded else PROJECT, graph_name=GDS_PROJECTION
    )
    return Projection(graph, projected.node_count, projected.relationship_count, seeded)


def cluster(
    gds: GraphDataScience, driver: Driver, database: str, projection: Projection
) -> LeidenResult:
    """Leiden over `projection`, which is dropped afterwards, also when anything fails. A
    seeded projection starts from the last run's level-0 communities (SEED_PROPERTY), so that
    regions the change did not reach keep them; when GDS finds the seed already optimal it
    reports no levels, and Leiden runs again unseeded (`LeidenResult.seeded` False)."""
    graph, seeded = projection.graph, projection.seeded
    node_count, relationship_count = projection.nodes, projection.relationships
    try:
        if relationship_count == 0:
            # Leiden needs edges; with none every record is its own singleton community.
            return LeidenResult(node_count, 0, Assignments.of([]), 0, [])
        # Leiden runs once, into the projection, and one query reads its levels and the naIds
        # back, through the driver into arrays: a data frame of it held 10^6 lists of levels.
        mutated = None
        if seeded:
            try:
                mutated = gds.leiden.mutate(
                    graph,
                    mutate_property=_LEIDEN_LEVELS,
                    seed_property=SEED_PROPERTY,
                    **LEIDEN_CONFIG,
                )
            except Exception as error:  # the client wraps the server's error as it likes
                if _SEED_ALREADY_OPTIMAL not in str(error):
                    raise
                seeded = False
        if mutated is None:
            mutated = gds.leiden.mutate(graph, mutate_property=_LEIDEN_LEVELS, **LEIDEN_CONFIG)
        return LeidenResult(
            nodes=node_count,
            relationships=relationship_count,
            assignments=read_assignments(driver, database, node_count, int(mutated.ran_levels)),
            ran_levels=int(mutated.ran_levels),
            modularities=[float(m) for m in mutated.modularities],
            seeded=seeded,
        )
    finally:
        gds.graph.drop(graph)


def read_assignments(driver: Driver, database: str, nodes: int, width: int) -> Assignments:
    """The projection's Leiden levels (:data:`LEIDEN_ASSIGNMENTS`), streamed into arrays of
    `nodes` rows and `width` levels (widened if a node has more)."""
    na_ids = np.zeros(nodes, dtype=np.int64)
    levels = np.full((nodes, width), NO_COMMUNITY, dtype=np.int64)
    row = 0
    with driver.session(database=database, default_access_mode="READ") as session:
        for record in session.run(LEIDEN_ASSIGNMENTS, graph_name=GDS_PROJECTION):
            ids = record["levels"]
            if len(ids) > levels.shape[1]:
                extra = len(ids) - levels.shape[1]
                levels = np.pad(levels, ((0, 0), (0, extra)), constant_values=NO_COMMUNITY)
            na_ids[row] = record["naId"]
            levels[row, : len(ids)] = ids
            row += 1
    return Assignments(na_ids[:row], levels[:row])
