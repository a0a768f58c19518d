"""Whole builds (every asset, in process) against the real Neo4j, past the first round's
guarantees: an export with ancestor cycles builds through its checks to communities; damaged
derived files and a second export built from another work folder against the same server
leave the next build's graph equal to a clean build's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from nara_kg.demo import generate_demo_data
from nara_kg.graph.fingerprint import graph_fingerprint
from nara_kg.graph.relationships import edge_concern
from nara_kg.ingest.layout import WorkLayout
from nara_kg.model.schema import Rel
from quality import graph_checks
from tests.graph_helpers import scalar
from tests.reliability.test_input_faults import record, write

pytestmark = pytest.mark.integration


def _ancestor(na_id: int) -> list[dict[str, Any]]:
    return [{"naId": na_id, "distance": 1, "levelOfDescription": "series"}]


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("build-faults") / "data"
    generate_demo_data(data, records=40, seed=21)
    write(
        data / "descriptions" / "cycles" / "cycles.jsonl",
        [
            record(9_900_001, ancestors=_ancestor(9_900_002)),
            record(9_900_002, ancestors=_ancestor(9_900_001)),
            record(9_900_005, ancestors=_ancestor(9_900_007)),
            record(9_900_006, ancestors=_ancestor(9_900_005)),
            record(9_900_007, ancestors=_ancestor(9_900_006)),
        ],
    )
    return data


def test_cycles_damaged_work_files_and_a_second_export_on_the_same_server(
    export: Path, tmp_path: Path, neo4j_driver: Any, graph_builder: Any
) -> None:
    work = tmp_path / "work"
    # The blocking Includes check, as the build runs it, passes on the built graph although
    # the export has cycles; the build goes on to communities and their reports.
    graph_builder(export, work, wipe_first=True)
    layout = WorkLayout(work)
    broken = graph_checks.broken_ancestor_links(layout)
    assert broken == {9_900_001: 9_900_002, 9_900_005: 9_900_007}
    assert graph_checks.check_includes(neo4j_driver, "neo4j", broken).passed
    clean = graph_fingerprint(neo4j_driver, "neo4j")
    assert scalar(neo4j_driver, "MATCH (c:Community) RETURN count(c)") > 0

    # Damaged derived files: a truncated parsed part, a vectors part of random bytes, a
    # graph-state snapshot of random bytes.
    parsed = sorted(layout.parsed_dir.glob("*.records.parquet"))
    parsed[0].write_bytes(parsed[0].read_bytes()[: parsed[0].stat().st_size // 2])
    vectors = sorted(layout.vectors_dir.glob("*.vectors.parquet"))
    vectors[-1].write_bytes(os.urandom(4_096))
    layout.sync_snapshot(edge_concern(Rel.NEXT)).write_bytes(os.urandom(2_048))
    graph_builder(export, work)
    assert graph_fingerprint(neo4j_driver, "neo4j") == clean

    # Another export, its own work folder, the same server; then the first export again.
    other = tmp_path / "other"
    generate_demo_data(other, records=40, seed=22)
    graph_builder(other, tmp_path / "other-work")
    assert graph_fingerprint(neo4j_driver, "neo4j") != clean
    graph_builder(export, work)
    assert graph_fingerprint(neo4j_driver, "neo4j") == clean
