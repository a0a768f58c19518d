"""graph_communities after a small change reads only the records the graph writers touched
(:mod:`nara_kg.build.projection_changes`), and decides, queues and digests what a stream of the
whole projection would have; a run killed between the writers and graph_communities loses none
of the writers' notes."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from nara_kg.build import communities as build_communities
from nara_kg.build.communities import can_skip_leiden
from nara_kg.build.projection_changes import ProjectionChanges
from nara_kg.demo import generate_demo_data
from nara_kg.generation.report_scope import ReportScope
from nara_kg.graph.communities import (
    COMMUNITY_RELATIONSHIPS,
    community_state_digest,
    read_projection_digests,
)
from nara_kg.graph.fingerprint import graph_fingerprint
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.common import read_json
from tests.graph_helpers import metadata_of, scalar
from tests.integration.test_change_sets import edit_one_title
from tests.integration.test_incremental import change_one_file, shard_with_items

pytestmark = pytest.mark.integration


class Queued:
    """The records each community_reports run found queued (before it drains them)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.runs: list[set[int]] = []
        original = ReportScope.reports_written

        def reports_written(scope: ReportScope, *, up_to: int, **kwargs: Any) -> None:
            self.runs.append({n for batch in scope.pending_batches(up_to) for n in batch})
            original(scope, up_to=up_to, **kwargs)

        monkeypatch.setattr(ReportScope, "reports_written", reports_written)


def whole_stream_queue(driver: Any, scope_copy: Path) -> set[int]:
    """What a stream of the whole projection queues against the digests in `scope_copy`."""
    with ReportScope(scope_copy) as scope:
        already = {n for batch in scope.pending_batches(scope.pending_seq()) for n in batch}
        assert not already
        with scope.transaction():
            comparison = scope.comparison()
            read_projection_digests(driver, "neo4j", comparison.add)
            comparison.finish()
        return {n for batch in scope.pending_batches(scope.pending_seq()) for n in batch}


def neighbourhood(driver: Any, na_ids: set[int]) -> set[int]:
    """The records and those at the other end of their projected relationships or mentions."""
    records, _, _ = driver.execute_query(
        "MATCH (c:Chunk) WHERE c.naId IN $ids MATCH (c)-[r]-(o:Chunk) WHERE type(r) IN $types "
        "RETURN collect(DISTINCT o.naId) AS ids",
        ids=sorted(na_ids),
        types=[*COMMUNITY_RELATIONSHIPS, "MENTIONED_IN"],
    )
    return set(na_ids) | set(records[0]["ids"])


def row_hashes(driver: Any) -> dict[str, tuple[int, str]]:
    records, _, _ = driver.execute_query(
        "MATCH (c:Chunk) RETURN c.chunkId AS id, c.naId AS naId, c.rowHash AS h"
    )
    return {r["id"]: (r["naId"], r["h"]) for r in records}


def rewritten(before: dict[str, tuple[int, str]], after: dict[str, tuple[int, str]]) -> set[int]:
    """Records with a chunk whose row changed, appeared or went."""
    return {
        (before.get(c) or after[c])[0]
        for c in before.keys() | after.keys()
        if before.get(c) != after.get(c)
    }


def build_and_compare(
    graph_builder: Any, driver: Any, data: Path, work: Path, queued: Queued
) -> dict[str, Any]:
    """One incremental build; its graph_communities metadata, checked against what a whole
    stream of the projection decides, digests and queues."""
    layout = WorkLayout(work)
    known = read_json(layout.leiden_state)
    communities_before = community_state_digest(driver, "neo4j")
    scope_copy = work.parent / "scope-before.sqlite"
    shutil.copyfile(layout.report_scope, scope_copy)
    runs_before = len(queued.runs)

    result = graph_builder(data, work)
    found = metadata_of(result, "graph_communities")
    whole = read_projection_digests(driver, "neo4j")
    assert found["whole_stream_because"] == ""
    assert found["projection_digest"] == whole.projection
    state = read_json(layout.leiden_state)
    assert state is not None and state["content"] == whole.content
    assert found["leiden_skipped"] == can_skip_leiden(known, whole.projection, communities_before)
    assert len(queued.runs) == runs_before + 1
    assert queued.runs[-1] == whole_stream_queue(driver, scope_copy)
    return found


def test_a_small_change_streams_only_the_touched_records_and_equals_a_whole_stream(
    graph_builder: Any, neo4j_driver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queued = Queued(monkeypatch)
    data, work = tmp_path / "data", tmp_path / "work"
    generate_demo_data(data, records=120, seed=21)
    full = metadata_of(graph_builder(data, work, wipe_first=True), "graph_communities")
    records = scalar(neo4j_driver, "MATCH (c:Chunk {chunkSeqId: 0}) RETURN count(c)")
    assert full["whole_stream_because"] and full["records_streamed"] == records

    again = metadata_of(graph_builder(data, work), "graph_communities")
    assert again["whole_stream_because"] == "" and again["records_streamed"] == 0
    assert again["leiden_skipped"] is True

    # One retitled record: only it and records its writers touched with it (the ends of the
    # mentions its new title changed) are read.
    edited = edit_one_title(shard_with_items(data))
    before, hashes = neighbourhood(neo4j_driver, {edited}), row_hashes(neo4j_driver)
    found = build_and_compare(graph_builder, neo4j_driver, data, work, queued)
    reach = before | neighbourhood(neo4j_driver, {edited})
    reach |= rewritten(hashes, row_hashes(neo4j_driver))
    assert 1 <= found["records_streamed"] <= len(reach) < records
    assert edited in queued.runs[-1]

    # An edit, a deleted and an added record in one file: the projection changes.
    shard = shard_with_items(data)
    changed = change_one_file(shard)
    before = neighbourhood(neo4j_driver, {changed["edited"], changed["deleted"]})
    hashes = row_hashes(neo4j_driver)
    found = build_and_compare(graph_builder, neo4j_driver, data, work, queued)
    reach = before | neighbourhood(neo4j_driver, {changed["edited"], changed["added"]})
    # The records after a deleted line in its file are written again (their rows changed).
    reach |= rewritten(hashes, row_hashes(neo4j_driver))
    assert found["leiden_skipped"] is False
    assert 3 <= found["records_streamed"] <= len(reach) < records
    assert {changed["deleted"], changed["added"]} <= queued.runs[-1]

    incremental = graph_fingerprint(neo4j_driver, "neo4j")
    graph_builder(data, tmp_path / "work-scratch", wipe_first=True)
    assert graph_fingerprint(neo4j_driver, "neo4j") == incremental


def test_a_run_killed_before_graph_communities_loses_no_touched_record(
    graph_builder: Any, neo4j_driver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, work = tmp_path / "data", tmp_path / "work"
    generate_demo_data(data, records=120, seed=21)
    graph_builder(data, work, wipe_first=True)
    edited = edit_one_title(shard_with_items(data))

    def killed(*_: Any, **__: Any) -> Any:
        raise RuntimeError("killed before graph_communities streamed")

    with monkeypatch.context() as patch:
        patch.setattr(build_communities, "detect_communities", killed)
        with pytest.raises(AssertionError):
            graph_builder(data, work)
    with ProjectionChanges(WorkLayout(work).projection_changes) as log:
        noted = {n for batch in log.batches(log.high_water()) for n in batch}
    assert edited in noted

    # The writers find their change set applied and note nothing: the log alone tells.
    queued = Queued(monkeypatch)
    found = build_and_compare(graph_builder, neo4j_driver, data, work, queued)
    assert 1 <= found["records_streamed"] <= len(noted)
    assert edited in queued.runs[-1]
    with ProjectionChanges(WorkLayout(work).projection_changes) as log:
        assert log.count(log.high_water()) == 0
