"""The graph side of the writers' sync state (:mod:`nara_kg.build.sync_state`): the
``(:SyncState {concern, revision, owner})`` marks, the counts a snapshot is checked against, and
the constant-time signature that caches of graph reads are keyed by."""

from __future__ import annotations

from typing import Any

from neo4j import Driver

from nara_kg.graph.batches import read_all, write_one
from nara_kg.model.schema import Label, Prop, SyncProp

REVISION = f"""
MATCH (s:{Label.SYNC_STATE} {{{SyncProp.CONCERN}: $concern}})
RETURN s.{SyncProp.REVISION} AS revision
"""

SET_REVISION = f"""
MERGE (s:{Label.SYNC_STATE} {{{SyncProp.CONCERN}: $concern}})
SET s.{SyncProp.REVISION} = $revision, s.{SyncProp.OWNER} = $owner
"""

#: Whether a work folder other than `$owner` wrote any concern last (or one written before
#: sync-state nodes named their writer).
FOREIGN_OWNER = f"""
RETURN EXISTS {{
  MATCH (s:{Label.SYNC_STATE})
  WHERE s.{SyncProp.OWNER} IS NULL OR s.{SyncProp.OWNER} <> $owner
}} AS foreign
"""

#: Every writer's revision (it changes when a write starts and when it ends) and the counts of
#: nodes and relationships (a hand edit that adds or deletes one changes them), read in constant
#: time: each count is a subquery of its own so that the planner answers it from the count store.
GRAPH_SIGNATURE = f"""
CALL () {{
  MATCH (s:{Label.SYNC_STATE})
  RETURN collect([s.{SyncProp.CONCERN}, s.{SyncProp.REVISION}]) AS revisions
}}
CALL () {{ MATCH ()-[r]->() RETURN count(r) AS relationships }}
CALL () {{ MATCH (n) RETURN count(n) AS nodes }}
RETURN revisions, relationships, nodes
"""

#: Of the given chunk ids, those no Chunk node has (looked up through the chunkId constraint).
MISSING_CHUNKS = f"""
UNWIND $ids AS id
WITH id WHERE NOT EXISTS {{ MATCH (:{Label.CHUNK} {{{Prop.CHUNK_ID}: id}}) }}
RETURN collect(id) AS missing
"""


def graph_signature(driver: Driver, database: str) -> tuple[Any, ...]:
    """:data:`GRAPH_SIGNATURE` as a hashable value, equal while no writer wrote and nothing was
    added or deleted by hand (what caches of graph reads are keyed by)."""
    row = read_all(driver, database, GRAPH_SIGNATURE)[0]
    revisions = tuple(sorted((str(c), str(r)) for c, r in row["revisions"]))
    return revisions, int(row["relationships"]), int(row["nodes"])


def written_by_other_owner(driver: Driver, database: str, owner: str) -> bool:
    return bool(read_all(driver, database, FOREIGN_OWNER, owner=owner)[0]["foreign"])


def graph_revision(driver: Driver, database: str, concern: str) -> str | None:
    rows = read_all(driver, database, REVISION, concern=concern)
    return str(rows[0]["revision"]) if rows and rows[0]["revision"] is not None else None


def set_revision(driver: Driver, database: str, concern: str, revision: str, owner: str) -> None:
    write_one(driver, database, SET_REVISION, concern=concern, revision=revision, owner=owner)


def graph_count(driver: Driver, database: str, count_statement: str) -> int:
    """The count a concern's `count_statement` returns (as ``n``)."""
    return int(read_all(driver, database, count_statement)[0]["n"])


def missing_chunks(driver: Driver, database: str, ids: list[str]) -> list[str]:
    """Of `ids`, the chunkIds no Chunk node has."""
    return [str(x) for x in read_all(driver, database, MISSING_CHUNKS, ids=ids)[0]["missing"]]
