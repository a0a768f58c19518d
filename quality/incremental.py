"""The record_selection checks over the changed files' rows, with every other file's results
from the check's memory (:mod:`quality.memory`), reported for the whole selection.

A file is changed for a check when its signature differs from the one remembered: its parsed
part, its chunk part (file identity, size, modification time), its chunker key and which of its
rows are chosen. The figures add up per file (elements, unexpected rows, the first offending
rows in selection order, the largest value), except uniqueness, which the memory answers by
value across files; so the pass or fail and the figures equal a validation of every row. A full
rebuild, a suite whose definition changed (the digest of these modules) or a memory that cannot
be read validates every file again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.common import read_json
from nara_kg.model.source_digest import source_digest
from nara_kg.model.tables import Col
from quality import expectations, frames, names
from quality.expectations import ExpectationOutcome, Frame, SuiteOutcome, sample_row
from quality.memory import CheckMemory, FileResult, Tally
from quality.names import SAMPLE_SIZE

UNIQUE = "expect_column_values_to_be_unique"
COLUMN_MAX = "expect_column_max_to_be_between"
#: The code a remembered result follows from: a change to any of these forgets it.
_SOURCES = ("expectations.py", "frames.py", "memory.py", "incremental.py")


@dataclass(frozen=True)
class SelectedFile:
    """A live file, its chosen rows and what its check results follow from."""

    file_id: str
    rows: np.ndarray
    signature: str


def _stat(path: Path) -> str:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return "missing"
    return f"{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}"


def selected_files(layout: WorkLayout) -> list[SelectedFile]:
    """Every live file in selection order with its chosen rows (read from the selection table
    in Arrow, grouped in numpy) and its signature."""
    frames.require(layout.parsed_index, "record_selection")
    frames.require(layout.selection, "record_selection")
    file_ids = pq.read_table(layout.parsed_index, columns=[Col.FILE_ID])[Col.FILE_ID].to_pylist()
    table = pq.read_table(layout.selection)
    parts = table[Col.PART].to_numpy()
    rows = table[Col.ROW].to_numpy()
    order = np.lexsort((rows, parts))
    parts, rows = parts[order], rows[order]
    bounds = np.searchsorted(parts, np.arange(len(file_ids) + 1))
    found: list[SelectedFile] = []
    for index, file_id in enumerate(file_ids):
        chosen = rows[bounds[index] : bounds[index + 1]]
        key = (read_json(layout.chunk_stats(file_id)) or {}).get("key", "")
        signature = "|".join(
            (
                _stat(layout.parsed_part(file_id)),
                _stat(layout.chunk_part(file_id)),
                str(key),
                hashlib.sha256(chosen.astype(np.int64).tobytes()).hexdigest(),
            )
        )
        found.append(SelectedFile(file_id, chosen, signature))
    return found


def config_digest(*params: object) -> str:
    """The suites' definition: these modules' source and the suite's parameters."""
    return source_digest(
        (Path(__file__).parent / name for name in _SOURCES), prefix=repr(params).encode()
    )


# --------------------------------------------------------------------------- splitting
class NotSplit(Exception):
    """An expectation raised instead of answering: its result cannot be added up per file."""


def _plain(value: Any) -> Any:
    return expectations._plain(value)


def _condition(kwargs: dict[str, Any]) -> str | None:
    condition = kwargs.get("row_condition")
    if isinstance(condition, dict):
        condition = condition.get("pass_through_filter")
    return str(condition) if condition else None


def split_by_file(
    suite: str, suite_frames: Sequence[Frame], file_ids: Sequence[str], order_by: dict[str, str]
) -> tuple[list[dict[str, Any]], list[FileResult]]:
    """Validate `suite_frames` (each with frames.FILE and frames.POS columns) once, and split
    each expectation's result by file: (the expectations' outlines, one result per file).
    `order_by` names a frame's column whose value orders its offending rows across files (the
    frame is sorted by it), instead of the file order."""
    outlines: list[dict[str, Any]] = []
    results = {file_id: FileResult(file_id) for file_id in file_ids}
    for frame, data, found in expectations.run_frames(suite, suite_frames, "COMPLETE"):
        files = data[frames.FILE].to_numpy()
        positions = data[frames.POS].to_numpy()
        sizes = data.groupby(frames.FILE).size().to_dict()
        for result in results.values():
            result.rows[frame.name] = int(sizes.get(result.file_id, 0))
        order_column = order_by.get(frame.name)
        for validation in found:
            config = validation.expectation_config
            assert config is not None
            exception = validation.exception_info or {}
            raised = isinstance(exception, dict) and exception.get("raised_exception")
            # A column maximum is taken per file below, whatever GX made of these rows.
            if raised and config.type != COLUMN_MAX:
                raise NotSplit(str(exception.get("exception_message")))
            kwargs = dict(config.kwargs)
            columns = expectations.columns_of(kwargs)
            position = len(outlines)
            outlines.append(
                {
                    "frame": frame.name,
                    "type": config.type,
                    "description": config.description or config.type,
                    "column": ", ".join(columns),
                    "min_value": kwargs.get("min_value"),
                    "max_value": kwargs.get("max_value"),
                    "global_order": order_column is not None,
                }
            )
            tallies = {f: Tally(elements=0, unexpected=0) for f in results}
            if config.type == UNIQUE:
                for f, tally in tallies.items():
                    tally.elements, tally.unexpected = results[f].rows[frame.name], None
                _keys_of(frame, data, columns, position, files, positions, results)
            elif config.type == COLUMN_MAX:
                maxima = data.groupby(frames.FILE)[columns[0]].max().to_dict()
                for f, tally in tallies.items():
                    tally.elements = tally.unexpected = None
                    tally.maximum = _plain(maxima.get(f))
            else:
                condition = _condition(kwargs)
                domain = data.query(condition) if condition else data
                for label, count in domain.groupby(frames.FILE).size().to_dict().items():
                    tallies[str(label)].elements = int(count)
                for index in (validation.result or {}).get("unexpected_index_list") or []:
                    tally = tallies[files[index]]
                    tally.unexpected = (tally.unexpected or 0) + 1
                    if len(tally.sample) < SAMPLE_SIZE:
                        order = data[order_column].iat[index] if order_column else positions[index]
                        tally.sample.append(
                            ([_plain(order)], sample_row(frame, data, int(index), columns))
                        )
            for f, tally in tallies.items():
                results[f].tallies[position] = tally
    return outlines, list(results.values())


def _key(value: Any) -> str:
    value = _plain(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _keys_of(
    frame: Frame,
    data: Any,
    columns: list[str],
    position: int,
    files: np.ndarray,
    positions: np.ndarray,
    results: dict[str, FileResult],
) -> None:
    column = columns[0]
    shown = [*frame.id_columns, *(c for c in columns if c not in frame.id_columns)]
    shown = [name for name in shown if name in data]
    present = np.flatnonzero(data[column].notna().to_numpy())
    # Plain lists: indexing a pandas column row by row was most of a whole validation's time.
    values = data[column].iloc[present].tolist()
    records = data.iloc[present][shown].to_dict("records")
    for index, value, record in zip(present.tolist(), values, records, strict=True):
        results[files[index]].keys.setdefault(position, []).append(
            (_key(value), int(positions[index]), {k: _plain(v) for k, v in record.items()})
        )


# --------------------------------------------------------------------------- combining
def _within(value: Any, outline: dict[str, Any]) -> bool:
    low, high = outline.get("min_value"), outline.get("max_value")
    return value is not None and (low is None or value >= low) and (high is None or value <= high)


def combine(
    memory: CheckMemory, suite: str, outlines: list[dict[str, Any]], order: Sequence[str]
) -> list[ExpectationOutcome]:
    """Each expectation's figures over every file in `order`, from the memory."""
    rank = {file_id: index for index, file_id in enumerate(order)}
    outcomes: list[ExpectationOutcome] = []
    for position, outline in enumerate(outlines):
        pairs = [(f, t) for f, t in memory.tallies(suite, position) if f in rank]
        tallies = [t for _, t in pairs]
        elements: int | None
        unexpected: int | None
        if outline["type"] == UNIQUE:
            elements = sum(t.elements or 0 for t in tallies)
            held = sorted(
                (row for row in memory.duplicated(suite, position) if row[0] in rank),
                key=lambda row: (rank[row[0]], row[1]),
            )
            unexpected = len(held)
            sample = [row for _, _, row in held[:SAMPLE_SIZE]]
            success, observed = unexpected == 0, f"{unexpected} of {elements} unexpected"
        elif outline["type"] == COLUMN_MAX:
            values = [t.maximum for t in tallies if t.maximum is not None]
            largest = max(values) if values else None
            if largest is None:
                continue  # no chunk at all: a whole validation does not observe the maximum
            elements = unexpected = None
            sample, success, observed = [], _within(largest, outline), str(largest)
        else:
            elements = sum(t.elements or 0 for t in tallies)
            unexpected = sum(t.unexpected or 0 for t in tallies)
            entries = [
                ((order_key,) if outline["global_order"] else (rank[f], *order_key), row)
                for f, t in pairs
                for order_key, row in t.sample
            ]
            entries.sort(key=lambda entry: entry[0])
            sample = [row for _, row in entries[:SAMPLE_SIZE]]
            success, observed = unexpected == 0, f"{unexpected} of {elements} unexpected"
        outcomes.append(
            ExpectationOutcome(
                frame=outline["frame"],
                expectation=outline["type"],
                description=outline["description"],
                column=outline["column"],
                success=success,
                observed=observed,
                element_count=elements,
                unexpected_count=unexpected,
                sample=sample,
            )
        )
    return outcomes


# --------------------------------------------------------------------------- one suite
#: Chosen records whose rows one validation holds at most (a file's records are never split).
VALIDATION_RECORDS = 25_000


def validation_groups(
    files: Sequence[SelectedFile], limit: int | None = None
) -> list[list[SelectedFile]]:
    """`files` in order, in consecutive groups of at most `limit` (VALIDATION_RECORDS) chosen
    records (a file with more is a group of its own); one empty group when there are no files,
    so that a suite validated for the first time still yields its expectations."""
    limit = VALIDATION_RECORDS if limit is None else limit
    groups: list[list[SelectedFile]] = [[]]
    held = 0
    for file in files:
        if groups[-1] and held + len(file.rows) > limit:
            groups.append([])
            held = 0
        groups[-1].append(file)
        held += len(file.rows)
    return groups


def remembered_suite(
    layout: WorkLayout,
    suite: str,
    config: str,
    build: Callable[[list[SelectedFile]], tuple[list[Frame], dict[str, str]]],
    *,
    whole: bool,
) -> SuiteOutcome:
    """Validate the changed files' rows of `suite` (every file's when `whole`, or when the
    memory does not hold this suite's definition) and report the whole selection's figures.
    `build(files)` gives the suite's frames over those files' chosen rows and `order_by`."""
    files = selected_files(layout)
    order = [f.file_id for f in files]
    with CheckMemory(layout.check_memory) as memory:
        known = memory.suite(suite)
        trusted = known is not None and known[0] == config and not whole
        remembered = memory.signatures(suite) if trusted else {}
        stale = [f for f in files if remembered.get(f.file_id) != f.signature]
        gone = sorted(set(remembered) - set(order))
        outlines = known[1] if known is not None and trusted else []
        validated = 0
        with memory.transaction():
            if not trusted:
                memory.forget(suite)
            memory.replace(suite, config, outlines, {}, [], gone)
        # Whole once (a first run, a changed suite: every file stale), otherwise the changed
        # files; a group of files at a time, so that the frames never hold more than
        # VALIDATION_RECORDS records whatever the selection's size. Every expectation is
        # tallied per file (uniqueness across files through the memory's keys), so the groups
        # give the results one validation of every file gives. Each group is remembered in a
        # transaction of its own, taken after its validation: the other checks of the run
        # write the same memory meanwhile.
        for group in validation_groups(stale) if stale or not trusted else []:
            suite_frames, order_by = build(group)
            outlines, results = split_by_file(
                suite, suite_frames, [f.file_id for f in group], order_by
            )
            with memory.transaction():
                memory.replace(
                    suite, config, outlines, {f.file_id: f.signature for f in group}, results, []
                )
            validated += sum(sum(r.rows.values()) for r in results)
        outcomes = combine(memory, suite, outlines, order)
        rows: dict[str, int] = {}
        for counts in memory.rows(suite, order).values():
            for frame, count in counts.items():
                rows[frame] = rows.get(frame, 0) + count
    return SuiteOutcome(
        suite,
        outcomes,
        rows,
        rows_validated=validated,
        rows_from_memory=sum(rows.values()) - validated,
    )


# --------------------------------------------------------------------------- the suites
def _files(files: list[SelectedFile]) -> list[tuple[str, list[int]]]:
    return [(f.file_id, f.rows.tolist()) for f in files]


def validate_parsed_records(layout: WorkLayout, *, whole: bool = False) -> SuiteOutcome:
    """expectations.validate_parsed_records over the chosen records, file by file."""

    def build(files: list[SelectedFile]) -> tuple[list[Frame], dict[str, str]]:
        [frame] = expectations.parsed_records_frames(frames.records_frame_of(layout, _files(files)))
        return [frame], {}

    return remembered_suite(
        layout, names.PARSED_RECORDS_INTEGRITY, config_digest(), build, whole=whole
    )


def validate_dates(layout: WorkLayout, *, whole: bool = False) -> SuiteOutcome:
    """expectations.validate_dates over the chosen records' dates, file by file."""

    def build(files: list[SelectedFile]) -> tuple[list[Frame], dict[str, str]]:
        return expectations.date_frames(frames.dates_frame_of(layout, _files(files))), {}

    return remembered_suite(layout, names.PARSED_RECORDS_DATES, config_digest(), build, whole=whole)


def validate_chunks(layout: WorkLayout, max_tokens: int, *, whole: bool = False) -> SuiteOutcome:
    """expectations.validate_chunks over the chosen records' chunks, file by file (a record's
    chunks are all in its file, so its chunk sequence is whole there)."""

    def build(files: list[SelectedFile]) -> tuple[list[Frame], dict[str, str]]:
        missing = [f.file_id for f in files if not layout.chunk_part(f.file_id).exists()]
        if missing:
            raise FileNotFoundError(
                f"chunk parts missing under {layout.chunks_dir} ({len(missing)} files): "
                "materialize chunks"
            )
        chunks, sequences = frames.chunk_frames_of(layout, _files(files))
        # The longest chunk is observed over every file: it is kept whatever this run reads.
        return expectations.chunk_frames(chunks, sequences, max_tokens, observe_max=True), {
            "chunk_sequences": "naId"
        }

    return remembered_suite(
        layout, names.CHUNKS_INTEGRITY, config_digest(max_tokens), build, whole=whole
    )


@dataclass(frozen=True)
class Cuts:
    """The chosen records whose body text was cut, over the whole selection."""

    records: list[dict[str, Any]]
    rows_validated: int
    rows_from_memory: int


def cut_records(layout: WorkLayout, *, whole: bool = False) -> Cuts:
    """frames.cut_records, reading only the changed files' chosen rows."""
    suite, config = names.PARSED_RECORDS_BODY_CUT, config_digest()
    files = selected_files(layout)
    rank = {f.file_id: index for index, f in enumerate(files)}
    with CheckMemory(layout.check_memory) as memory:
        known = memory.suite(suite)
        trusted = known is not None and known[0] == config and not whole
        remembered = memory.signatures(suite) if trusted else {}
        stale = [f for f in files if remembered.get(f.file_id) != f.signature]
        results = []
        for f in stale:
            cuts = frames.cuts_of(layout, f.file_id, f.rows.tolist())
            tally = Tally(unexpected=len(cuts), sample=[([i], c) for i, c in enumerate(cuts)])
            results.append(FileResult(f.file_id, {"chosen_records": len(f.rows)}, {0: tally}))
        with memory.transaction():
            if not trusted:
                memory.forget(suite)
            gone = set(remembered) - set(rank)
            memory.replace(
                suite, config, [], {f.file_id: f.signature for f in stale}, results, gone
            )
        entries = sorted(
            ((rank[f], *order), row)
            for f, t in memory.tallies(suite, 0)
            if f in rank
            for order, row in t.sample
        )
    validated = sum(len(f.rows) for f in stale)
    total = sum(len(f.rows) for f in files)
    return Cuts([row for _, row in entries], validated, total - validated)
