"""Retrieval Cypher: seed 000's query, made hybrid (vector + full-text candidates).

The seed widened each vector hit by one `Next` chunk on each side, walked `Includes` up to the
root of the hierarchy and collected related authorities; it joined texts with `apoc.text.join`,
which this server does not have, so the join happens in Python.
"""

from __future__ import annotations

from typing import Any

from neo4j import Driver

from nara_kg.graph.batches import read_all
from nara_kg.schema import (
    AUTHORITY_RELATIONSHIPS,
    FULLTEXT_INDEX,
    VECTOR_INDEX,
    Label,
    Prop,
)

VECTOR_CANDIDATES = f"""
CALL db.index.vector.queryNodes('{VECTOR_INDEX}', $k, $vector) YIELD node, score
RETURN node.{Prop.CHUNK_ID} AS chunkId, node.{Prop.NA_ID} AS naId, score
"""

FULLTEXT_CANDIDATES = f"""
CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $query, {{limit: $k}}) YIELD node, score
RETURN node.{Prop.CHUNK_ID} AS chunkId, node.{Prop.NA_ID} AS naId, score
"""

_TEXT = Label.RECORD_WITH_TEXT
_AUTHORITY_TYPES = "|".join(rel.value for rel in AUTHORITY_RELATIONSHIPS)

#: Seed 000's retrieval query over a given list of hit chunks.
EXPAND_HITS = f"""
UNWIND $chunkIds AS hitId
MATCH (node:{Label.CHUNK} {{{Prop.CHUNK_ID}: hitId}})
CALL (node) {{
    MATCH window = (:{_TEXT})-[:Next*0..1]->(node)-[:Next*0..1]->(:{_TEXT})
    WITH window
    ORDER BY length(window) DESC
    LIMIT 1
    RETURN [n IN nodes(window) | n.{Prop.TEXT}] AS textList
}}
MATCH (first:{Label.CHUNK} {{{Prop.NA_ID}: node.{Prop.NA_ID}, {Prop.CHUNK_SEQ_ID}: 0}})
CALL (first) {{
    OPTIONAL MATCH path = (root:{Label.CHUNK})-[:Includes*0..12]->(first)
    WHERE NOT (root)<-[:Includes]-()
    RETURN [n IN nodes(path) | n {{
        .{Prop.NA_ID}, .{Prop.RECORD_TYPE}, .{Prop.LEVEL_OF_DESCRIPTION}, .{Prop.TITLE},
        .logicalDate_inclusiveStartDate, .logicalDate_inclusiveEndDate,
        .logicalDate_coverageStartDate, .logicalDate_coverageEndDate, .{Prop.SOURCE}
    }}] AS hierarchy
    ORDER BY length(path) DESC
    LIMIT 1
}}
CALL (first) {{
    OPTIONAL MATCH (authority:{Label.CHUNK})-[r:{_AUTHORITY_TYPES}]->(first)
    RETURN collect(DISTINCT authority {{
        relationship: type(r), .{Prop.NA_ID}, .{Prop.AUTHORITY_TYPE}, .{Prop.HEADING},
        .{Prop.SOURCE}
    }}) AS authorities
}}
RETURN hitId AS chunkId, node.{Prop.NA_ID} AS naId, textList,
       coalesce(first.{Prop.TITLE}, first.{Prop.HEADING}) AS title,
       first.{Prop.NODE_TYPE} AS nodeType, first.{Prop.RECORD_TYPE} AS recordType,
       first.{Prop.SOURCE} AS source, coalesce(first.{Prop.IS_STUB}, false) AS isStub,
       hierarchy, authorities
"""


def vector_candidates(
    driver: Driver, database: str, vector: list[float], k: int
) -> list[dict[str, Any]]:
    return list(read_all(driver, database, VECTOR_CANDIDATES, k=k, vector=vector))


def fulltext_candidates(driver: Driver, database: str, query: str, k: int) -> list[dict[str, Any]]:
    if not query.strip():
        return []
    return list(read_all(driver, database, FULLTEXT_CANDIDATES, k=k, query=query))


def expand_hits(driver: Driver, database: str, chunk_ids: list[str]) -> list[dict[str, Any]]:
    return list(read_all(driver, database, EXPAND_HITS, chunkIds=chunk_ids))
