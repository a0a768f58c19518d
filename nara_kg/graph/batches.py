"""Running parameterized statements over batches of rows, with the driver's managed retries."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import Any, LiteralString, TypeVar, cast

from neo4j import Driver, ManagedTransaction, Query

T = TypeVar("T")

DEFAULT_BATCH = 1_000


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def write_batches(
    driver: Driver,
    database: str,
    statement: str,
    rows: Iterable[dict[str, Any]] | Iterable[Any],
    *,
    batch_size: int = DEFAULT_BATCH,
    extra: dict[str, Any] | None = None,
) -> int:
    """`UNWIND $rows` statements, one managed (retried) write transaction per batch."""
    query = cast(LiteralString, statement)

    def work(tx: ManagedTransaction, params: dict[str, Any]) -> None:
        tx.run(query, params).consume()

    total = 0
    with driver.session(database=database) as session:
        for batch in batched(rows, batch_size):
            session.execute_write(work, {"rows": batch, **(extra or {})})
            total += len(batch)
    return total


def _read_records(driver: Driver, database: str, statement: str, params: dict[str, Any]) -> Any:
    records, _, _ = driver.execute_query(
        Query(cast(LiteralString, statement)), params, database_=database, routing_="r"
    )
    return records


def read_all(
    driver: Driver, database: str, statement: str, **params: Any
) -> Sequence[dict[str, Any]]:
    return [record.data() for record in _read_records(driver, database, statement, params)]


def read_values(
    driver: Driver, database: str, statement: str, **params: Any
) -> Sequence[dict[str, Any]]:
    """`read_all` for statements that return only values, maps and lists (no nodes,
    relationships or paths): rows are taken as the driver decoded them, skipping the recursive
    conversion of `Record.data()`, which cost searches several milliseconds per query."""
    return [
        dict(zip(record.keys(), record.values(), strict=True))
        for record in _read_records(driver, database, statement, params)
    ]


def write_one(driver: Driver, database: str, statement: str, **params: Any) -> Any:
    _, summary, _ = driver.execute_query(
        Query(cast(LiteralString, statement)), params, database_=database
    )
    return summary.counters


def vector_values(vector: Any) -> list[float]:
    """A vector as the list of Python floats Bolt sends; ndarray.tolist() does it in one C
    loop, far faster than float() per element."""
    return vector.tolist() if hasattr(vector, "tolist") else [float(x) for x in vector]
