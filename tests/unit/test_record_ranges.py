"""Relationships compared whole a naId range of records at a time: the ranges follow one
another, cover every naId and hold exactly the relationships of the records in them (record
index only, no Neo4j)."""

from __future__ import annotations

from pathlib import Path

from nara_kg.build.relationships import (
    authorities_by_type,
    includes_by_type,
    next_by_type,
    record_ranges,
    scoped_authority_edges,
)
from nara_kg.ingest.stages.record_index import IndexedRecord, RecordIndex
from nara_kg.model.edges import RecordLinks, ancestor_cycles, includes_edges, next_edges
from nara_kg.model.schema import Rel


def _record(na_id: int, chunks: int) -> IndexedRecord:
    return IndexedRecord(na_id, "f", na_id, "d", "item", chunks, None)


def test_ranges_cover_every_naid_and_hold_each_records_relationships(tmp_path: Path) -> None:
    counts = {7: 3, 2: 1, 40: 2, 11: 4, 5: 2}
    with RecordIndex(tmp_path / "index.sqlite") as index:
        index.put([_record(na_id, n) for na_id, n in counts.items()])
        ranges = list(record_ranges(index, next_by_type, size=2))
    assert [(r.after, r.upto, r.records) for r in ranges] == [
        (None, 5, 2),
        (5, 11, 2),
        (11, None, 1),
    ]
    for edge_range in ranges:
        for source, target in edge_range.desired[Rel.NEXT]:
            na_id = int(source.split("-")[0])
            assert edge_range.after is None or na_id > edge_range.after
            assert edge_range.upto is None or na_id <= edge_range.upto
            assert target.split("-")[0] == str(na_id)
    union = set().union(*(r.desired[Rel.NEXT] for r in ranges))
    assert sum(len(r.desired[Rel.NEXT]) for r in ranges) == len(union)
    assert union == next_edges(RecordLinks(na_id, n, None) for na_id, n in counts.items())


def test_an_empty_index_is_one_open_range_with_nothing_desired(tmp_path: Path) -> None:
    with RecordIndex(tmp_path / "index.sqlite") as index:
        ranges = list(record_ranges(index, next_by_type, size=2))
    assert [(r.after, r.upto, r.desired, r.records) for r in ranges] == [(None, None, {}, 0)]


def test_authority_ranges_give_each_citing_records_relationships_once(tmp_path: Path) -> None:
    # 3 and 8 cite series 1 (present) as creator; 8 also cites 99, which is not chosen.
    records = [
        IndexedRecord(1, "f", 1, "d", "series", 1, None),
        IndexedRecord(3, "f", 3, "d", "item", 1, None, (("creator", 1),)),
        IndexedRecord(8, "f", 8, "d", "item", 2, None, (("creator", 1), ("subject", 99))),
    ]
    with RecordIndex(tmp_path / "index.sqlite") as index:
        index.put(records)
        ranges = list(record_ranges(index, authorities_by_type, size=2))
        whole = scoped_authority_edges(index, {r.na_id: r for r in records})
        # Next and Includes read no references: the walk leaves them out, and only them.
        bare = [r for batch in index.batches(2, references=False) for r in batch]
        full = [r for batch in index.batches(2) for r in batch]
    assert [r.references for r in bare] == [(), (), ()]
    assert [r.references for r in full] == [r.references for r in records]
    assert [r.na_id for r in bare] == [r.na_id for r in full]
    assert [(r.after, r.upto) for r in ranges] == [(None, 3), (3, None)]
    for rel, edges in whole.items():
        assert set().union(*(r.desired.get(rel, set()) for r in ranges)) == edges, rel
    assert ranges[0].desired[Rel.CREATOR] == {("1-0", "3-0")}
    assert ranges[1].desired[Rel.CREATOR] == {("1-0", "8-0")}


def test_includes_ranges_equal_the_whole_rule_with_its_cycles_broken(tmp_path: Path) -> None:
    # 1 <- 2 <- 3; 4 -> 5 -> 6 -> 4 is a cycle with 7 below it; 8 names itself, 9 a parent
    # that is not chosen.
    parents = {1: None, 2: 1, 3: 2, 4: 6, 5: 4, 6: 5, 7: 5, 8: 8, 9: 99}
    records = [IndexedRecord(n, "f", n, "d", "item", 1, p) for n, p in parents.items()]
    links = [RecordLinks(n, 1, p) for n, p in parents.items()]
    with RecordIndex(tmp_path / "index.sqlite") as index:
        index.put(records)
        assert index.cycle_links() == {4: 6, 5: 4, 6: 5}
        cycles = ancestor_cycles(index.cycle_links())
        assert cycles == [[4, 6, 5]]
        by_type = includes_by_type({cycle[0] for cycle in cycles})
        ranges = list(record_ranges(index, by_type, size=4))
    streamed = set().union(*(r.desired[Rel.INCLUDES] for r in ranges))
    assert streamed == includes_edges(links, set(parents))
    assert ("6-0", "4-0") not in streamed and ("4-0", "5-0") in streamed
