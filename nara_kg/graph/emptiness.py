"""Whether a database holds any node at all (the first load's bulk import needs an empty one)."""

from __future__ import annotations

from neo4j import Driver

from nara_kg.graph.batches import read_all

#: Answered from the count store, in constant time.
NODE_COUNT = "MATCH (n) RETURN count(n) AS n"


def node_count(driver: Driver, database: str) -> int:
    return int(read_all(driver, database, NODE_COUNT)[0]["n"])
