"""Faults between the work folder and the graph, against the real Neo4j: ancestor cycles seen
by the checks as the writers saw them, corrupt derived files, two work folders on one server."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from nara_kg.build import sync_state
from nara_kg.build.edge_sync import sync_edges
from nara_kg.build.nodes import sync_nodes
from nara_kg.build.relationships import sync_includes
from nara_kg.graph.nodes import CHUNK_COUNT
from nara_kg.graph.relationships import edge_concern, existing_edges
from nara_kg.ingest.layout import WorkLayout
from nara_kg.model.schema import Rel
from quality import graph_checks
from tests.graph_helpers import wipe
from tests.reliability.test_input_faults import record, write
from tests.stage_helpers import chunked_layout

pytestmark = pytest.mark.integration


def _ancestor(na_id: int, distance: int) -> dict[str, Any]:
    return {"naId": na_id, "distance": distance, "levelOfDescription": "series"}


def test_ancestor_cycles_are_broken_and_the_includes_check_knows_the_broken_links(
    tmp_path: Path, neo4j_driver: Any
) -> None:
    data = tmp_path / "data"
    write(
        data / "cycles.jsonl",
        [
            # A <-> B
            record(1, ancestors=[_ancestor(2, 1)]),
            record(2, ancestors=[_ancestor(1, 1)]),
            # a 3-cycle, with a record hanging below it
            record(5, ancestors=[_ancestor(7, 1)]),
            record(6, ancestors=[_ancestor(5, 1)]),
            record(7, ancestors=[_ancestor(6, 1)]),
            record(9, ancestors=[_ancestor(5, 1)]),
            # a cycle inside one ancestors list: 20's parent is 21, whose parent it names is 20
            record(20, ancestors=[_ancestor(21, 1), _ancestor(20, 2)]),
            # and a plain hierarchy
            record(30, ancestors=[_ancestor(31, 1), _ancestor(32, 2)]),
        ],
    )
    layout = chunked_layout(data, tmp_path / "work")
    wipe(neo4j_driver)
    sync_nodes(neo4j_driver, "neo4j", layout)
    _, cycles = sync_includes(neo4j_driver, "neo4j", layout)
    assert cycles == [[1, 2], [5, 7, 6], [20, 21]]

    broken = graph_checks.broken_ancestor_links(layout)
    assert broken == {1: 2, 5: 7, 20: 21}
    outcome = graph_checks.check_includes(neo4j_driver, "neo4j", broken)
    assert outcome.passed, outcome.sample
    assert outcome.measures["ancestor_links_broken"] == 3
    # The probe still finds a link that is missing for any other reason.
    neo4j_driver.execute_query(
        "MATCH (:Chunk {chunkId: '31-0'})-[r:Includes]->(:Chunk {chunkId: '30-0'}) DELETE r"
    )
    missing = graph_checks.check_includes(neo4j_driver, "neo4j", broken)
    assert not missing.passed
    assert [row["chunkId"] for row in missing.sample] == ["30-0"]


def test_a_damaged_graph_state_snapshot_falls_back_to_reading_the_graph(
    tmp_path: Path, neo4j_driver: Any
) -> None:
    wipe(neo4j_driver)
    neo4j_driver.execute_query(
        "UNWIND $ids AS id CREATE (:Chunk {chunkId: id})", ids=["d-a-0", "d-b-0", "d-c-0"]
    )
    layout = WorkLayout(tmp_path / "work")
    desired = {("d-a-0", "d-b-0"), ("d-b-0", "d-c-0")}
    assert sync_edges(neo4j_driver, "neo4j", Rel.NEXT, desired, layout).added == 2
    snapshot = layout.sync_snapshot(edge_concern(Rel.NEXT))
    for damage in (os.urandom(2_048), snapshot.read_bytes()[:-40]):
        snapshot.write_bytes(damage)
        again = sync_edges(neo4j_driver, "neo4j", Rel.NEXT, desired, layout)
        assert again.existing_from == "graph" and (again.added, again.removed) == (0, 0)
    assert existing_edges(neo4j_driver, "neo4j", Rel.NEXT) == desired
    assert sync_edges(neo4j_driver, "neo4j", Rel.NEXT, desired, layout).existing_from == (
        "snapshot"
    )


def _chunks(driver: Any, ids: list[str]) -> None:
    driver.execute_query("UNWIND $ids AS id MERGE (:Chunk {chunkId: id})", ids=ids)


def test_two_work_folders_on_one_server_never_trust_each_others_snapshots(
    tmp_path: Path, neo4j_driver: Any
) -> None:
    """Two exports' builds against one Neo4j, interleaved as two builds at once interleave
    them: the second deletes the first's nodes after the first wrote them, before the first
    writes its Next. The first's next build must still restore every Next."""
    wipe(neo4j_driver)
    first, second = WorkLayout(tmp_path / "first"), WorkLayout(tmp_path / "second")
    nodes = ["t-a-0", "t-a-1", "t-a-2"]
    desired = {("t-a-0", "t-a-1"), ("t-a-1", "t-a-2")}
    _chunks(neo4j_driver, nodes)
    # The second export's node writer removes the first's nodes (its graph has other records).
    theirs = sync_state.SyncedSet(neo4j_driver, "neo4j", second, "chunk-nodes", CHUNK_COUNT)
    theirs.begin()
    neo4j_driver.execute_query("MATCH (c:Chunk) DETACH DELETE c")
    theirs.commit(pa.table({"chunkId": pa.array([], pa.string())}))
    # The first export's Next writer (its full build) finds no nodes to link.
    full = sync_edges(neo4j_driver, "neo4j", Rel.NEXT, desired, first, trust_snapshot=False)
    assert full.added == 2
    assert existing_edges(neo4j_driver, "neo4j", Rel.NEXT) == set()
    # The first export's next build writes its nodes again, then its Next.
    ours = sync_state.SyncedSet(neo4j_driver, "neo4j", first, "chunk-nodes", CHUNK_COUNT)
    ours.begin()
    _chunks(neo4j_driver, nodes)
    ours.commit(pa.table({"chunkId": nodes}))
    again = sync_edges(neo4j_driver, "neo4j", Rel.NEXT, desired, first)
    assert again.existing_from == "graph"
    assert existing_edges(neo4j_driver, "neo4j", Rel.NEXT) == desired

    # Built one after the other: a concern written by the other folder means nothing of this
    # folder's is trusted, until this folder has written every concern again.
    assert sync_edges(neo4j_driver, "neo4j", Rel.NEXT, desired, first).existing_from == "snapshot"
    sync_edges(neo4j_driver, "neo4j", Rel.INCLUDES, set(), second)
    assert sync_edges(neo4j_driver, "neo4j", Rel.NEXT, desired, first).existing_from == "graph"
    assert sync_state.written_by_another(neo4j_driver, "neo4j", first)
    sync_edges(neo4j_driver, "neo4j", Rel.INCLUDES, set(), first)
    assert not sync_state.written_by_another(neo4j_driver, "neo4j", first)
    assert sync_edges(neo4j_driver, "neo4j", Rel.NEXT, desired, first).existing_from == "snapshot"
