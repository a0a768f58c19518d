"""Counts of the whole graph from the count store: whether a database holds any node (the first
load's bulk import needs an empty one), and what the build's up-to-date test compares."""

from __future__ import annotations

from neo4j import Driver

from nara_kg.graph.batches import read_all

#: Answered from the count store, in constant time.
NODE_COUNT = "MATCH (n) RETURN count(n) AS n"


def node_count(driver: Driver, database: str) -> int:
    return int(read_all(driver, database, NODE_COUNT)[0]["n"])


RELATIONSHIP_COUNT = "MATCH ()-[r]->() RETURN count(r) AS n"


def graph_counts(driver: Driver, database: str) -> tuple[int, int]:
    """Nodes and relationships, both from Neo4j's count store (constant time)."""
    return node_count(driver, database), int(read_all(driver, database, RELATIONSHIP_COUNT)[0]["n"])
