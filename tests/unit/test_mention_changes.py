"""Which records entity_mentions links again after a change set (record index only, no Neo4j)."""

from __future__ import annotations

from pathlib import Path

from nara_kg.build.mention_changes import relink_scope
from nara_kg.ingest.stages.changes import ChangeSet
from nara_kg.ingest.stages.record_index import IndexedRecord, RecordIndex


def _record(na_id: int, parent: int | None, node_type: str = "item") -> IndexedRecord:
    return IndexedRecord(na_id, "f", na_id, "d", node_type, 1, parent)


def test_the_scope_is_the_changed_records_still_chosen_and_every_record_below_them(
    tmp_path: Path,
) -> None:
    # 1 <- 2 <- 3 <- 4, and 1 <- 5; 9 cites 2 but is not below it; 7 was removed, 8 its child.
    records = [_record(1, None, "series"), _record(2, 1, "fileUnit"), _record(3, 2), _record(4, 3)]
    records += [_record(5, 1), _record(8, 7)]
    records.append(IndexedRecord(9, "f", 9, "d", "item", 1, None, (("subject", 2),)))
    with RecordIndex(tmp_path / "index.sqlite") as index:
        index.put(records)
        changed = relink_scope(index, ChangeSet("g", "b", changed=(2,)))
        assert sorted(changed) == [2, 3, 4]
        removed = relink_scope(index, ChangeSet("g", "b", removed=(7,)))
        assert sorted(removed) == [8]
        leaf = relink_scope(index, ChangeSet("g", "b", changed=(4,)))
        assert sorted(leaf) == [4]


def test_records_citing_a_moved_alias_and_those_below_them_are_in_the_scope(
    tmp_path: Path,
) -> None:
    # 9 cites alias 50 (an organization's former name), 10 is below 9; 11 cites nothing moved.
    records = [IndexedRecord(9, "f", 9, "d", "series", 1, None, (("creator", 50),))]
    records += [_record(10, 9), _record(11, None)]
    with RecordIndex(tmp_path / "index.sqlite") as index:
        index.put(records)
        changes = ChangeSet("g", "b", aliases=(50,))
        moved = relink_scope(index, changes, index.citing(changes.aliases))
        assert sorted(moved) == [9, 10]
