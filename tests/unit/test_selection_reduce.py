"""record_selection reads only the files whose parsed part changed and re-decides the naIds
they hold, and its choice is exactly the full reduce's (tests.selection_oracle.select_records):
after an edit, a naId present in two files, a removed and an added file, a killed run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from nara_kg.demo import generate_demo_data
from nara_kg.ingest.inputs import file_id_of
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages import selection_reduce
from nara_kg.ingest.stages.parsed_records import parse_file
from nara_kg.ingest.stages.raw_jsonl import scan_inputs
from nara_kg.ingest.stages.record_selection import ParseResult, select_live_records
from nara_kg.ingest.stages.selection_store import SelectionStore, chosen_digest
from nara_kg.model.tables import Col
from tests.selection_oracle import select_records
from tests.stage_helpers import chunk_with_standin, chunked_layout


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("selection_reduce")
    data = root / "data"
    generate_demo_data(data, records=300, seed=11, shard_lines=60)
    layout = chunked_layout(data, root / "work")
    select_live_records(data, layout)
    return data, layout.root


@pytest.fixture
def built(source: tuple[Path, Path], tmp_path: Path) -> tuple[Path, WorkLayout]:
    shutil.copytree(source[0], tmp_path / "data")
    shutil.copytree(source[1], tmp_path / "work")
    return tmp_path / "data", WorkLayout(tmp_path / "work")


def full_reduce(layout: WorkLayout) -> dict[str, Any]:
    """What the full reduce gives over every live part, in the selection's own terms."""
    file_ids = pq.read_table(layout.parsed_index)[Col.FILE_ID].to_pylist()
    selection = select_records([layout.parsed_part(f) for f in file_ids])
    return {
        "chosen": sorted(selection.chosen),
        "aliases": sorted(selection.aliases.items()),
        "duplicates": selection.duplicates,
        "counts": (selection.records, selection.stubs),
    }


def written(layout: WorkLayout, result: ParseResult) -> dict[str, Any]:
    chosen = pq.read_table(layout.selection)
    aliases = pq.read_table(layout.aliases)
    return {
        "chosen": sorted(
            zip(chosen[Col.PART].to_pylist(), chosen[Col.ROW].to_pylist(), strict=True)
        ),
        "aliases": sorted(
            zip(aliases[Col.ALIAS].to_pylist(), aliases[Col.NA_ID].to_pylist(), strict=True)
        ),
        "duplicates": result.duplicates,
        "counts": (result.chosen_records, result.chosen_stubs),
    }


def edit(path: Path, change: Any, *, where: Any = None) -> int:
    """Apply `change(record)` to the first record of `path` that `where(record)` accepts, in
    place (no line moves); its naId."""
    lines = path.read_text().splitlines()
    for index, line in enumerate(lines):
        record = json.loads(line)
        if where is None or where(record):
            change(record)
            lines[index] = json.dumps(record)
            path.write_text("\n".join(lines) + "\n")
            return int(record["record"]["naId"])
    raise AssertionError(f"no record to edit in {path}")


def retitle(record: dict[str, Any]) -> None:
    record["record"]["title"] = "Ledger of the Hollin Ford ferry"


def is_item(record: dict[str, Any]) -> bool:
    return bool(record["record"].get("levelOfDescription") == "item")


def shards(data: Path) -> list[Path]:
    return sorted(data.rglob("*.jsonl"))


def item_shards(data: Path) -> list[Path]:
    return [p for p in shards(data) if '"levelOfDescription": "item"' in p.read_text()]


def restage(data: Path, layout: WorkLayout) -> None:
    """The per-file stages of the changed files again (scan, parse, chunk), no selection."""
    files = scan_inputs(data, layout)
    for file in files:
        parse_file(file, layout)
    chunk_with_standin(files, layout)


def reselect(data: Path, layout: WorkLayout, **kwargs: Any) -> ParseResult:
    restage(data, layout)
    return select_live_records(data, layout, **kwargs)


def test_one_edited_file_is_the_only_one_read_and_the_choice_is_the_full_reduces(
    built: tuple[Path, WorkLayout],
) -> None:
    data, layout = built
    again = select_live_records(data, layout)
    assert again.update is not None and again.update.files_read == []
    assert again.update.na_ids_decided == 0
    assert written(layout, again) == full_reduce(layout)

    path = item_shards(data)[1]
    edit(path, retitle, where=is_item)
    result = reselect(data, layout)
    assert result.update is not None and not result.update.whole
    assert result.update.files_read == [file_id_of(path.relative_to(data).as_posix())]
    assert 0 < result.update.rows_read < result.records
    assert written(layout, result) == full_reduce(layout)


def test_an_edited_authority_is_decided_without_reading_the_stubs_other_files_hold(
    built: tuple[Path, WorkLayout],
) -> None:
    data, layout = built
    path = next(p for p in shards(data) if "authority-records" in p.as_posix())
    na_ids = [json.loads(line)["record"]["naId"] for line in path.read_text().splitlines()]
    edit(path, retitle)
    result = reselect(data, layout)
    assert result.update is not None and result.update.files_read
    marks = ",".join("?" * len(na_ids))
    store = SelectionStore(layout.selection_state)
    stubs_elsewhere = store.db.execute(
        f"SELECT count(*) FROM candidates WHERE is_stub = 1 AND na_id IN ({marks})", na_ids
    ).fetchone()[0]
    store.close()
    # The authorities are named across the export; the choice read one row for each naId
    # (none is duplicated here), not their stubs.
    assert stubs_elsewhere > 2 * len(na_ids)
    assert not result.duplicates
    assert result.update.candidates_compared <= result.update.na_ids_decided
    assert written(layout, result) == full_reduce(layout)


def test_a_naid_in_two_files_edited_in_one_resolves_as_the_full_reduce_does(
    built: tuple[Path, WorkLayout],
) -> None:
    data, layout = built
    first, second = item_shards(data)[0], item_shards(data)[2]
    # The same record twice: copied into a later file, so the copies tie and the first file's
    # wins; then the later copy made more complete, so it wins; then less again.
    line = first.read_text().splitlines()[0]
    na_id = int(json.loads(line)["record"]["naId"])
    second.write_text(second.read_text() + line + "\n")
    result = reselect(data, layout)
    assert [d["naId"] for d in result.duplicates].count(na_id) == 1
    assert written(layout, result) == full_reduce(layout)
    first_id = file_id_of(first.relative_to(data).as_posix())
    with SelectionStore(layout.selection_state) as store:
        assert store.chosen_of([na_id])[na_id][0] == first_id

    def enrich(record: dict[str, Any]) -> None:
        record["record"]["scopeAndContentNote"] = "Tolls, fares and the ferryman's wages."
        record["record"]["generalNotes"] = ["Kept by the parish clerk."]

    edit(second, enrich, where=lambda r: int(r["record"]["naId"]) == na_id)
    result = reselect(data, layout)
    assert result.update is not None
    assert result.update.files_read == [file_id_of(second.relative_to(data).as_posix())]
    assert written(layout, result) == full_reduce(layout)
    with SelectionStore(layout.selection_state) as store:
        moved = store.chosen_of([na_id])[na_id][0]
    assert moved == file_id_of(second.relative_to(data).as_posix())


def test_removed_and_added_files_and_a_full_rebuild(built: tuple[Path, WorkLayout]) -> None:
    data, layout = built
    organizations = [p for p in shards(data) if "organization" in p.name]
    removed = organizations[0] if organizations else shards(data)[1]
    kept = removed.read_text()
    removed.unlink()
    result = reselect(data, layout)
    assert result.update is not None and result.update.files_dropped == 1
    assert result.update.files_read == []
    assert written(layout, result) == full_reduce(layout)

    removed.with_name("0-added.jsonl").write_text(kept)
    result = reselect(data, layout)
    assert result.update is not None and len(result.update.files_read) == 1
    assert written(layout, result) == full_reduce(layout)

    full = select_live_records(data, layout, full=True)
    assert full.update is not None and full.update.whole
    assert len(full.update.files_read) == pq.read_metadata(layout.parsed_index).num_rows
    assert written(layout, full) == full_reduce(layout)


def test_a_run_killed_before_its_tables_were_written_reduces_every_file_next(
    built: tuple[Path, WorkLayout], monkeypatch: pytest.MonkeyPatch
) -> None:
    data, layout = built
    edit(item_shards(data)[0], retitle, where=is_item)
    restage(data, layout)

    def killed(*_: Any, **__: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(selection_reduce, "write_selection_tables", killed)
    monkeypatch.setattr("nara_kg.ingest.stages.record_selection.write_selection_tables", killed)
    with pytest.raises(KeyboardInterrupt):
        select_live_records(data, layout)
    monkeypatch.undo()
    with SelectionStore(layout.selection_state) as store:
        assert not store.complete()
    result = select_live_records(data, layout)
    assert result.update is not None and result.update.whole
    assert written(layout, result) == full_reduce(layout)
    again = select_live_records(data, layout)
    assert again.update is not None and not again.update.whole


def test_an_unreadable_state_is_started_again(built: tuple[Path, WorkLayout]) -> None:
    data, layout = built
    layout.selection_state.write_bytes(b"not a database" * 100)
    result = select_live_records(data, layout)
    assert result.update is not None and result.update.whole
    assert written(layout, result) == full_reduce(layout)


def test_chosen_digest_is_the_rows_not_their_order() -> None:
    assert chosen_digest([3, 1, 2]) == chosen_digest([1, 2, 3]) != chosen_digest([1, 2])


def test_files_moved_names_both_ends_of_a_moved_choice_and_nothing_unchanged() -> None:
    before = {1: ("a", 0, 0), 2: ("a", 1, 0), 3: ("b", 0, 1)}
    after = {1: ("a", 0, 0), 2: ("c", 4, 0), 4: ("d", 0, 1)}
    assert selection_reduce.files_moved(before, after) == {"a", "c", "b", "d"}
    assert selection_reduce.files_moved(before, dict(before)) == set()
