"""Great Expectations 1.x suites over the pipeline's tables, and running them (pure functions).

Everything runs in an ephemeral context (in-memory stores, no docs sites, nothing written to
disk) with GX's progress bars off and its loggers held at WARNING, so a check's run log stays
readable. Great Expectations is imported inside the functions: it takes seconds to import and
the code location must load fast.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nara_kg.model.schema import (
    AUTHORITY_TYPES,
    DESCRIPTION_TYPES,
    RECORD_TYPES,
    RecordKind,
)
from quality.names import (
    CHUNKS_INTEGRITY,
    PARSED_RECORDS_DATES,
    PARSED_RECORDS_INTEGRITY,
    SAMPLE_SIZE,
)

if TYPE_CHECKING:
    import pandas as pd
    from great_expectations.core.expectation_validation_result import (
        ExpectationValidationResult,
    )
    from great_expectations.data_context import AbstractDataContext
    from great_expectations.expectations import Expectation

#: The catalog URL of a record (schema.CATALOG_URL as a regular expression).
SOURCE_REGEX = r"^https://catalog\.archives\.gov/id/\d+$"
DATE_REGEX = r"^\d{4}-\d{2}-\d{2}$"
DATE_FORMAT = "%Y-%m-%d"
RECORD_KINDS: tuple[str, ...] = (RecordKind.DESCRIPTION.value, RecordKind.AUTHORITY.value)


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class ExpectationOutcome:
    """One expectation's result, in plain values."""

    frame: str
    expectation: str  # the GX expectation type, e.g. expect_column_values_to_be_unique
    description: str
    column: str
    success: bool
    observed: str
    element_count: int | None
    unexpected_count: int | None
    #: Offending rows (up to SAMPLE_SIZE): the frame's id columns plus the offending value(s).
    sample: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True)
class SuiteOutcome:
    suite: str
    outcomes: list[ExpectationOutcome]
    #: frame name -> rows validated.
    rows: dict[str, int]
    #: Rows validated in this run and rows whose results came from the check's memory (None
    #: when the suite validated every row, unremembered).
    rows_validated: int | None = None
    rows_from_memory: int | None = None

    @property
    def success(self) -> bool:
        return all(outcome.success for outcome in self.outcomes)

    @property
    def failed(self) -> list[ExpectationOutcome]:
        return [outcome for outcome in self.outcomes if not outcome.success]


@dataclass
class Frame:
    """A table to validate, with its expectations and the columns that identify a row."""

    name: str
    data: pd.DataFrame
    expectations: list[Expectation]
    id_columns: tuple[str, ...] = ()


# --------------------------------------------------------------------------- suites
def records_integrity_expectations() -> list[Expectation]:
    """Chosen parsed records: naId, type, kind, catalog URL."""
    import great_expectations as gx

    description_pairs = [(RecordKind.DESCRIPTION.value, t) for t in sorted(DESCRIPTION_TYPES)]
    authority_pairs = [(RecordKind.AUTHORITY.value, t) for t in sorted(AUTHORITY_TYPES)]
    return [
        gx.expectations.ExpectColumnValuesToNotBeNull(column="naId", description="naId present"),
        gx.expectations.ExpectColumnValuesToBeUnique(
            column="naId", description="naId unique per chosen record"
        ),
        gx.expectations.ExpectColumnValuesToNotBeNull(
            column="nodeType", description="nodeType present"
        ),
        gx.expectations.ExpectColumnValuesToBeInSet(
            column="nodeType",
            value_set=list(RECORD_TYPES),
            description="nodeType is one of the ten record types",
        ),
        gx.expectations.ExpectColumnValuesToNotBeNull(
            column="recordKind",
            row_condition="isStub == False",
            condition_parser="pandas",
            description="full records have a recordKind",
        ),
        gx.expectations.ExpectColumnValuesToBeInSet(
            column="recordKind",
            value_set=list(RECORD_KINDS),
            row_condition="isStub == False",
            condition_parser="pandas",
            description="full records: recordKind is description or authority",
        ),
        gx.expectations.ExpectColumnPairValuesToBeInSet(
            column_A="recordKind",
            column_B="nodeType",
            value_pairs_set=description_pairs + authority_pairs,
            description="recordKind agrees with nodeType",
        ),
        gx.expectations.ExpectColumnValuesToNotBeNull(
            column="source", description="source URL present"
        ),
        gx.expectations.ExpectColumnValuesToMatchRegex(
            column="source", regex=SOURCE_REGEX, description="source is a catalog URL"
        ),
        gx.expectations.ExpectColumnPairValuesToBeEqual(
            column_A="source",
            column_B="expectedSource",
            description="source ends in the row's naId",
        ),
    ]


def date_expectations() -> list[Expectation]:
    """Every logicalDate_* value (one row per value) is a real YYYY-MM-DD date."""
    import great_expectations as gx

    return [
        gx.expectations.ExpectColumnValuesToMatchRegex(
            column="value", regex=DATE_REGEX, description="logicalDate_* is YYYY-MM-DD"
        ),
        gx.expectations.ExpectColumnValuesToMatchStrftimeFormat(
            column="value",
            strftime_format=DATE_FORMAT,
            description="logicalDate_* parses as a calendar date",
        ),
    ]


def chunk_expectations(max_tokens: int, *, observe_max: bool = True) -> list[Expectation]:
    """Chunk rows: within the model's limit, chunkIds unique. `observe_max` adds the longest
    chunk as an observed value (it has none, and so fails, on an empty table)."""
    import great_expectations as gx

    found: list[Expectation] = [
        gx.expectations.ExpectColumnValuesToNotBeNull(
            column="chunkId", description="chunkId present"
        ),
        gx.expectations.ExpectColumnValuesToBeUnique(
            column="chunkId", description="chunkId unique"
        ),
        gx.expectations.ExpectColumnValuesToBeBetween(
            column="tokens",
            min_value=1,
            max_value=max_tokens,
            description=f"chunk fits the model: 1 <= tokens <= {max_tokens}",
        ),
    ]
    if observe_max:
        found.append(
            gx.expectations.ExpectColumnMaxToBeBetween(
                column="tokens",
                max_value=max_tokens,
                description=f"longest chunk <= {max_tokens} tokens",
            )
        )
    return found


def chunk_sequence_expectations() -> list[Expectation]:
    """One row per record (see frames.chunk_sequences_frame)."""
    import great_expectations as gx

    return [
        gx.expectations.ExpectColumnValuesToBeInSet(
            column="contiguous",
            value_set=[True],
            description="chunkSeqId is 0..n-1, n = chunkCount of the first chunk",
        ),
    ]


# --------------------------------------------------------------------------- running
@contextmanager
def quiet_gx() -> Iterator[None]:
    """GX logs at INFO and warns about pandas internals: keep both out of the run log."""
    loggers = [logging.getLogger(name) for name in ("great_expectations", "py.warnings")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", UserWarning)
            yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def ephemeral_context() -> AbstractDataContext:
    """An in-memory GX context: nothing is read from or written to disk."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False),
    )
    return gx.get_context(mode="ephemeral", project_config=config)


def validate_frames(suite: str, frames: Sequence[Frame]) -> SuiteOutcome:
    """Validate each frame against its expectations in one ephemeral context."""
    outcomes: list[ExpectationOutcome] = []
    rows: dict[str, int] = {}
    for frame, data, results in run_frames(suite, frames):
        rows[frame.name] = len(data)
        outcomes.extend(_outcome(frame, data, found) for found in results)
    return SuiteOutcome(suite, outcomes, rows)


def run_frames(
    suite: str, frames: Sequence[Frame], result_format: str = "SUMMARY"
) -> Iterator[tuple[Frame, pd.DataFrame, list[ExpectationValidationResult]]]:
    """Each frame (index reset) with its expectations' results, in the order the suite lists
    them (GX reorders its results). `result_format` COMPLETE lists every unexpected row."""
    import great_expectations as gx

    with quiet_gx():
        context = ephemeral_context()
        source = context.data_sources.add_pandas(name=suite)
        for frame in frames:
            data = frame.data.reset_index(drop=True)
            asset = source.add_dataframe_asset(name=frame.name)
            batch_definition = asset.add_batch_definition_whole_dataframe(name=frame.name)
            expectation_suite = context.suites.add(
                gx.ExpectationSuite(
                    name=f"{suite}.{frame.name}",
                    expectations=list(frame.expectations),
                )
            )
            definition = context.validation_definitions.add(
                gx.ValidationDefinition(
                    name=f"{suite}.{frame.name}", data=batch_definition, suite=expectation_suite
                )
            )
            result = definition.run(
                batch_parameters={"dataframe": data},
                result_format={
                    "result_format": result_format,
                    "partial_unexpected_count": SAMPLE_SIZE,
                },
            )
            by_id = {r.expectation_config.id: r for r in result.results if r.expectation_config}
            found = [by_id.get(e.id) for e in expectation_suite.expectations]
            yield frame, data, [r for r in found if r is not None]


def _plain(value: Any) -> Any:
    """numpy scalars, NaN and tuples -> JSON-friendly values."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        try:
            value = value.item()
        except (ValueError, TypeError):
            return str(value)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def sample_row(frame: Frame, data: pd.DataFrame, index: int, columns: list[str]) -> dict[str, Any]:
    """One offending row as a check shows it: the frame's id columns, then the checked ones."""
    row = data.iloc[index]
    shown = [*frame.id_columns, *(c for c in columns if c not in frame.id_columns)]
    return {name: _plain(row[name]) for name in shown if name in data}


def columns_of(kwargs: dict[str, Any]) -> list[str]:
    if "column" in kwargs:
        return [kwargs["column"]]
    return [kwargs[key] for key in ("column_A", "column_B") if key in kwargs]


def _outcome(
    frame: Frame, data: pd.DataFrame, result: ExpectationValidationResult
) -> ExpectationOutcome:
    config = result.expectation_config
    assert config is not None
    kwargs = dict(config.kwargs)
    columns = columns_of(kwargs)
    details: dict[str, Any] = dict(result.result or {})
    exception = result.exception_info or {}
    error = (
        str(exception.get("exception_message"))
        if isinstance(exception, dict) and exception.get("raised_exception")
        else None
    )
    unexpected = details.get("unexpected_count")
    elements = details.get("element_count")
    if "observed_value" in details:
        observed = str(_plain(details["observed_value"]))
    elif unexpected is not None and elements is not None:
        observed = f"{unexpected} of {elements} unexpected"
    else:
        observed = ""
    sample: list[dict[str, Any]] = []
    indexes = details.get("partial_unexpected_index_list") or []
    if indexes and all(isinstance(i, int) for i in indexes):
        for index in indexes[:SAMPLE_SIZE]:
            if 0 <= index < len(data):
                sample.append(sample_row(frame, data, index, columns))
    else:
        for value in (details.get("partial_unexpected_list") or [])[:SAMPLE_SIZE]:
            sample.append({"value": _plain(value)})
    return ExpectationOutcome(
        frame=frame.name,
        expectation=config.type,
        description=config.description or config.type,
        column=", ".join(columns),
        success=bool(result.success),
        observed=observed,
        element_count=None if elements is None else int(elements),
        unexpected_count=None if unexpected is None else int(unexpected),
        sample=sample,
        error=error,
    )


# --------------------------------------------------------------------------- the three suites
def parsed_records_frames(records: pd.DataFrame) -> list[Frame]:
    return [
        Frame(
            "chosen_records",
            records,
            records_integrity_expectations(),
            ("naId", "file_name", "line_num"),
        )
    ]


def date_frames(dates: pd.DataFrame) -> list[Frame]:
    return [
        Frame(
            "logical_dates",
            dates,
            date_expectations(),
            ("naId", "property", "file_name", "line_num"),
        )
    ]


def chunk_frames(
    chunks: pd.DataFrame, sequences: pd.DataFrame, max_tokens: int, *, observe_max: bool
) -> list[Frame]:
    return [
        Frame(
            "chunks",
            chunks,
            chunk_expectations(max_tokens, observe_max=observe_max),
            ("chunkId", "naId"),
        ),
        Frame(
            "chunk_sequences",
            sequences,
            chunk_sequence_expectations(),
            ("naId", "chunks", "chunkCount", "seqs"),
        ),
    ]


def validate_parsed_records(records: pd.DataFrame) -> SuiteOutcome:
    return validate_frames(PARSED_RECORDS_INTEGRITY, parsed_records_frames(records))


def validate_dates(dates: pd.DataFrame) -> SuiteOutcome:
    return validate_frames(PARSED_RECORDS_DATES, date_frames(dates))


def validate_chunks(chunks: pd.DataFrame, sequences: pd.DataFrame, max_tokens: int) -> SuiteOutcome:
    return validate_frames(
        CHUNKS_INTEGRITY,
        chunk_frames(chunks, sequences, max_tokens, observe_max=not chunks.empty),
    )
