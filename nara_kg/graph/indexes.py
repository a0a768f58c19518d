"""The vector index of seed 000 and the full-text index that makes search hybrid."""

from __future__ import annotations

from typing import Any

from neo4j import Driver

from nara_kg.graph.batches import read_all, write_one
from nara_kg.model.schema import Index, Label, Prop

#: Properties the full-text index reads. Titles are a field of their own besides `text` (which
#: repeats them in its header): BM25 then rewards a match in the short title field, which is what
#: tells "Volume 528, May 1942" from its many near-identical neighbours. Local identifiers and
#: variant control numbers ("210-CMB", "A1 37-A") are in no text, and archivists ask by them.
FULLTEXT_PROPERTIES: tuple[str, ...] = (
    Prop.TEXT,
    Prop.TITLE,
    Prop.HEADING,
    Prop.LOCAL_IDENTIFIER,
    Prop.VARIANT_CONTROL_NUMBERS,
)

SHOW_INDEX = """
SHOW INDEXES YIELD name, type, state, populationPercent, labelsOrTypes, properties, options
WHERE name = $name
RETURN name, type, state, populationPercent, labelsOrTypes, properties, options
"""


def index_info(driver: Driver, database: str, name: str) -> dict[str, Any] | None:
    rows = read_all(driver, database, SHOW_INDEX, name=name)
    return rows[0] if rows else None


def ensure_vector_index(driver: Driver, database: str, dimensions: int) -> dict[str, Any]:
    """Create `texts_from_records` (cosine, the model's dimension); rebuild it if the model's
    dimension changed, since an index of another width would silently match nothing."""
    info = index_info(driver, database, Index.VECTOR)
    if info is not None:
        config = (info.get("options") or {}).get("indexConfig") or {}
        if int(config.get("vector.dimensions", dimensions)) != dimensions:
            write_one(driver, database, f"DROP INDEX {Index.VECTOR} IF EXISTS")
    write_one(
        driver,
        database,
        f"CREATE VECTOR INDEX {Index.VECTOR} IF NOT EXISTS "
        f"FOR (n:{Label.RECORD_WITH_TEXT}) ON (n.{Prop.EMBEDDING}) "
        "OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, "
        "`vector.similarity_function`: 'cosine'}}",
        dimensions=dimensions,
    )
    return await_index(driver, database, Index.VECTOR)


def ensure_fulltext_index(driver: Driver, database: str) -> dict[str, Any]:
    info = index_info(driver, database, Index.FULLTEXT)
    if info is not None and list(info["properties"]) != list(FULLTEXT_PROPERTIES):
        write_one(driver, database, f"DROP INDEX {Index.FULLTEXT} IF EXISTS")
    props = ", ".join(f"n.{p}" for p in FULLTEXT_PROPERTIES)
    write_one(
        driver,
        database,
        f"CREATE FULLTEXT INDEX {Index.FULLTEXT} IF NOT EXISTS "
        f"FOR (n:{Label.RECORD_WITH_TEXT}) ON EACH [{props}]",
    )
    return await_index(driver, database, Index.FULLTEXT)


def await_index(driver: Driver, database: str, name: str, timeout_s: int = 600) -> dict[str, Any]:
    write_one(driver, database, "CALL db.awaitIndex($name, $timeout)", name=name, timeout=timeout_s)
    info = index_info(driver, database, name)
    if info is None or info["state"] != "ONLINE":
        raise RuntimeError(f"index {name} is not ONLINE: {info}")
    return info
