"""MENTIONED_IN in Neo4j: made equal to a desired set by difference, and read back per record."""

from __future__ import annotations

from dataclasses import dataclass

from neo4j import Driver

from nara_kg.graph.batches import write_batches
from nara_kg.model.schema import Label, MentionProp, Prop, Rel

#: (authority's first chunk, mentioning chunk) -> (count, surface).
DesiredMentions = dict[tuple[str, str], tuple[int, str]]


@dataclass(frozen=True)
class MentionSync:
    desired: int
    added: int
    updated: int
    removed: int


def existing_mentions(driver: Driver, database: str) -> DesiredMentions:
    found: DesiredMentions = {}
    with driver.session(database=database, default_access_mode="READ") as session:
        result = session.run(
            f"MATCH (a:{Label.CHUNK})-[r:{Rel.MENTIONED_IN}]->(b:{Label.CHUNK}) "
            f"RETURN a.{Prop.CHUNK_ID} AS a, b.{Prop.CHUNK_ID} AS b, "
            f"r.{MentionProp.COUNT} AS count, r.{MentionProp.SURFACE} AS surface"
        )
        for record in result:
            found[(record["a"], record["b"])] = (record["count"], record["surface"])
    return found


def sync_mentions(driver: Driver, database: str, desired: DesiredMentions) -> MentionSync:
    """Add missing and changed relationships (UNWIND + MERGE, properties set), delete the rest."""
    current = existing_mentions(driver, database)
    to_write = sorted(edge for edge, value in desired.items() if current.get(edge) != value)
    to_remove = sorted(set(current) - set(desired))
    write_batches(
        driver,
        database,
        f"UNWIND $rows AS e "
        f"MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[0]}}) "
        f"MATCH (b:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[1]}}) "
        f"MERGE (a)-[r:{Rel.MENTIONED_IN}]->(b) "
        f"SET r.{MentionProp.COUNT} = e[2], r.{MentionProp.SURFACE} = e[3]",
        [[a, b, *desired[(a, b)]] for a, b in to_write],
        batch_size=5_000,
    )
    write_batches(
        driver,
        database,
        f"UNWIND $rows AS e "
        f"MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[0]}})-[r:{Rel.MENTIONED_IN}]->"
        f"(b:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[1]}}) DELETE r",
        [list(edge) for edge in to_remove],
        batch_size=5_000,
    )
    added = sum(1 for edge in to_write if edge not in current)
    return MentionSync(len(desired), added, len(to_write) - added, len(to_remove))


def record_mention_pairs(driver: Driver, database: str) -> set[tuple[int, int]]:
    """(record naId, authority naId) of every MENTIONED_IN in the graph."""
    with driver.session(database=database, default_access_mode="READ") as session:
        result = session.run(
            f"MATCH (a:{Label.CHUNK})-[:{Rel.MENTIONED_IN}]->(b:{Label.CHUNK}) "
            f"RETURN DISTINCT b.{Prop.NA_ID} AS record, a.{Prop.NA_ID} AS authority"
        )
        return {(r["record"], r["authority"]) for r in result}
