"""The vector index of seed 000 and the full-text index that makes search hybrid."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from neo4j import Driver

from nara_kg.graph.batches import read_all, write_one
from nara_kg.model.progress import Log, quiet
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


def ensure_vector_index(
    driver: Driver, database: str, dimensions: int, *, log: Log = quiet
) -> dict[str, Any]:
    """Create `texts_from_records` (cosine, the model's dimension) and wait until it is ONLINE;
    rebuild it if the model's dimension changed, since an index of another width would
    silently match nothing."""
    start_vector_index(driver, database, dimensions)
    return await_index(driver, database, Index.VECTOR, log=log)


def drop_vector_index_of_other_width(driver: Driver, database: str, dimensions: int) -> bool:
    """Drop `texts_from_records` if its vectors are not `dimensions` wide; whether an index of
    this width is left."""
    info = index_info(driver, database, Index.VECTOR)
    if info is None:
        return False
    config = (info.get("options") or {}).get("indexConfig") or {}
    if int(config.get("vector.dimensions", dimensions)) == dimensions:
        return True
    write_one(driver, database, f"DROP INDEX {Index.VECTOR} IF EXISTS")
    return False


def start_vector_index(driver: Driver, database: str, dimensions: int) -> None:
    """Create `texts_from_records` if it is missing (or of another width), without waiting:
    Neo4j populates a new index in the background."""
    drop_vector_index_of_other_width(driver, database, dimensions)
    create_vector_index(driver, database, dimensions)


def create_vector_index(driver: Driver, database: str, dimensions: int) -> None:
    """`texts_from_records` if no index of that name exists (whatever its width), without
    waiting; :func:`drop_vector_index_of_other_width` first where the width may be stale."""
    write_one(
        driver,
        database,
        f"CREATE VECTOR INDEX {Index.VECTOR} IF NOT EXISTS "
        f"FOR (n:{Label.RECORD_WITH_TEXT}) ON (n.{Prop.EMBEDDING}) "
        "OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, "
        "`vector.similarity_function`: 'cosine'}}",
        dimensions=dimensions,
    )


def ensure_fulltext_index(driver: Driver, database: str, *, log: Log = quiet) -> dict[str, Any]:
    start_fulltext_index(driver, database)
    return await_index(driver, database, Index.FULLTEXT, log=log)


def start_fulltext_index(driver: Driver, database: str) -> None:
    """Create the full-text index if it is missing (or over other properties), without
    waiting."""
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


#: How long an index may stay at the same population before waiting for it is an error.
INDEX_STALL_SECONDS = 600.0


def await_index(
    driver: Driver,
    database: str,
    name: str,
    *,
    stall_s: float = INDEX_STALL_SECONDS,
    poll_s: float = 2.0,
    first_poll_s: float = 0.05,
    log: Log = quiet,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Wait until the index is ONLINE for as long as its population keeps moving, logging each
    further tenth. No fixed timeout: Neo4j takes more than 10 minutes to populate a vector index
    of 3 million nodes. An index that FAILED, or whose population stays put for `stall_s`,
    is an error. Polls start `first_poll_s` apart and double up to `poll_s`: most indexes are
    ONLINE within a second, and a fixed 2 s poll made each wait at least 2 s."""
    best = -1.0
    moved_at = clock()
    interval = min(first_poll_s, poll_s)
    while True:
        info = index_info(driver, database, name)
        if info is None:
            raise RuntimeError(f"index {name} does not exist")
        if info["state"] == "ONLINE":
            return info
        if info["state"] == "FAILED":
            raise RuntimeError(f"index {name} FAILED to populate: {info}")
        percent = float(info.get("populationPercent") or 0.0)
        now = clock()
        if percent > best:
            if int(percent // 10) > int(max(best, 0.0) // 10):
                log(f"index {name}: {percent:.0f}% populated")
            best, moved_at = percent, now
        elif now - moved_at > stall_s:
            raise RuntimeError(
                f"index {name} stayed at {percent:.1f}% populated for {stall_s:.0f} s: {info}"
            )
        sleep(interval)
        interval = min(interval * 2, poll_s)
