"""A fingerprint of the whole graph: two graphs with equal fingerprints hold the same nodes,
properties and relationships (the proof that an incremental build equals a full rebuild)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from neo4j import Driver

from nara_kg.model.schema import CommunityProp, Label, Prop

#: Vectors are left out (their floats may differ in the last bits between batchings); the
#: embedding key, which names the exact text and model they came from, stands in for them.
EXCLUDED_PROPERTIES = frozenset({Prop.EMBEDDING, CommunityProp.SUMMARY_EMBEDDING})

NODES = f"""
MATCH (n) WHERE n:{Label.CHUNK} OR n:{Label.COMMUNITY}
RETURN labels(n) AS labels, properties(n) AS props
"""
RELATIONSHIPS = f"""
MATCH (a)-[r]->(b)
RETURN type(r) AS type,
       coalesce(a.{Prop.CHUNK_ID}, 'community:' + a.id) AS source,
       coalesce(b.{Prop.CHUNK_ID}, 'community:' + b.id) AS target,
       properties(r) AS props
"""


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def graph_fingerprint(driver: Driver, database: str) -> dict[str, Any]:
    nodes = []
    with driver.session(database=database, default_access_mode="READ") as session:
        for record in session.run(NODES):
            props = {k: v for k, v in record["props"].items() if k not in EXCLUDED_PROPERTIES}
            nodes.append(_canonical([sorted(record["labels"]), props]))
        relationships = [
            _canonical([r["type"], r["source"], r["target"], r["props"]])
            for r in session.run(RELATIONSHIPS)
        ]
    digest = hashlib.sha256()
    for line in [*sorted(nodes), "--", *sorted(relationships)]:
        digest.update(line.encode("utf-8"))
        digest.update(b"\n")
    return {"sha256": digest.hexdigest(), "nodes": len(nodes), "relationships": len(relationships)}
