"""What the knowledge-graph assets share: group, owners, pools, automation, metadata helpers."""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar, cast

import dagster as dg

from nara_kg.errors import Neo4jUnreachable, UserError
from nara_kg.model.check_names import is_blocking

#: Two groups, so the lineage view reads at its default zoom: the stages of each input file
#: (partitioned), and the stages over the whole graph (once, downstream of every partition).
PER_FILE_GROUP = "per_file"
GRAPH_GROUP = "graph"
OWNERS = ["team:data-platform"]
FILE_KINDS = {"python", "parquet"}
GRAPH_KINDS = {"python", "neo4j"}

#: Dagster concurrency pools (limits in the instance's dagster.yaml): one writer to Neo4j and
#: one user of the embedding model at a time, however many runs or partitions are in flight.
NEO4J_WRITES_POOL = "neo4j_writes"
EMBEDDING_MODEL_POOL = "embedding_model"

#: Steps that talk to Neo4j retry on transient failures; their writes are idempotent.
NEO4J_RETRY = dg.RetryPolicy(max_retries=2, delay=5, backoff=dg.Backoff.EXPONENTIAL)

#: Graph-wide steps follow their inputs: once no file partition is in flight and one was
#: updated, they run (through the automation sensor, off until switched on in the UI).
GRAPH_AUTOMATION = dg.AutomationCondition.eager()

#: Step priorities: of the steps ready to run, Dagster starts the one of highest priority
#: first. A step that leaves Neo4j work running in the background (an index populating) goes
#: early, so that the steps after it run beside that work; the step that waits for it, late.
STARTS_BACKGROUND_WORK = {"dagster/priority": "1"}
WAITS_FOR_BACKGROUND_WORK = {"dagster/priority": "-1"}


def severity(check_name: str) -> dg.AssetCheckSeverity:
    """ERROR for a blocking check, WARN for an advisory one (:mod:`nara_kg.model.check_names`)."""
    return dg.AssetCheckSeverity.ERROR if is_blocking(check_name) else dg.AssetCheckSeverity.WARN


#: Metadata key every graph writer reports: the records whose data it read or wrote record by
#: record (0 when nothing changed), a plain int so that it plots.
RECORDS_TOUCHED = "records_touched"

#: Longest text shown in one table cell.
MAX_CELL = 240


def _cell(value: Any, max_cell: int) -> str | int | float | bool | None:
    if value is None or isinstance(value, bool | int | float):
        return value
    text = " ".join(str(value).split())
    return text if len(text) <= max_cell else text[: max_cell - 1] + "…"


def _column_type(values: Sequence[Any]) -> str:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "int"
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "float"
    return "string"


def table(
    rows: Sequence[Mapping[str, Any]], limit: int = 50, max_cell: int = MAX_CELL
) -> dg.MetadataValue:
    """A native Dagster table (sortable in the UI) with a schema inferred from the rows; rows
    that do not share their keys get the union of the keys, in order of appearance."""
    shown = list(rows)[:limit]
    columns: dict[str, None] = {}
    for row in shown:
        columns.update(dict.fromkeys(row))
    cells = [{name: _cell(row.get(name), max_cell) for name in columns} for row in shown]
    schema = dg.TableSchema(
        columns=[
            dg.TableColumn(name, _column_type([cell[name] for cell in cells])) for name in columns
        ]
    )
    for cell in cells:  # a mixed column is shown as text throughout
        for column in schema.columns:
            if column.type == "string" and cell[column.name] is not None:
                cell[column.name] = str(cell[column.name])
    return dg.MetadataValue.table(records=[dg.TableRecord(cell) for cell in cells], schema=schema)


def counts_table(counts: Mapping[str, int], key: str = "type") -> dg.MetadataValue:
    return table([{key: k, "count": v} for k, v in sorted(counts.items())], limit=1_000)


@contextmanager
def timed(metadata: dict[str, Any], key: str = "seconds") -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        metadata[key] = dg.MetadataValue.float(round(time.perf_counter() - started, 3))


def plain_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata values as plain Python values (tables as lists of dicts)."""
    plain: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, dg.TableMetadataValue):
            plain[key] = [dict(record.data) for record in value.records]
        else:
            plain[key] = getattr(value, "value", value)
    return plain


#: What the resources and the core raise for a failure that is the user's to fix (a server not
#: answering, a setting that cannot be used): an asset reports it as a Dagster Failure.
PROJECT_ERRORS: tuple[type[Exception], ...] = (UserError, Neo4jUnreachable)

F = TypeVar("F", bound=Callable[..., Any])


def failure_on_project_error(fn: F) -> F:
    """The asset function `fn`, with the project's own errors (`PROJECT_ERRORS`) turned into a
    `dg.Failure` whose description is the error's line (the error stays its cause): the one
    place the core's errors meet Dagster's. Works for plain and generator (yielding) assets."""
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def generate(*args: Any, **kwargs: Any) -> Any:
            try:
                return (yield from fn(*args, **kwargs))
            except PROJECT_ERRORS as error:
                raise dg.Failure(description=str(error)) from error

        return cast(F, generate)

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except PROJECT_ERRORS as error:
            raise dg.Failure(description=str(error)) from error

    return cast(F, call)


def neo4j_writer_asset(*, kinds: set[str] | None = None, **asset_args: Any) -> Any:
    """`@dg.asset` for a graph-wide asset that writes Neo4j: the group, kinds and owners every
    asset shares, the Neo4j retry policy, one writer at a time (the `neo4j_writes` pool), eager
    automation and the project's errors as a Failure (`failure_on_project_error`); `kinds`
    (Python and Neo4j by default) and `asset_args` are the asset's own (deps, description,
    check specs)."""
    decorate = dg.asset(
        group_name=GRAPH_GROUP,
        kinds=GRAPH_KINDS if kinds is None else kinds,
        owners=OWNERS,
        retry_policy=NEO4J_RETRY,
        pool=NEO4J_WRITES_POOL,
        automation_condition=GRAPH_AUTOMATION,
        **asset_args,
    )
    return lambda fn: decorate(failure_on_project_error(fn))
