"""What entity_extraction writes, made equal to a desired state by difference: Entity nodes,
RELATED between extracted entities, and MENTIONED_IN {source: "llm"} from an entity (an Entity
node or an authority's first chunk) to the chunk it was extracted from.

An endpoint is `["entity", entityId]` or `["chunk", chunkId]`; the linker's MENTIONED_IN (no
`source`) are never read or deleted here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from neo4j import Driver

from nara_kg.graph.batches import write_batches, write_one
from nara_kg.model.schema import LLM_SOURCE, EntityProp, Index, Label, MentionProp, Prop, Rel

ENTITY_SCHEMA: Final = (
    f"CREATE CONSTRAINT {Index.ENTITY_ID_CONSTRAINT} IF NOT EXISTS "
    f"FOR (n:{Label.ENTITY}) REQUIRE n.{EntityProp.ID} IS UNIQUE"
)

#: (kind, key): ("entity", entityId) or ("chunk", chunkId).
Endpoint = tuple[str, str]
#: entityId -> (name, type, description).
DesiredEntities = dict[str, tuple[str, str, str]]
#: (source, target) -> (description, weight).
DesiredRelated = dict[tuple[Endpoint, Endpoint], tuple[str, float]]
#: (entity endpoint, chunkId) -> (count, surface).
DesiredExtractedMentions = dict[tuple[Endpoint, str], tuple[int, str]]


@dataclass(frozen=True)
class ExtractionSync:
    entities: int
    relations: int
    mentions: int
    written: int
    removed: int


def _endpoint(expr: str, name: str) -> str:
    """Cypher binding `name` to the node an endpoint list `expr` denotes (null if none)."""
    return (
        f"OPTIONAL MATCH ({name}_e:{Label.ENTITY} {{{EntityProp.ID}: {expr}[1]}}) "
        f"WHERE {expr}[0] = 'entity' "
        f"OPTIONAL MATCH ({name}_c:{Label.CHUNK} {{{Prop.CHUNK_ID}: {expr}[1]}}) "
        f"WHERE {expr}[0] = 'chunk' "
        f"WITH *, coalesce({name}_e, {name}_c) AS {name} "
    )


_NODE_KEY = (
    f"CASE WHEN {{n}}:{Label.ENTITY} THEN ['entity', {{n}}.{EntityProp.ID}] "
    f"ELSE ['chunk', {{n}}.{Prop.CHUNK_ID}] END"
)


def _read(driver: Driver, database: str, query: str) -> list[dict[str, Any]]:
    with driver.session(database=database, default_access_mode="READ") as session:
        return [dict(r) for r in session.run(query)]


def sync_extraction(
    driver: Driver,
    database: str,
    entities: DesiredEntities,
    related: DesiredRelated,
    mentions: DesiredExtractedMentions,
) -> ExtractionSync:
    """Entities first (so relationships find them), then RELATED and MENTIONED_IN; what is no
    longer extracted is deleted, Entity nodes last (DETACH)."""
    write_one(driver, database, ENTITY_SCHEMA)
    current_entities = {
        r["id"]: (r["name"], r["type"], r["description"])
        for r in _read(
            driver,
            database,
            f"MATCH (n:{Label.ENTITY}) RETURN n.{EntityProp.ID} AS id, n.{EntityProp.NAME} AS "
            f"name, n.{EntityProp.TYPE} AS type, n.{EntityProp.DESCRIPTION} AS description",
        )
    }
    current_related = {
        (tuple(r["a"]), tuple(r["b"])): (r["description"], r["weight"])
        for r in _read(
            driver,
            database,
            f"MATCH (a)-[r:{Rel.RELATED}]->(b) RETURN {_NODE_KEY.format(n='a')} AS a, "
            f"{_NODE_KEY.format(n='b')} AS b, r.{EntityProp.DESCRIPTION} AS description, "
            f"r.{EntityProp.WEIGHT} AS weight",
        )
    }
    current_mentions = {
        (tuple(r["a"]), r["b"]): (r["count"], r["surface"])
        for r in _read(
            driver,
            database,
            f"MATCH (a)-[r:{Rel.MENTIONED_IN} {{{MentionProp.SOURCE}: '{LLM_SOURCE}'}}]->"
            f"(b:{Label.CHUNK}) RETURN {_NODE_KEY.format(n='a')} AS a, "
            f"b.{Prop.CHUNK_ID} AS b, r.{MentionProp.COUNT} AS count, "
            f"r.{MentionProp.SURFACE} AS surface",
        )
    }
    written = removed = 0
    rows: list[list[Any]] = [
        [key, *value]
        for key, value in sorted(entities.items())
        if current_entities.get(key) != value
    ]
    write_batches(
        driver,
        database,
        f"UNWIND $rows AS e MERGE (n:{Label.ENTITY} {{{EntityProp.ID}: e[0]}}) "
        f"SET n.{EntityProp.NAME} = e[1], n.{EntityProp.TYPE} = e[2], "
        f"n.{EntityProp.DESCRIPTION} = e[3]",
        rows,
        batch_size=5_000,
    )
    written += len(rows)
    rows = [
        [list(a), list(b), *value]
        for (a, b), value in sorted(related.items())
        if current_related.get((a, b)) != value
    ]
    write_batches(
        driver,
        database,
        "UNWIND $rows AS e "
        + _endpoint("e[0]", "a")
        + _endpoint("e[1]", "b")
        + f"WITH a, b, e WHERE a IS NOT NULL AND b IS NOT NULL "
        f"MERGE (a)-[r:{Rel.RELATED}]->(b) "
        f"SET r.{EntityProp.DESCRIPTION} = e[2], r.{EntityProp.WEIGHT} = e[3]",
        rows,
        batch_size=5_000,
    )
    written += len(rows)
    rows = [
        [list(a), chunk, *value]
        for (a, chunk), value in sorted(mentions.items())
        if current_mentions.get((a, chunk)) != value
    ]
    write_batches(
        driver,
        database,
        "UNWIND $rows AS e "
        + _endpoint("e[0]", "a")
        + f"MATCH (b:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[1]}}) WITH a, b, e WHERE a IS NOT NULL "
        f"MERGE (a)-[r:{Rel.MENTIONED_IN} {{{MentionProp.SOURCE}: '{LLM_SOURCE}'}}]->(b) "
        f"SET r.{MentionProp.COUNT} = e[2], r.{MentionProp.SURFACE} = e[3]",
        rows,
        batch_size=5_000,
    )
    written += len(rows)
    stale_related = [[list(a), list(b)] for a, b in sorted(set(current_related) - set(related))]
    write_batches(
        driver,
        database,
        "UNWIND $rows AS e "
        + _endpoint("e[0]", "a")
        + _endpoint("e[1]", "b")
        + f"MATCH (a)-[r:{Rel.RELATED}]->(b) DELETE r",
        stale_related,
        batch_size=5_000,
    )
    stale_mentions = [[list(a), b] for a, b in sorted(set(current_mentions) - set(mentions))]
    write_batches(
        driver,
        database,
        "UNWIND $rows AS e "
        + _endpoint("e[0]", "a")
        + f"MATCH (a)-[r:{Rel.MENTIONED_IN} {{{MentionProp.SOURCE}: '{LLM_SOURCE}'}}]->"
        f"(b:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[1]}}) DELETE r",
        stale_mentions,
        batch_size=5_000,
    )
    stale_entities = [[key] for key in sorted(set(current_entities) - set(entities))]
    write_batches(
        driver,
        database,
        f"UNWIND $rows AS e MATCH (n:{Label.ENTITY} {{{EntityProp.ID}: e[0]}}) DETACH DELETE n",
        stale_entities,
        batch_size=5_000,
    )
    removed = len(stale_related) + len(stale_mentions) + len(stale_entities)
    return ExtractionSync(len(entities), len(related), len(mentions), written, removed)
