"""MENTIONED_IN in Neo4j: read back, written and deleted by pairs (the by-difference writer is
:mod:`nara_kg.build.mention_sync`), and walked from a question's entities (the authorities it
names) to the records around them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from neo4j import Driver

from nara_kg.graph.batches import ListedRead, read_listed, write_batches
from nara_kg.model.schema import (
    AUTHORITY_RELATIONSHIPS,
    AUTHORITY_TYPES,
    Label,
    MentionProp,
    Prop,
    Rel,
)

#: (authority's first chunk, mentioning chunk) -> (count, surface).
DesiredMentions = dict[tuple[str, str], tuple[int, str]]

#: Every MENTIONED_IN (the LLM's too), from the count store.
MENTION_COUNT = f"MATCH ()-[r:{Rel.MENTIONED_IN}]->() RETURN count(r) AS n"


def iter_mentions(driver: Driver, database: str) -> Iterator[tuple[str, str, int, str]]:
    """The linker's MENTIONED_IN (not the LLM's), streamed: (authority chunk, chunk, count,
    surface)."""
    with driver.session(database=database, default_access_mode="READ") as session:
        result = session.run(
            f"MATCH (a:{Label.CHUNK})-[r:{Rel.MENTIONED_IN}]->(b:{Label.CHUNK}) "
            f"WHERE r.{MentionProp.SOURCE} IS NULL "
            f"RETURN a.{Prop.CHUNK_ID} AS a, b.{Prop.CHUNK_ID} AS b, "
            f"r.{MentionProp.COUNT} AS count, r.{MentionProp.SURFACE} AS surface"
        )
        for record in result:
            yield record["a"], record["b"], record["count"], record["surface"]


def existing_mentions(driver: Driver, database: str) -> DesiredMentions:
    """:func:`iter_mentions` as one dict (a small graph's: tests compare whole sets)."""
    return {(a, b): (count, surface) for a, b, count, surface in iter_mentions(driver, database)}


def mentions_into(driver: Driver, database: str, chunk_ids: list[str]) -> DesiredMentions:
    """The linker's MENTIONED_IN (not the LLM's) ending at the given chunks (by chunkId)."""
    found: DesiredMentions = {}
    for batch in (chunk_ids[i : i + 5_000] for i in range(0, len(chunk_ids), 5_000)):
        records, _, _ = driver.execute_query(
            f"UNWIND $ids AS id MATCH (a:{Label.CHUNK})-[r:{Rel.MENTIONED_IN}]->"
            f"(b:{Label.CHUNK} {{{Prop.CHUNK_ID}: id}}) WHERE r.{MentionProp.SOURCE} IS NULL "
            f"RETURN a.{Prop.CHUNK_ID} AS a, b.{Prop.CHUNK_ID} AS b, "
            f"r.{MentionProp.COUNT} AS count, r.{MentionProp.SURFACE} AS surface",
            ids=batch,
            database_=database,
            routing_="r",
        )
        for r in records:
            found[(r["a"], r["b"])] = (r["count"], r["surface"])
    return found


def mention_pairs_of_records(
    driver: Driver, database: str, na_ids: list[int]
) -> set[tuple[int, int]]:
    """(record naId, authority naId) of the linker's MENTIONED_IN into the given records'
    chunks (through the naId index)."""
    found: set[tuple[int, int]] = set()
    for batch in (na_ids[i : i + 5_000] for i in range(0, len(na_ids), 5_000)):
        records, _, _ = driver.execute_query(
            f"UNWIND $ids AS id MATCH (a:{Label.CHUNK})-[r:{Rel.MENTIONED_IN}]->"
            f"(b:{Label.CHUNK} {{{Prop.NA_ID}: id}}) WHERE r.{MentionProp.SOURCE} IS NULL "
            f"RETURN DISTINCT b.{Prop.NA_ID} AS record, a.{Prop.NA_ID} AS authority",
            ids=batch,
            database_=database,
            routing_="r",
        )
        found.update((r["record"], r["authority"]) for r in records)
    return found


def write_mentions(driver: Driver, database: str, rows: list[list[Any]]) -> int:
    """Rows are [authority chunk, chunk, count, surface]: created, or their properties set."""
    return write_batches(
        driver,
        database,
        f"UNWIND $rows AS e "
        f"MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[0]}}) "
        f"MATCH (b:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[1]}}) "
        # Not MERGE: it would adopt an LLM-extracted MENTIONED_IN between the same nodes.
        f"OPTIONAL MATCH (a)-[old:{Rel.MENTIONED_IN}]->(b) WHERE old.{MentionProp.SOURCE} IS NULL "
        f"FOREACH (_ IN CASE WHEN old IS NULL THEN [1] ELSE [] END | "
        f"CREATE (a)-[:{Rel.MENTIONED_IN} "
        f"{{{MentionProp.COUNT}: e[2], {MentionProp.SURFACE}: e[3]}}]->(b)) "
        f"SET old.{MentionProp.COUNT} = e[2], old.{MentionProp.SURFACE} = e[3]",
        rows,
        batch_size=5_000,
    )


def delete_mentions(driver: Driver, database: str, edges: list[list[str]]) -> int:
    """Deletes the linker's MENTIONED_IN (not the LLM's) between the [authority, chunk] pairs."""
    return write_batches(
        driver,
        database,
        f"UNWIND $rows AS e "
        f"MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[0]}})-[r:{Rel.MENTIONED_IN}]->"
        f"(b:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[1]}}) "
        f"WHERE r.{MentionProp.SOURCE} IS NULL DELETE r",
        edges,
        batch_size=5_000,
    )


def record_mention_pairs(driver: Driver, database: str) -> set[tuple[int, int]]:
    """(record naId, authority naId) of every MENTIONED_IN the linker wrote (not the LLM's)."""
    with driver.session(database=database, default_access_mode="READ") as session:
        result = session.run(
            f"MATCH (a:{Label.CHUNK})-[r:{Rel.MENTIONED_IN}]->(b:{Label.CHUNK}) "
            f"WHERE r.{MentionProp.SOURCE} IS NULL "
            f"RETURN DISTINCT b.{Prop.NA_ID} AS record, a.{Prop.NA_ID} AS authority"
        )
        return {(r["record"], r["authority"]) for r in result}


# --- Retrieval through entities (nara_kg.retrieval.entity_path) -------------------------------

_AUTHORITY_LABELS = "|".join(sorted(AUTHORITY_TYPES))
_REFERENCES = "|".join(rel.value for rel in AUTHORITY_RELATIONSHIPS)

#: Nodes per authority label, from the count store (constant time): the cheap signature that
#: tells a cached linker is still the graph's.
AUTHORITY_COUNTS = " UNION ALL ".join(
    f"MATCH (c:`{label}`) RETURN '{label}' AS label, count(c) AS n"
    for label in sorted(AUTHORITY_TYPES)
)

#: Every authority's first chunk, its properties without the vector (what the linker reads).
AUTHORITY_FIRST_CHUNKS = f"""
MATCH (c:{_AUTHORITY_LABELS})
WHERE c.{Prop.CHUNK_SEQ_ID} = 0
RETURN c {{.*, {Prop.EMBEDDING}: null, {Prop.TEXT}: null}} AS props
ORDER BY c.{Prop.NA_ID}
"""

#: Each anchor's out-degree over MENTIONED_IN and the authority relationships and, when that
#: is at most $maxDegree, the chunks that mention it (most mentions first) and the records it is
#: a creator, subject, ... of, each capped at $perAnchor: [naId, chunkId, type, count] lists.
ANCHOR_NEIGHBOURS = ListedRead(
    ("anchor", "degree", "edges"),
    f"""
UNWIND $chunkIds AS id
MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_ID}: id}})
WITH a, COUNT {{ (a)-[:{Rel.MENTIONED_IN}|{_REFERENCES}]->() }} AS degree
CALL (a, degree) {{
  MATCH (a)-[m:{Rel.MENTIONED_IN}]->(c:{Label.CHUNK}) WHERE degree <= $maxDegree
  WITH c, m ORDER BY m.{MentionProp.COUNT} DESC, c.{Prop.CHUNK_ID} LIMIT $perAnchor
  RETURN collect([c.{Prop.NA_ID}, c.{Prop.CHUNK_ID}, type(m), m.{MentionProp.COUNT}]) AS mentions
}}
CALL (a, degree) {{
  MATCH (a)-[r:{_REFERENCES}]->(c:{Label.CHUNK}) WHERE degree <= $maxDegree
  WITH c, r ORDER BY c.{Prop.NA_ID}, type(r) LIMIT $perAnchor
  RETURN collect([c.{Prop.NA_ID}, c.{Prop.CHUNK_ID}, type(r), 0]) AS related
}}
RETURN a.{Prop.NA_ID} AS anchor, degree, mentions + related AS edges
""",
)


def authority_signature(driver: Driver, database: str) -> tuple[tuple[str, int], ...]:
    with driver.session(database=database, default_access_mode="READ") as session:
        return tuple((r["label"], r["n"]) for r in session.run(AUTHORITY_COUNTS))


def authority_properties(driver: Driver, database: str) -> list[dict[str, Any]]:
    with driver.session(database=database, default_access_mode="READ") as session:
        return [dict(r["props"]) for r in session.run(AUTHORITY_FIRST_CHUNKS)]


def anchor_neighbours(
    driver: Driver, database: str, chunk_ids: list[str], per_anchor: int, max_degree: int
) -> list[dict[str, Any]]:
    """Rows of :data:`ANCHOR_NEIGHBOURS`: anchor, degree, edges."""
    return read_listed(
        driver,
        database,
        ANCHOR_NEIGHBOURS,
        chunkIds=chunk_ids,
        perAnchor=per_anchor,
        maxDegree=max_degree,
    )
