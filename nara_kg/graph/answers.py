"""Reads behind grounded answers: the facts of a few retrieved records (properties, every
chunk's text, ancestors, children counted by level over `Includes`) and a record by naId."""

from __future__ import annotations

from typing import Any

from neo4j import Driver

from nara_kg.model.schema import Label, Prop, Rel

#: Properties never read as facts (vectors, hashes, bookkeeping).
_SKIPPED = [
    Prop.EMBEDDING,
    Prop.TEXT,
    Prop.TEXT_HASH,
    Prop.ROW_HASH,
    Prop.EMBEDDING_KEY,
    Prop.FILE_NAME,
    Prop.LINE_NUM,
]

RECORD_FACTS = f"""
UNWIND range(0, size($naIds) - 1) AS rank
MATCH (first:{Label.CHUNK} {{{Prop.CHUNK_ID}: toString($naIds[rank]) + '-0'}})
CALL (first) {{
    MATCH (c:{Label.CHUNK} {{{Prop.NA_ID}: first.{Prop.NA_ID}}})
    WITH c ORDER BY c.{Prop.CHUNK_SEQ_ID}
    RETURN collect(c.{Prop.TEXT}) AS texts
}}
CALL (first) {{
    UNWIND range(0, size(coalesce(first.{Prop.ANCESTORS}, [])) - 1) AS i
    MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_ID}: toString(first.{Prop.ANCESTORS}[i]) + '-0'}})
    WITH a, i ORDER BY i
    RETURN collect(a {{
        .{Prop.NA_ID}, .{Prop.TITLE}, .{Prop.LEVEL_OF_DESCRIPTION},
        .logicalDate_inclusiveStartDate, .logicalDate_inclusiveEndDate,
        .logicalDate_coverageStartDate, .logicalDate_coverageEndDate,
        .name_referenceUnits, .recordGroupNumber
    }}) AS ancestors
}}
CALL (first) {{
    OPTIONAL MATCH (first)-[:{Rel.INCLUDES}]->(child:{Label.CHUNK})
    WITH coalesce(child.{Prop.LEVEL_OF_DESCRIPTION}, child.{Prop.NODE_TYPE}) AS level,
         count(child) AS n
    WHERE level IS NOT NULL
    RETURN collect([level, n]) AS children
}}
CALL (first) {{
    OPTIONAL MATCH (authority:{Label.CHUNK})-[r]->(first)
    WHERE authority.{Prop.HEADING} IS NOT NULL AND type(r) IN $authorityRels
    RETURN collect(DISTINCT [type(r), authority.{Prop.HEADING},
                             authority.{Prop.AUTHORITY_TYPE}]) AS authorities
}}
RETURN rank, first.{Prop.NA_ID} AS naId,
       [k IN keys(first) WHERE NOT k IN $skipped | [k, first[k]]] AS properties,
       texts, ancestors, children, authorities
ORDER BY rank
"""


def record_facts(
    driver: Driver, database: str, na_ids: list[int], authority_rels: list[str]
) -> list[dict[str, Any]]:
    """Each record's facts, in the order of `na_ids` (an unknown naId is left out)."""
    if not na_ids:
        return []
    records, _, _ = driver.execute_query(
        RECORD_FACTS,
        naIds=na_ids,
        skipped=_SKIPPED,
        authorityRels=authority_rels,
        database_=database,
        routing_="r",
    )
    rows = [record.data() for record in records]
    for row in rows:
        row["properties"] = dict(row["properties"])
    return rows
