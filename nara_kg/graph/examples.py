"""What the chat page offers a first-time reader to ask: records and authorities of the loaded
graph that questions can be made from (the largest containers, the most linked authorities)."""

from __future__ import annotations

from typing import Any

from neo4j import Driver

from nara_kg.graph.batches import read_all
from nara_kg.model.schema import AUTHORITY_RELATIONSHIPS, Label, Prop, Rel

_AUTHORITY_TYPES = "|".join(rel.value for rel in AUTHORITY_RELATIONSHIPS)

#: Full (not stub) containers, most children first, each with whether a creator is recorded.
CONTAINERS = f"""
MATCH (c:{Label.CHUNK} {{{Prop.CHUNK_SEQ_ID}: 0}})
WHERE c.{Prop.LEVEL_OF_DESCRIPTION} IN ['series', 'recordGroup', 'collection']
  AND NOT coalesce(c.{Prop.IS_STUB}, false) AND c.{Prop.TITLE} IS NOT NULL
WITH c, COUNT {{ (c)-[:{Rel.INCLUDES}]->() }} AS children
ORDER BY children DESC, c.{Prop.NA_ID}
LIMIT $limit
RETURN c.{Prop.NA_ID} AS naId, c.{Prop.TITLE} AS title,
       c.{Prop.LEVEL_OF_DESCRIPTION} AS level, children,
       EXISTS {{ (:{Label.CHUNK})-[:{Rel.CREATOR}]->(c) }} AS hasCreator
"""

#: Authorities (people, organizations, subjects, places) related to the most records.
AUTHORITIES = f"""
MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_SEQ_ID}: 0}})
WHERE a.{Prop.AUTHORITY_TYPE} IN
      ['person', 'organization', 'topicalSubject', 'geographicPlaceName']
  AND a.{Prop.HEADING} IS NOT NULL
WITH a, COUNT {{ (a)-[:{_AUTHORITY_TYPES}]->() }} AS records
WHERE records > 0
ORDER BY records DESC, a.{Prop.NA_ID}
LIMIT $limit
RETURN a.{Prop.NA_ID} AS naId, a.{Prop.HEADING} AS heading,
       a.{Prop.AUTHORITY_TYPE} AS authorityType, records
"""

COMMUNITIES = f"MATCH (m:{Label.COMMUNITY}) RETURN count(m) > 0 AS any"


def containers(driver: Driver, database: str, limit: int) -> list[dict[str, Any]]:
    return list(read_all(driver, database, CONTAINERS, limit=limit))


def authorities(driver: Driver, database: str, limit: int) -> list[dict[str, Any]]:
    return list(read_all(driver, database, AUTHORITIES, limit=limit))


def has_communities(driver: Driver, database: str) -> bool:
    rows = read_all(driver, database, COMMUNITIES)
    return bool(rows and rows[0]["any"])
