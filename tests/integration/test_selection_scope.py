"""A one-file edit: record_selection reads that file alone, the checks on the selection validate
that file's chosen rows alone and report what a validation of every row reports, and the graph
equals a build from scratch; a naId held by two files, edited in one, is chosen as the full
reduce chooses it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from graph_assets import ALL_ASSETS
from nara_kg.demo import generate_demo_data
from nara_kg.graph.fingerprint import graph_fingerprint
from nara_kg.ingest.inputs import file_id_of
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.record_selection import chosen_rows_by_file
from nara_kg.ingest.stages.selection_store import SelectionStore
from nara_kg.settings import Neo4jSettings
from quality import ALL_CHECKS, frames
from quality.checks import ROWS_FROM_MEMORY, ROWS_VALIDATED
from quality.names import (
    CHUNKS_INTEGRITY,
    PARSED_RECORDS_BODY_CUT,
    PARSED_RECORDS_DATES,
    PARSED_RECORDS_INTEGRITY,
)
from tests.graph_helpers import metadata_of, readable, resources_for, wipe
from tests.integration.test_change_sets import edit_one_title

pytestmark = pytest.mark.integration

REMEMBERING = (
    PARSED_RECORDS_INTEGRITY,
    PARSED_RECORDS_DATES,
    CHUNKS_INTEGRITY,
    PARSED_RECORDS_BODY_CUT,
)


def build(settings: Neo4jSettings, data: Path, work: Path) -> dg.ExecuteInProcessResult:
    result = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=resources_for(settings, data, work),
        raise_on_error=False,
    )
    assert result.success, [e.message for e in result.all_events if e.is_failure]
    return result


def shard_with_items(data: Path, skip: tuple[Path, ...]) -> Path:
    for path in sorted(data.rglob("*.jsonl")):
        if path not in skip and '"levelOfDescription": "item"' in path.read_text():
            return path
    raise AssertionError("no other shard with items")


def checks(result: dg.ExecuteInProcessResult) -> dict[str, dict[str, Any]]:
    return {
        e.check_name: {"passed": e.passed, **readable(e.metadata)}
        for e in result.get_asset_check_evaluations()
        if e.check_name in REMEMBERING
    }


def figures(found: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        name: {k: v for k, v in m.items() if k not in (ROWS_VALIDATED, ROWS_FROM_MEMORY)}
        for name, m in found.items()
    }


def test_one_edited_file_is_read_and_validated_alone_and_the_graph_equals_a_full_build(
    neo4j_driver: Any, neo4j_settings: Neo4jSettings, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=160, seed=21)
    third = shard_with_items(data, skip=())
    shards = [
        p
        for p in sorted(data.rglob("*.jsonl"))
        if '"levelOfDescription"' in p.read_text() and p != third
    ]
    first, second = shards[0], shards[-1]
    # One record in two files: the copies tie, the first file's wins.
    copied = first.read_text().splitlines()[0]
    na_id = int(json.loads(copied)["record"]["naId"])
    second.write_text(second.read_text() + copied + "\n")

    wipe(neo4j_driver)
    full = build(neo4j_settings, data, tmp_path / "work")
    assert all(m[ROWS_FROM_MEMORY] == 0 for m in checks(full).values())

    # One title edited in a third file: that file alone is read and validated.
    layout = WorkLayout(tmp_path / "work")
    edit_one_title(third)
    edited = build(neo4j_settings, data, tmp_path / "work")
    selection = metadata_of(edited, "record_selection")
    assert selection["selection_mode"] == "changes"
    assert selection["files_read"] == 1 and selection["files_not_read"] > 0
    assert selection["records_changed"] == 1
    rows = {f: len(r) for f, r in chosen_rows_by_file(layout)}
    third_id = file_id_of(third.relative_to(data).as_posix())
    found = checks(edited)
    for name in (PARSED_RECORDS_INTEGRITY, PARSED_RECORDS_BODY_CUT):
        assert found[name][ROWS_VALIDATED] == rows[third_id], name
        assert found[name][ROWS_FROM_MEMORY] == sum(rows.values()) - rows[third_id], name
    chunks = found[CHUNKS_INTEGRITY]
    own = frames.chunk_frames_of(
        layout, [(third_id, dict(chosen_rows_by_file(layout))[third_id].tolist())]
    )
    assert chunks[ROWS_VALIDATED] == sum(len(frame) for frame in own)
    assert (
        chunks[ROWS_FROM_MEMORY]
        == (chunks["rows_chunks"] + chunks["rows_chunk_sequences"] - chunks[ROWS_VALIDATED])
        > 0
    )

    # The later copy made more complete: it is chosen now. The files whose chosen rows changed
    # (the edited one, and the one that lost the naId if it held it) are validated again.
    before = {f: set(r) for f, r in chosen_rows_by_file(layout)}
    lines = second.read_text().splitlines()
    record = json.loads(lines[-1])
    record["record"]["scopeAndContentNote"] = "Tolls, fares and the ferryman's wages."
    record["record"]["generalNotes"] = ["Kept by the parish clerk."]
    lines[-1] = json.dumps(record)
    second.write_text("\n".join(lines) + "\n")
    edited = build(neo4j_settings, data, tmp_path / "work")
    assert metadata_of(edited, "record_selection")["files_read"] == 1
    second_id = file_id_of(second.relative_to(data).as_posix())
    with SelectionStore(layout.selection_state) as store:
        assert store.chosen_of([na_id])[na_id][0] == second_id
    after = {f: set(r) for f, r in chosen_rows_by_file(layout)}
    moved = {f for f in after if after[f] != before.get(f)} | {second_id}
    found = checks(edited)
    assert found[PARSED_RECORDS_INTEGRITY][ROWS_VALIDATED] == sum(len(after[f]) for f in moved)
    assert found[PARSED_RECORDS_INTEGRITY][ROWS_FROM_MEMORY] > 0

    incremental = graph_fingerprint(neo4j_driver, neo4j_settings.database)
    chosen_in = neo4j_driver.execute_query(
        "MATCH (c:Chunk {naId: $id, chunkSeqId: 0}) RETURN c.file_name AS f", id=na_id
    ).records
    wipe(neo4j_driver)
    scratch = build(neo4j_settings, data, tmp_path / "work-scratch")
    assert graph_fingerprint(neo4j_driver, neo4j_settings.database) == incremental
    assert figures(checks(edited)) == figures(checks(scratch))
    assert metadata_of(scratch, "record_selection")["selection_mode"] == "whole"
    assert [r["f"] for r in chosen_in] == [
        r["f"]
        for r in neo4j_driver.execute_query(
            "MATCH (c:Chunk {naId: $id, chunkSeqId: 0}) RETURN c.file_name AS f", id=na_id
        ).records
    ]
