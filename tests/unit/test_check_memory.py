"""The record_selection checks validate only the changed files' chosen rows and take the others'
results from their memory, and still report what a validation of every row reports: the same
pass or fail, counts and offending rows (quality.incremental, quality.memory)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from nara_kg.demo import generate_demo_data
from nara_kg.embedding.standin import StandinEmbedder
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.record_selection import chosen_rows_by_file, select_live_records
from nara_kg.model.tables import Col
from quality import expectations, frames, incremental
from quality.expectations import SuiteOutcome
from quality.memory import CheckMemory, FileResult, Tally
from tests.stage_helpers import chunked_layout

MAX_TOKENS = StandinEmbedder().max_tokens


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("check_memory")
    data = root / "data"
    generate_demo_data(data, records=300, seed=5, shard_lines=60)
    layout = chunked_layout(data, root / "work")
    select_live_records(data, layout)
    return data, layout.root


@pytest.fixture
def layout(built: tuple[Path, Path], tmp_path: Path) -> WorkLayout:
    """A copy of the built work folder (each test edits its parts)."""
    shutil.copytree(built[1], tmp_path / "work")
    return WorkLayout(tmp_path / "work")


def whole(layout: WorkLayout) -> dict[str, SuiteOutcome]:
    """Every suite over every chosen row at once: what the checks reported before memory."""
    chunks = frames.load_chunks_frame(layout)
    return {
        "records": expectations.validate_parsed_records(frames.load_records_frame(layout)),
        "dates": expectations.validate_dates(frames.load_dates_frame(layout)),
        "chunks": expectations.validate_chunks(
            chunks, frames.chunk_sequences_frame(chunks), MAX_TOKENS
        ),
    }


def remembered(layout: WorkLayout, *, full: bool = False) -> dict[str, SuiteOutcome]:
    return {
        "records": incremental.validate_parsed_records(layout, whole=full),
        "dates": incremental.validate_dates(layout, whole=full),
        "chunks": incremental.validate_chunks(layout, MAX_TOKENS, whole=full),
    }


def figures(outcome: SuiteOutcome) -> SuiteOutcome:
    """The outcome without how it was computed (rows validated now / from memory)."""
    return replace(outcome, rows_validated=None, rows_from_memory=None)


def assert_same(layout: WorkLayout, found: dict[str, SuiteOutcome]) -> None:
    expected = whole(layout)
    for name, outcome in found.items():
        assert figures(outcome) == expected[name], name


def rewrite(path: Path, edit: Any) -> None:
    """Rewrite a Parquet part with `edit(table) -> table` (a new file, renamed into place)."""
    table = edit(pq.read_table(path))
    pq.write_table(table, path.with_suffix(".tmp"))
    path.with_suffix(".tmp").replace(path)


def set_cell(table: pa.Table, column: str, row: int, value: Any) -> pa.Table:
    values = table[column].to_pylist()
    values[row] = value
    index = table.schema.get_field_index(column)
    return table.set_column(index, table.schema.field(index), pa.array(values, table[column].type))


def chosen(layout: WorkLayout) -> list[tuple[str, list[int]]]:
    return [(f, rows.tolist()) for f, rows in chosen_rows_by_file(layout) if len(rows)]


def test_first_run_validates_every_row_and_reports_what_a_whole_validation_does(
    layout: WorkLayout,
) -> None:
    assert len(chosen(layout)) >= 4
    found = remembered(layout)
    assert_same(layout, found)
    assert all(o.success for o in found.values())
    records = found["records"]
    assert records.rows_validated == records.rows["chosen_records"] > 0
    assert records.rows_from_memory == 0


def test_nothing_changed_validates_nothing_and_reports_the_same(layout: WorkLayout) -> None:
    first = remembered(layout)
    again = remembered(layout)
    for name, outcome in again.items():
        assert outcome.rows_validated == 0, name
        assert outcome.rows_from_memory == sum(outcome.rows.values()), name
        assert figures(outcome) == figures(first[name]), name


def test_a_bad_row_in_a_changed_file_fails_and_stays_failing_while_others_change(
    layout: WorkLayout,
) -> None:
    remembered(layout)
    (bad_file, bad_rows), (other_file, other_rows) = chosen(layout)[1], chosen(layout)[2]
    rewrite(
        layout.parsed_part(bad_file),
        lambda t: set_cell(t, Col.SOURCE, bad_rows[0], "https://example.org/not-the-catalog"),
    )
    found = remembered(layout)
    assert not found["records"].success
    # Only the changed file's chosen rows were validated.
    assert found["records"].rows_validated == len(bad_rows)
    assert_same(layout, found)
    failed = {o.description for o in found["records"].failed}
    assert failed == {"source is a catalog URL", "source ends in the row's naId"}

    # Another file changes (a good edit): the bad row, remembered, keeps the check failing.
    rewrite(layout.parsed_part(other_file), lambda t: t)
    later = remembered(layout)
    assert later["records"].rows_validated == len(other_rows)
    assert not later["records"].success
    assert_same(layout, later)

    # The bad file mended: the check passes again.
    def mend(table: pa.Table) -> pa.Table:
        na_id = table[Col.NA_ID][bad_rows[0]].as_py()
        return set_cell(table, Col.SOURCE, bad_rows[0], f"https://catalog.archives.gov/id/{na_id}")

    rewrite(layout.parsed_part(bad_file), mend)
    mended = remembered(layout)
    assert mended["records"].success
    assert_same(layout, mended)


def test_a_naid_chosen_twice_across_files_fails_uniqueness_as_a_whole_validation_does(
    layout: WorkLayout,
) -> None:
    remembered(layout)
    (first_file, first_rows), (second_file, second_rows) = chosen(layout)[0], chosen(layout)[3]
    taken = pq.read_table(layout.parsed_part(first_file))[Col.NA_ID][first_rows[0]].as_py()

    def duplicate(table: pa.Table) -> pa.Table:
        table = set_cell(table, Col.NA_ID, second_rows[0], taken)
        url = f"https://catalog.archives.gov/id/{taken}"
        return set_cell(table, Col.SOURCE, second_rows[0], url)

    rewrite(layout.parsed_part(second_file), duplicate)
    found = remembered(layout)
    assert found["records"].rows_validated == len(second_rows)
    [failed] = found["records"].failed
    assert failed.description == "naId unique per chosen record"
    assert failed.unexpected_count == 2
    # Both copies are named, the unchanged file's one from memory.
    assert {row["file_name"] for row in failed.sample} == {
        pq.read_table(layout.parsed_part(f))[Col.FILE_NAME][0].as_py()
        for f in (first_file, second_file)
    }
    assert_same(layout, found)


def test_a_chunk_over_the_limit_and_a_bad_date_are_found_in_the_changed_file(
    layout: WorkLayout,
) -> None:
    remembered(layout)
    file_id, rows = chosen(layout)[2]
    chunk_part = layout.chunk_part(file_id)
    chunk_rows = pq.read_table(chunk_part)[Col.RECORD_ROW].to_pylist()
    index = chunk_rows.index(rows[0])
    rewrite(chunk_part, lambda t: set_cell(t, Col.TOKENS, index, MAX_TOKENS + 5))

    def bad_date(table: pa.Table) -> pa.Table:
        properties = json.loads(table[Col.PROPERTIES][rows[1]].as_py())
        properties["logicalDate_test"] = "1999-02-30"
        return set_cell(table, Col.PROPERTIES, rows[1], json.dumps(properties))

    rewrite(layout.parsed_part(file_id), bad_date)
    found = remembered(layout)
    assert not found["chunks"].success and not found["dates"].success
    assert {o.description for o in found["chunks"].failed} == {
        f"chunk fits the model: 1 <= tokens <= {MAX_TOKENS}",
        f"longest chunk <= {MAX_TOKENS} tokens",
    }
    assert found["chunks"].rows_from_memory and found["chunks"].rows_validated
    assert_same(layout, found)


def test_removed_files_leave_the_figures(layout: WorkLayout, built: tuple[Path, Path]) -> None:
    remembered(layout)
    data = layout.root.parent / "data"
    shutil.copytree(built[0], data)
    gone = sorted(data.rglob("*.jsonl"))[1]
    gone.unlink()
    before = {f.file_id: f.signature for f in incremental.selected_files(layout)}
    select_live_records(data, layout)
    after = incremental.selected_files(layout)
    assert len(after) == len(before) - 1
    found = remembered(layout)
    # The files whose chosen rows moved (stubs now chosen instead of the removed records) are
    # validated again; the rest come from memory.
    moved = [f for f in after if before[f.file_id] != f.signature]
    assert found["records"].rows_validated == sum(len(f.rows) for f in moved)
    assert (found["records"].rows_from_memory or 0) > 0
    assert_same(layout, found)


def test_a_full_rebuild_or_a_changed_suite_validates_every_row(
    layout: WorkLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    remembered(layout)
    full = remembered(layout, full=True)
    assert full["records"].rows_from_memory == 0
    assert full["records"].rows_validated == full["records"].rows["chosen_records"]
    monkeypatch.setattr(incremental, "config_digest", lambda *params: "another definition")
    changed = remembered(layout)
    assert changed["dates"].rows_from_memory == 0
    assert_same(layout, changed)


def test_a_run_killed_while_remembering_leaves_the_last_memory(
    layout: WorkLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    remembered(layout)
    file_id, rows = chosen(layout)[1]
    rewrite(
        layout.parsed_part(file_id),
        lambda t: set_cell(t, Col.SOURCE, rows[0], "https://example.org/bad"),
    )

    def killed(*_: Any, **__: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(CheckMemory, "_recount", killed)
    with pytest.raises(KeyboardInterrupt):
        incremental.validate_parsed_records(layout)
    monkeypatch.undo()
    found = incremental.validate_parsed_records(layout)
    # The file was not remembered by the killed run: it is validated now and fails.
    assert found.rows_validated == len(rows)
    assert not found.success


# --------------------------------------------------------------------------- the memory alone
def test_memory_finds_values_held_twice_across_files(tmp_path: Path) -> None:
    def result(file_id: str, keys: list[str]) -> FileResult:
        return FileResult(
            file_id,
            {"f": len(keys)},
            {0: Tally(elements=len(keys))},
            {0: [(k, i, {"k": k, "file": file_id}) for i, k in enumerate(keys)]},
        )

    with CheckMemory(tmp_path / "m.sqlite") as memory:
        with memory.transaction():
            memory.replace("s", "c", [], {"a": "1", "b": "1"}, [result("a", ["x", "y"])], [])
            memory.replace("s", "c", [], {"b": "1"}, [result("b", ["y", "z"])], [])
        held = sorted((f, p) for f, p, _ in memory.duplicated("s", 0))
        assert held == [("a", 1), ("b", 0)]
        with memory.transaction():
            memory.replace("s", "c", [], {"b": "2"}, [result("b", ["z"])], [])
        assert memory.duplicated("s", 0) == []
        with memory.transaction():
            memory.replace("s", "c", [], {"c": "1"}, [result("c", ["x"])], ["b"])
        assert sorted(f for f, _, _ in memory.duplicated("s", 0)) == ["a", "c"]
        assert memory.signatures("s") == {"a": "1", "c": "1"}


def test_an_unreadable_memory_is_started_again(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    path.write_bytes(b"not a database" * 100)
    with CheckMemory(path) as memory:
        assert memory.suite("s") is None


def test_selected_files_group_the_chosen_rows(layout: WorkLayout) -> None:
    files = incremental.selected_files(layout)
    assert [(f.file_id, f.rows.tolist()) for f in files if len(f.rows)] == chosen(layout)
    assert pc.sum(pa.array([len(f.rows) for f in files])).as_py() == sum(
        len(r) for _, r in chosen(layout)
    )


def test_validation_groups_hold_whole_files_up_to_the_limit() -> None:
    def file(name: str, rows: int) -> incremental.SelectedFile:
        return incremental.SelectedFile(name, np.arange(rows), name)

    files = [file("a", 40), file("b", 50), file("c", 200), file("d", 10), file("e", 10)]
    groups = incremental.validation_groups(files, limit=100)
    assert [[f.file_id for f in group] for group in groups] == [["a", "b"], ["c"], ["d", "e"]]
    assert incremental.validation_groups([], limit=100) == [[]]


def test_a_whole_validation_in_groups_of_files_reports_what_one_validation_does(
    layout: WorkLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a few files a validation, a bad row and a naId chosen in two files of different
    groups are found as when every file is validated at once."""
    monkeypatch.setattr(incremental, "VALIDATION_RECORDS", 70)
    files = chosen(layout)
    (first_file, first_rows), (second_file, second_rows) = files[0], files[-1]
    taken = pq.read_table(layout.parsed_part(first_file))[Col.NA_ID][first_rows[0]].as_py()

    def duplicate(table: pa.Table) -> pa.Table:
        table = set_cell(table, Col.NA_ID, second_rows[0], taken)
        return set_cell(table, Col.SOURCE, second_rows[1], "https://example.org/elsewhere")

    rewrite(layout.parsed_part(second_file), duplicate)
    held: list[int] = []
    records_frame_of = frames.records_frame_of

    def spy(layout: WorkLayout, files: Any) -> Any:
        held.append(sum(len(rows) for _, rows in files))
        return records_frame_of(layout, files)

    monkeypatch.setattr(frames, "records_frame_of", spy)
    found = remembered(layout, full=True)
    # Several validations, none holding more than the limit (the files have 60 records each).
    assert len(held) >= 3 and max(held) <= 70 and sum(held) == sum(len(r) for _, r in files)
    assert_same(layout, found)
    failed = {o.description: o.unexpected_count for o in found["records"].failed}
    assert failed["naId unique per chosen record"] == 2
    assert failed["source is a catalog URL"] == 1


def test_the_memory_is_free_for_the_other_checks_while_a_suite_validates(
    layout: WorkLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's other checks (another process) write the same memory while a whole
    validation runs: no write lock is held across a validation."""
    records_frame_of = frames.records_frame_of
    writes: list[int] = []

    def meanwhile(layout: WorkLayout, files: Any) -> Any:
        other = sqlite3.connect(layout.check_memory, timeout=0.1, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")  # "database is locked" while a write is open
            other.execute("COMMIT")
            writes.append(1)
        finally:
            other.close()
        return records_frame_of(layout, files)

    monkeypatch.setattr(incremental, "VALIDATION_RECORDS", 70)
    monkeypatch.setattr(frames, "records_frame_of", meanwhile)
    found = incremental.validate_parsed_records(layout, whole=True)
    assert found.success and len(writes) >= 3
