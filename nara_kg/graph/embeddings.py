"""Reading the chunks whose embedding is missing or stale, and writing vectors back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neo4j import Driver

from nara_kg.graph.batches import vector_values, write_batches
from nara_kg.model.schema import Label, Prop


def embedding_key(model_key: str, text_hash: str) -> str:
    """What a vector was computed from: the model and the exact text."""
    return f"{model_key}|{text_hash}"


#: A chunk whose vector is missing or was made from another text or model.
_STALE = (
    f"(c.{Prop.EMBEDDING_KEY} IS NULL "
    f"OR c.{Prop.EMBEDDING_KEY} <> $model + '|' + c.{Prop.TEXT_HASH})"
)

#: Pending chunks after `$after` in chunkId order. Every recordWithText node is a Chunk, and
#: naming both labels lets the planner walk the chunkId constraint's index in order from
#: `$after` and stop at `$limit`: a round reads its own rows, not every chunk (reading all of
#: them and sorting, per round, made the step quadratic in the number of chunks).
PENDING = f"""
MATCH (c:{Label.CHUNK}:{Label.RECORD_WITH_TEXT})
WHERE c.{Prop.CHUNK_ID} > $after
  AND {_STALE}
RETURN c.{Prop.CHUNK_ID} AS id, c.{Prop.TEXT} AS text, c.{Prop.TEXT_HASH} AS hash,
       c.{Prop.FILE_NAME} AS file
ORDER BY id
LIMIT $limit
"""

#: :data:`PENDING` without the texts: what the copy from the per-file parts needs to know.
PENDING_KEYS = f"""
MATCH (c:{Label.CHUNK}:{Label.RECORD_WITH_TEXT})
WHERE c.{Prop.CHUNK_ID} > $after
  AND {_STALE}
RETURN c.{Prop.CHUNK_ID} AS id, c.{Prop.TEXT_HASH} AS hash, c.{Prop.FILE_NAME} AS file
ORDER BY id
LIMIT $limit
"""

#: :data:`PENDING` among the chunks of the given records (through the naId index).
PENDING_OF_RECORDS = f"""
UNWIND $ids AS naId
MATCH (c:{Label.CHUNK}:{Label.RECORD_WITH_TEXT} {{{Prop.NA_ID}: naId}})
WHERE c.{Prop.CHUNK_ID} > $after
  AND {_STALE}
RETURN c.{Prop.CHUNK_ID} AS id, c.{Prop.TEXT} AS text, c.{Prop.TEXT_HASH} AS hash,
       c.{Prop.FILE_NAME} AS file
ORDER BY id
LIMIT $limit
"""

COUNT_PENDING = f"""
MATCH (c:{Label.RECORD_WITH_TEXT})
WHERE {_STALE}
RETURN count(c) AS n
"""

WRITE = f"""
UNWIND $rows AS row
MATCH (c:{Label.CHUNK} {{{Prop.CHUNK_ID}: row.id}})
CALL db.create.setNodeVectorProperty(c, '{Prop.EMBEDDING}', row.vector)
SET c.{Prop.EMBEDDING_KEY} = row.key
"""


def count_pending(driver: Driver, database: str, model_key: str) -> int:
    records, _, _ = driver.execute_query(
        COUNT_PENDING, model=model_key, database_=database, routing_="r"
    )
    return int(records[0]["n"])


def fetch_pending(
    driver: Driver, database: str, model_key: str, limit: int, after: str = ""
) -> list[dict[str, Any]]:
    """Up to `limit` pending chunks whose chunkId sorts after `after`, in chunkId order."""
    records, _, _ = driver.execute_query(
        PENDING, model=model_key, limit=limit, after=after, database_=database, routing_="r"
    )
    return [r.data() for r in records]


def fetch_pending_keys(
    driver: Driver, database: str, model_key: str, limit: int, after: str = ""
) -> list[dict[str, Any]]:
    """Up to `limit` pending chunks after `after` as ``{"id", "hash", "file"}``, no texts."""
    records, _, _ = driver.execute_query(
        PENDING_KEYS, model=model_key, limit=limit, after=after, database_=database, routing_="r"
    )
    return [r.data() for r in records]


def write_vectors(
    driver: Driver, database: str, model_key: str, rows: Sequence[dict[str, Any]]
) -> int:
    """Rows are ``{"id", "hash", "vector"}``."""
    payload = [
        {
            "id": r["id"],
            "vector": vector_values(r["vector"]),
            "key": embedding_key(model_key, r["hash"]),
        }
        for r in rows
    ]
    return write_batches(driver, database, WRITE, payload, batch_size=500)


def fetch_pending_of_records(
    driver: Driver,
    database: str,
    model_key: str,
    na_ids: Sequence[int],
    limit: int,
    after: str = "",
) -> list[dict[str, Any]]:
    """:func:`fetch_pending` among the chunks of the records `na_ids`."""
    records, _, _ = driver.execute_query(
        PENDING_OF_RECORDS,
        model=model_key,
        ids=list(na_ids),
        limit=limit,
        after=after,
        database_=database,
        routing_="r",
    )
    return [r.data() for r in records]
