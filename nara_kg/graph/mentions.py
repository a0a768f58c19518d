"""MENTIONED_IN in Neo4j: made equal to a desired set by difference, read back per record, and
walked from a question's entities (the authorities it names) to the records around them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from neo4j import Driver

from nara_kg.graph import sync_state
from nara_kg.graph.batches import ListedRead, read_listed, write_batches
from nara_kg.ingest.layout import WorkLayout
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


@dataclass(frozen=True)
class MentionSync:
    desired: int
    added: int
    updated: int
    removed: int
    #: "snapshot" (the last complete write, which the graph still holds) or "graph" (read back).
    existing_from: str = "graph"


#: The linker's concern in :mod:`nara_kg.graph.sync_state`; the count is of every MENTIONED_IN
#: (the LLM's too: when entity_extraction changes them, the graph is read back).
MENTIONS_CONCERN = "linker-mentions"
MENTION_COUNT = f"MATCH ()-[r:{Rel.MENTIONED_IN}]->() RETURN count(r) AS n"
_MENTION_COLUMNS = ("authority", "chunk", "count", "surface")


def _current(
    driver: Driver, database: str, synced: sync_state.SyncedSet | None
) -> tuple[DesiredMentions, str]:
    table = synced.trusted() if synced is not None else None
    if table is not None:
        a, b, count, surface = (table[c].to_pylist() for c in _MENTION_COLUMNS)
        mentions = {(x, y): (n, s) for x, y, n, s in zip(a, b, count, surface, strict=True)}
        return mentions, "snapshot"
    return existing_mentions(driver, database), "graph"


def existing_mentions(driver: Driver, database: str) -> DesiredMentions:
    found: DesiredMentions = {}
    with driver.session(database=database, default_access_mode="READ") as session:
        result = session.run(
            f"MATCH (a:{Label.CHUNK})-[r:{Rel.MENTIONED_IN}]->(b:{Label.CHUNK}) "
            f"WHERE r.{MentionProp.SOURCE} IS NULL "
            f"RETURN a.{Prop.CHUNK_ID} AS a, b.{Prop.CHUNK_ID} AS b, "
            f"r.{MentionProp.COUNT} AS count, r.{MentionProp.SURFACE} AS surface"
        )
        for record in result:
            found[(record["a"], record["b"])] = (record["count"], record["surface"])
    return found


def sync_mentions(
    driver: Driver,
    database: str,
    desired: DesiredMentions,
    layout: WorkLayout | None = None,
    *,
    trust_snapshot: bool = True,
) -> MentionSync:
    """Add missing and changed relationships (UNWIND + MERGE, properties set), delete the rest.
    With `layout`, the current ones come from the last complete write when the graph still
    holds it (:mod:`nara_kg.graph.sync_state`; not with `trust_snapshot` False), and this write
    is recorded there for the next run."""
    synced = (
        sync_state.SyncedSet(
            driver,
            database,
            layout,
            MENTIONS_CONCERN,
            MENTION_COUNT,
            endpoint_columns=_MENTION_COLUMNS[:2],
        )
        if layout is not None
        else None
    )
    current, existing_from = _current(driver, database, synced if trust_snapshot else None)
    if synced is not None:
        synced.begin()
    to_write = sorted(edge for edge, value in desired.items() if current.get(edge) != value)
    to_remove = sorted(set(current) - set(desired))
    write_batches(
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
        [[a, b, *desired[(a, b)]] for a, b in to_write],
        batch_size=5_000,
    )
    write_batches(
        driver,
        database,
        f"UNWIND $rows AS e "
        f"MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[0]}})-[r:{Rel.MENTIONED_IN}]->"
        f"(b:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[1]}}) "
        f"WHERE r.{MentionProp.SOURCE} IS NULL DELETE r",
        [list(edge) for edge in to_remove],
        batch_size=5_000,
    )
    added = sum(1 for edge in to_write if edge not in current)
    if synced is not None:
        ordered = sorted(desired)
        synced.commit(
            pa.table(
                {
                    "authority": pa.array([a for a, _ in ordered], type=pa.string()),
                    "chunk": pa.array([b for _, b in ordered], type=pa.string()),
                    "count": pa.array([desired[e][0] for e in ordered], type=pa.int64()),
                    "surface": pa.array([desired[e][1] for e in ordered], type=pa.string()),
                }
            )
        )
    return MentionSync(len(desired), added, len(to_write) - added, len(to_remove), existing_from)


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
