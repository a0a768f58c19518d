"""The change set record_selection leaves for the graph writers: which naIds were added,
changed or removed and which files' parts changed, read from the changed files alone; which
writers may apply it; and the records whose Includes a change reaches (cycles included)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nara_kg.build.relationships import includes_scope
from nara_kg.demo import generate_demo_data
from nara_kg.ingest.inputs import file_id_of
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.changes import (
    ChangeSet,
    dirty_files,
    plan_for,
    read_changes,
)
from nara_kg.ingest.stages.record_index import IndexedRecord, RecordIndex
from nara_kg.ingest.stages.record_selection import select_live_records
from tests.stage_helpers import chunked_layout


def _record(na_id: int, digest: str = "d", file_id: str = "f", parent: int | None = None) -> Any:
    return IndexedRecord(na_id, file_id, na_id, digest, "item", 1, parent)


def test_the_index_compares_what_was_dropped_with_what_was_put(tmp_path: Path) -> None:
    with RecordIndex(tmp_path / "records.sqlite") as index:
        index.put([_record(1), _record(2, parent=1), _record(3, parent=2), _record(6, parent=1)])
        first = index.differences()
        assert (first.added, first.changed, first.removed, first.put) == ((1, 2, 3, 6), (), (), 4)
        assert index.drop_file("f") == 4
        index.put([_record(2, parent=1), _record(3, digest="e", parent=2), _record(4)])
        # The same content chosen from another file is a change (its file_name property moved).
        index.put([_record(6, file_id="g", parent=1)])
        second = index.differences()
        assert (second.added, second.changed, second.removed) == ((4,), (3, 6), (1,))
        assert second.old_parents == ((3, 2), (6, 1))
        assert second.put == 4
        # The log starts afresh after each reading.
        assert index.differences() == type(second)((), (), (), (), 0)


def test_dirty_files_are_the_added_removed_and_changed_ones() -> None:
    assert dirty_files({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "9", "d": "4"}) == [
        "b",
        "c",
        "d",
    ]
    assert dirty_files({"a": "1"}, {"a": "1"}) == []


def test_a_writer_applies_a_change_set_only_from_its_base() -> None:
    changes = ChangeSet(generation="g2", base="g1", changed=(7,))
    assert plan_for(changes, "g1", full=False).mode == "changes"
    assert plan_for(changes, "g2", full=False).mode == "done"
    assert plan_for(changes, "g0", full=False).mode == "whole"
    assert plan_for(changes, None, full=False).mode == "whole"
    assert plan_for(changes, "g1", full=True).mode == "whole"
    assert plan_for(None, "g1", full=False).mode == "whole"
    first = ChangeSet(generation="g1", base=None)
    assert plan_for(first, "g0", full=False).mode == "whole"
    assert plan_for(first, None, full=False).generation == "g1"


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, WorkLayout]:
    data = tmp_path / "data"
    generate_demo_data(data, records=150, seed=8)
    layout = chunked_layout(data, tmp_path / "work")
    return data, layout


def _retitle_first_item(data: Path) -> tuple[Path, int]:
    for path in sorted(data.rglob("*.jsonl")):
        lines = path.read_text().splitlines()
        for index, line in enumerate(lines):
            if '"levelOfDescription": "item"' in line:
                record = json.loads(line)
                record["record"]["title"] = "Roll of lamplighters of Wexcombe"
                lines[index] = json.dumps(record)
                path.write_text("\n".join(lines) + "\n")
                return path, int(record["record"]["naId"])
    raise AssertionError("no item")


def test_the_change_set_names_what_changed_and_reads_only_the_changed_file(
    built: tuple[Path, WorkLayout],
) -> None:
    data, layout = built
    # The whole-export helper selected before it chunked: that index had no chunk rows, so
    # the first selection after chunking has nothing to diff against.
    first = select_live_records(data, layout).changes
    assert first is not None and first.base is None
    assert read_changes(layout) == first

    same = select_live_records(data, layout).changes
    assert same is not None and same.base == first.generation
    assert same.empty and same.files == () and same.records_read == 0

    path, edited = _retitle_first_item(data)
    chunked_layout(data, layout.root)  # parses and chunks the changed file again
    changed = select_live_records(data, layout).changes
    assert changed is not None and changed.base is not None
    assert changed.files == (file_id_of(path.relative_to(data).as_posix()),)
    assert (changed.added, changed.changed, changed.removed) == ((), (edited,), ())
    with RecordIndex(layout.record_index) as index:
        in_file = len(index.records_of_file(changed.files[0]))
    assert changed.records_read == in_file < 150

    path.unlink()
    gone = select_live_records(data, layout).changes
    assert gone is not None and gone.files == changed.files
    assert edited in gone.removed and not gone.added


def test_a_change_set_no_index_confirms_is_not_taken(built: tuple[Path, WorkLayout]) -> None:
    data, layout = built
    select_live_records(data, layout)
    payload = json.loads(layout.changes.read_text())
    payload["generation"] = "from a run killed before its index committed"
    layout.changes.write_text(json.dumps(payload))
    assert read_changes(layout) is None


def test_includes_scope_takes_in_children_and_the_cycles_a_change_reaches(tmp_path: Path) -> None:
    with RecordIndex(tmp_path / "records.sqlite") as index:
        # 1 <- 2 <- 3, and 4's parent is 3; 5 has no parent.
        index.put([_record(1), _record(2, parent=1), _record(3, parent=2), _record(4, parent=3)])
        index.put([_record(5)])
        # 1 now names 4 as its parent: the cycle 1 -> 4 -> 3 -> 2 -> 1 (1 is its smallest).
        index.put([_record(1, digest="e", parent=4)])
        scope, parents, cycles = includes_scope(
            index, ChangeSet(generation="g2", base="g1", changed=(1,))
        )
        assert cycles == [[1, 4, 3, 2]]
        assert scope == {1, 2, 3, 4}
        assert parents == {2: 1, 3: 2, 4: 3}  # 1, the cycle's smallest, loses its link
        # 3 moves under 5: the cycle is broken, and 1 (reached from 3's old parent) gets its
        # link back.
        index.put([_record(3, digest="e", parent=5)])
        scope, parents, cycles = includes_scope(
            index,
            ChangeSet(generation="g3", base="g2", changed=(3,), old_parents=((3, 2),)),
        )
        assert cycles == []
        assert {1, 3, 4} <= scope
        assert parents[1] == 4 and parents[3] == 5 and parents[4] == 3
