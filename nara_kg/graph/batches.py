"""Running parameterized statements over batches of rows, with the driver's managed retries;
reading rows back in auto-commit transactions, retried only briefly.

A read is retried for at most `READ_RETRY_BUDGET_S`: the driver's managed transactions retry
for 30 s, which kept every read of a server whose Neo4j is down waiting that long before it
could say so (health answered 503 after 35 s). A read that fails is cheap to ask again; a
build step that fails is re-run."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, LiteralString, TypeVar, cast

from neo4j import READ_ACCESS, Driver, ManagedTransaction, Query
from neo4j.exceptions import DriverError, Neo4jError

T = TypeVar("T")

DEFAULT_BATCH = 1_000


class Unlogged(list[Any]):
    """A list parameter that the driver sends as it is but never spells out. The neo4j driver
    (6.4) builds the debug line of every RUN with repr() of all its parameters, whether debug
    logging is on or not: for a page of 1,024 vectors that formatting cost 0.39 s of CPU, and
    the write itself 0.02 s."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} values>"


def unlogged(params: dict[str, Any]) -> dict[str, Any]:
    """`params` with each list (or tuple) value an :class:`Unlogged` list."""
    return {k: Unlogged(v) if isinstance(v, list | tuple) else v for k, v in params.items()}


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
            session.execute_write(work, {"rows": Unlogged(batch), **unlogged(extra or {})})
            total += len(batch)
    return total


def read_all(
    driver: Driver, database: str, statement: str, **params: Any
) -> Sequence[dict[str, Any]]:
    return [record.data() for record in _read_autocommit(driver, database, statement, params)]


#: Tries of an auto-commit read that fails with an error the driver calls retryable (a server
#: restarting, a cluster's leader moving) before the error is raised.
READ_ATTEMPTS = 3
READ_RETRY_SECONDS = 0.2
#: No retry starts later than this after the first try (a connection that timed out once
#: is not waited for again).
READ_RETRY_BUDGET_S = 1.0


def _read_autocommit(driver: Driver, database: str, statement: str, params: dict[str, Any]) -> Any:
    """The rows of one auto-commit read transaction: RUN and PULL go in one round trip, where
    `execute_query`'s managed transaction adds BEGIN and COMMIT (`RETURN 1`: 0.9 against 1.6 ms,
    and a third of Neo4j's CPU). Reads after this driver's `execute_query` writes (its bookmark
    manager), and retried on retryable errors within `READ_RETRY_BUDGET_S`."""
    started = time.monotonic()
    for attempt in range(1, READ_ATTEMPTS + 1):
        try:
            with driver.session(
                database=database,
                default_access_mode=READ_ACCESS,
                bookmark_manager=driver.execute_query_bookmark_manager,
            ) as session:
                return list(session.run(Query(cast(LiteralString, statement)), unlogged(params)))
        except (Neo4jError, DriverError) as error:
            late = time.monotonic() - started >= READ_RETRY_BUDGET_S
            if attempt == READ_ATTEMPTS or late or not error.is_retryable():
                raise
            time.sleep(READ_RETRY_SECONDS * attempt)
    raise AssertionError("unreachable")


def read_values(
    driver: Driver, database: str, statement: str, **params: Any
) -> Sequence[dict[str, Any]]:
    """`read_all` for the reads of a search, whose statements return only values, maps and
    lists (no nodes, relationships or paths): one auto-commit round trip, and rows taken as the
    driver decoded them, skipping the recursive conversion of `Record.data()`, which cost
    searches several milliseconds per query."""
    return [
        dict(zip(record.keys(), record.values(), strict=True))
        for record in _read_autocommit(driver, database, statement, params)
    ]


@dataclass(frozen=True)
class ListedRead:
    """A read whose rows come back in one record, as a list of value lists in the order of
    `columns` (the statement's `RETURN` aliases). Each record costs the driver a Python object,
    a hydration pass and a message on both sides: for a search's reads of tens of rows, one
    record cut the client's CPU per search by a fifth and the server's by a tenth."""

    columns: tuple[str, ...]
    statement: str
    #: The statement run as a subquery whose rows are collected, in their order.
    text: str = field(init=False)

    def __post_init__(self) -> None:
        listed = ", ".join(self.columns)
        wrapped = f"CALL () {{\n{self.statement.strip()}\n}}\nRETURN collect([{listed}]) AS rows"
        object.__setattr__(self, "text", wrapped)


def read_listed(
    driver: Driver, database: str, read: ListedRead, **params: Any
) -> list[dict[str, Any]]:
    """The rows of a :class:`ListedRead`, as maps, in one auto-commit round trip."""
    records = _read_autocommit(driver, database, read.text, params)
    return [dict(zip(read.columns, row, strict=True)) for row in records[0]["rows"]]


def write_one(driver: Driver, database: str, statement: str, **params: Any) -> Any:
    _, summary, _ = driver.execute_query(
        Query(cast(LiteralString, statement)), unlogged(params), database_=database
    )
    return summary.counters


def vector_values(vector: Any) -> list[float]:
    """A vector as the list of Python floats Bolt sends; ndarray.tolist() does it in one C
    loop, far faster than float() per element."""
    return vector.tolist() if hasattr(vector, "tolist") else [float(x) for x in vector]
