"""Relationships compared whole a naId range of records at a time, against the real graph:
the graph ends equal to the desired set (a wrong relationship, and those of a record no longer
chosen, are removed), the snapshot holds that set, and a second comparison changes nothing;
authority types, whose ranges are of the citing records, the same, read back with one query a
range for all the types compared and leaving the types not compared alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nara_kg.build import edge_sync
from nara_kg.build.edge_sync import edge_set, sync_by_record_ranges
from nara_kg.build.relationships import (
    authorities_by_type,
    next_by_type,
    record_ranges,
)
from nara_kg.graph.relationships import RangeEnd, existing_edges
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.record_index import IndexedRecord, RecordIndex
from nara_kg.model.schema import Label, Prop, Rel, chunk_id
from tests.graph_helpers import wipe

pytestmark = pytest.mark.integration

#: naId -> chunks of the chosen records; 999's chunks are still in the graph, not chosen.
CHOSEN = {101: 3, 102: 2, 150: 1, 203: 2}
GONE = {999: 2}


def _chunks(driver: Any, records: dict[int, int]) -> None:
    rows = [
        {"id": chunk_id(na_id, seq), "naId": na_id}
        for na_id, count in records.items()
        for seq in range(count)
    ]
    driver.execute_query(
        f"UNWIND $rows AS row CREATE (:{Label.CHUNK} "
        f"{{{Prop.CHUNK_ID}: row.id, {Prop.NA_ID}: row.naId}})",
        rows=rows,
    )


def _relate(driver: Any, rel: Rel, edges: list[tuple[str, str]]) -> None:
    driver.execute_query(
        f"UNWIND $edges AS e MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[0]}}) "
        f"MATCH (b:{Label.CHUNK} {{{Prop.CHUNK_ID}: e[1]}}) CREATE (a)-[:{rel}]->(b)",
        edges=[list(e) for e in edges],
    )


def _graph_and_index(
    driver: Any, tmp_path: Path, references: dict[int, tuple[tuple[str, int], ...]]
) -> WorkLayout:
    """The chunks of CHOSEN and GONE in an emptied graph, and an index of CHOSEN alone."""
    wipe(driver)
    _chunks(driver, {**CHOSEN, **GONE})
    layout = WorkLayout(tmp_path)
    layout.record_index.parent.mkdir(parents=True, exist_ok=True)
    with RecordIndex(layout.record_index) as index:
        index.put(
            [
                IndexedRecord(n, "f", n, "d", "item", count, None, references.get(n, ()))
                for n, count in CHOSEN.items()
            ]
        )
    return layout


def _sync(
    driver: Any, layout: WorkLayout, types: list[Rel], desired: Any, end: RangeEnd
) -> list[Any]:
    with RecordIndex(layout.record_index) as index:
        return sync_by_record_ranges(
            driver,
            "neo4j",
            {rel: "g" for rel in types},
            record_ranges(index, desired, size=2),
            layout,
            end=end,
        )


def test_ranges_make_the_graph_equal_the_desired_set(neo4j_driver: Any, tmp_path: Path) -> None:
    layout = _graph_and_index(neo4j_driver, tmp_path, {})
    # One right, one wrong (it skips a chunk), and the relationship of a record not chosen.
    _relate(neo4j_driver, Rel.NEXT, [("101-0", "101-1"), ("101-0", "101-2"), ("999-0", "999-1")])
    desired = {("101-0", "101-1"), ("101-1", "101-2"), ("102-0", "102-1"), ("203-0", "203-1")}

    def sync() -> Any:
        (result,) = _sync(neo4j_driver, layout, [Rel.NEXT], next_by_type, "source")
        return result

    first = sync()
    assert existing_edges(neo4j_driver, "neo4j", Rel.NEXT) == desired
    assert (first.desired, first.added, first.removed, first.records_touched) == (4, 3, 2, 4)
    snapshot = edge_set(neo4j_driver, "neo4j", layout, Rel.NEXT).trusted()
    assert snapshot is not None
    ends = (snapshot[column].to_pylist() for column in ("source", "target"))
    assert set(zip(*ends, strict=True)) == desired

    again = sync()
    assert (again.added, again.removed) == (0, 0)
    assert existing_edges(neo4j_driver, "neo4j", Rel.NEXT) == desired


def test_authority_ranges_are_of_the_citing_records(
    neo4j_driver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 102 and 203 cite 101 as their creator; 150 cites it as a subject. In the graph: 102's
    # right, 150's missing, a creator relationship 203 no longer holds (into 150), and one
    # into 999, which is not chosen.
    references = {102: (("creator", 101),), 203: (("creator", 101),), 150: (("subject", 101),)}
    layout = _graph_and_index(neo4j_driver, tmp_path, references)
    _relate(neo4j_driver, Rel.CREATOR, [("101-0", "102-0"), ("101-0", "150-0"), ("101-0", "999-0")])
    # A type not compared, ending at a record of a range: not read, not removed.
    _relate(neo4j_driver, Rel.NEXT, [("101-0", "102-0")])
    reads: list[tuple[int | None, int | None]] = []
    read_range = edge_sync.edge_cypher.edges_at_record_range

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append((args[3], args[4]))
        return read_range(*args, **kwargs)

    monkeypatch.setattr(edge_sync.edge_cypher, "edges_at_record_range", counted)

    def sync() -> list[Any]:
        return _sync(
            neo4j_driver, layout, [Rel.CREATOR, Rel.SUBJECT], authorities_by_type, "target"
        )

    creator, subject = sync()
    assert existing_edges(neo4j_driver, "neo4j", Rel.CREATOR) == {
        ("101-0", "102-0"),
        ("101-0", "203-0"),
    }
    assert existing_edges(neo4j_driver, "neo4j", Rel.SUBJECT) == {("101-0", "150-0")}
    assert (creator.added, creator.removed, subject.added, subject.removed) == (1, 2, 1, 0)
    assert existing_edges(neo4j_driver, "neo4j", Rel.NEXT) == {("101-0", "102-0")}
    # Four records by twos: two ranges, each read once for both types.
    assert reads == [(None, 102), (102, None)]
    assert all((r.added, r.removed) == (0, 0) for r in sync())
