"""Faults between the work folder and the graph, against the real Neo4j: ancestor cycles seen
by the checks as the writers saw them, corrupt derived files, two work folders on one server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nara_kg.build.nodes import sync_nodes
from nara_kg.build.relationships import sync_includes
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
