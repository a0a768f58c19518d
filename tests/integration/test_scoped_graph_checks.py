"""After a one-record edit, the graph checks verify what the change reaches (a bounded number of
records, said in their metadata), still fail when the edited record's graph is broken, and
agree with the whole check on the same graph; the whole graph is checked again after a failure
and on the full rebuild."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from graph_assets import ALL_ASSETS
from graph_assets.partitions import FULL, REBUILD_TAG
from nara_kg.build.nodes import sync_nodes
from nara_kg.build.relationships import sync_includes
from nara_kg.demo import generate_demo_data
from nara_kg.ingest.layout import WorkLayout
from nara_kg.settings import Neo4jSettings
from quality import ALL_CHECKS, graph_checks, names, scoped_checks
from quality.checks import (
    graph_nodes_match_parquet,
    includes_relationships_consistent,
    includes_relationships_no_cycles,
    next_relationships_consistent,
    text_embeddings_complete,
)
from quality.graph_scope import CHANGED, WHOLE
from tests.graph_helpers import materialize, readable, resources_for, scalar, wipe
from tests.integration.test_change_sets import edit_one_title
from tests.integration.test_incremental import shard_with_items
from tests.reliability.test_input_faults import record, write
from tests.stage_helpers import selected_layout

pytestmark = pytest.mark.integration

SCOPED_CHECKS = [
    graph_nodes_match_parquet,
    text_embeddings_complete,
    includes_relationships_consistent,
    includes_relationships_no_cycles,
    next_relationships_consistent,
]
SCOPED_NAMES = {
    names.GRAPH_NODES_MATCH_PARQUET,
    names.TEXT_EMBEDDINGS_COMPLETE,
    names.INCLUDES_CONSISTENT,
    names.ANCESTOR_CYCLES,
    names.NEXT_CONSISTENT,
}
#: The checks whose changed records are the edited record alone.
ONE_RECORD = {
    names.GRAPH_NODES_MATCH_PARQUET,
    names.TEXT_EMBEDDINGS_COMPLETE,
    names.NEXT_CONSISTENT,
}


def build_with_checks(settings: Neo4jSettings, data: Path, work: Path, **kwargs: Any) -> Any:
    result = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=resources_for(settings, data, work),
        raise_on_error=False,
        **kwargs,
    )
    assert result.success, [e.message for e in result.all_events if e.is_failure]
    return result


def run_checks(
    settings: Neo4jSettings, data: Path, work: Path, checks: Sequence[Any], **kwargs: Any
) -> dict[str, Any]:
    """The given checks alone (no asset is materialized): check name -> evaluation."""
    result = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=resources_for(settings, data, work),
        selection=dg.AssetSelection.checks(*checks),
        raise_on_error=False,
        **kwargs,
    )
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def whole_verdicts(driver: Any, settings: Neo4jSettings, data: Path, work: Path) -> dict[str, bool]:
    """What the whole checks say of the graph as it is now."""
    # Initialized as a run would (EnvVar-bound settings resolved), not used as bound.
    with dg.build_resources(resources_for(settings, data, work)) as resources:
        layout = resources.paths.layout
        embedder = resources.embedding_model.get_embedder()
    database = settings.database
    return {
        names.GRAPH_NODES_MATCH_PARQUET: graph_checks.check_node_counts(
            driver, database, layout
        ).passed,
        names.TEXT_EMBEDDINGS_COMPLETE: graph_checks.check_embeddings(
            driver, database, embedder.dimension, embedder.key
        ).passed,
        names.INCLUDES_CONSISTENT: graph_checks.check_includes(
            driver, database, graph_checks.broken_ancestor_links(layout)
        ).passed,
        names.NEXT_CONSISTENT: graph_checks.check_next(driver, database).passed,
    }


def break_the_graph_of(driver: Any, na_id: int) -> dict[str, Any]:
    """Break the edited record's nodes and relationships, one way per check; what to restore."""
    first = f"{na_id}-0"
    saved: dict[str, Any] = {"first": first}
    saved["vector"] = scalar(
        driver,
        "MATCH (c:Chunk {chunkId: $id}) WITH c, c.textEmbedding AS v "
        "REMOVE c.textEmbedding RETURN v",
        id=first,
    )
    saved["parent"] = scalar(
        driver,
        "MATCH (p:Chunk)-[r:Includes]->(:Chunk {chunkId: $id}) DELETE r RETURN p.chunkId",
        id=first,
    )
    saved["other"] = scalar(
        driver,
        "MATCH (a:Chunk {chunkId: $id}), (b:Chunk {chunkSeqId: 0}) WHERE b.naId <> a.naId "
        "WITH a, b LIMIT 1 CREATE (a)-[:Next]->(b) RETURN b.chunkId",
        id=first,
    )
    scalar(
        driver,
        "CREATE (c:Chunk:item {chunkId: $stray, naId: $naId, nodeType: 'item', "
        "chunkSeqId: 0}) RETURN c.chunkId",
        stray=f"{na_id}-stray",
        naId=na_id,
    )
    return saved


def restore(driver: Any, na_id: int, saved: dict[str, Any]) -> None:
    scalar(driver, "MATCH (c:Chunk {chunkId: $id}) DETACH DELETE c RETURN 1", id=f"{na_id}-stray")
    scalar(
        driver,
        "MATCH (:Chunk {chunkId: $a})-[r:Next]->(:Chunk {chunkId: $b}) DELETE r RETURN 1",
        a=saved["first"],
        b=saved["other"],
    )
    scalar(
        driver,
        "MATCH (p:Chunk {chunkId: $p}), (c:Chunk {chunkId: $c}) MERGE (p)-[:Includes]->(c) "
        "RETURN 1",
        p=saved["parent"],
        c=saved["first"],
    )
    scalar(
        driver,
        "MATCH (c:Chunk {chunkId: $id}) CALL db.create.setNodeVectorProperty(c, "
        "'textEmbedding', $v) RETURN 1",
        id=saved["first"],
        v=saved["vector"],
    )


def test_after_one_edit_the_checks_verify_the_change_and_catch_a_break_in_it(
    neo4j_driver: Any, neo4j_settings: Neo4jSettings, tmp_path: Path
) -> None:
    data, work = tmp_path / "data", tmp_path / "work"
    generate_demo_data(data, records=120, seed=23)
    wipe(neo4j_driver)
    first = build_with_checks(neo4j_settings, data, work)
    for evaluation in first.get_asset_check_evaluations():
        if evaluation.check_name in SCOPED_NAMES:
            assert readable(evaluation.metadata)["scope"] == WHOLE
    records = scalar(neo4j_driver, "MATCH (c:Chunk {chunkSeqId: 0}) RETURN count(c)")

    # The edit reaches the graph through the writers alone; the checks run after, on their own.
    shard = shard_with_items(data)
    edited = edit_one_title(shard)
    materialize(neo4j_settings, data, work)
    assert (
        scalar(
            neo4j_driver,
            "MATCH (p:Chunk)-[:Includes]->(:Chunk {naId: $id}) RETURN count(p)",
            id=edited,
        )
        == 1
    )
    saved = break_the_graph_of(neo4j_driver, edited)
    try:
        broken = run_checks(neo4j_settings, data, work, SCOPED_CHECKS)
        whole = whole_verdicts(neo4j_driver, neo4j_settings, data, work)
    finally:
        restore(neo4j_driver, edited, saved)
    for name, verdict in whole.items():
        metadata = readable(broken[name].metadata)
        assert metadata["scope"] == CHANGED, name
        assert not broken[name].passed, name
        assert verdict is False, name
    scoped = {name: readable(e.metadata) for name, e in broken.items()}
    for name in ONE_RECORD:
        assert scoped[name]["records_checked"] == 1, name
    children = scalar(
        neo4j_driver,
        "MATCH (:Chunk {naId: $id, chunkSeqId: 0})-[:Includes]->(c) RETURN count(c)",
        id=edited,
    )
    assert scoped[names.INCLUDES_CONSISTENT]["records_checked"] == 1 + children
    assert scoped[names.ANCESTOR_CYCLES]["records_checked"] <= 1 + children
    assert 1 + children < records
    assert scoped[names.TEXT_EMBEDDINGS_COMPLETE]["missing_embedding"] == 1
    assert scoped[names.INCLUDES_CONSISTENT]["missing_includes"] == 1
    assert scoped[names.NEXT_CONSISTENT]["dangling_next"] == 1
    assert scoped[names.GRAPH_NODES_MATCH_PARQUET]["changed_records_match"] == 1
    assert f"{edited}-stray" in scoped[names.GRAPH_NODES_MATCH_PARQUET]["offending_sample"]

    # A failed check verifies the whole graph next time (here: restored, so it passes).
    again = run_checks(neo4j_settings, data, work, SCOPED_CHECKS)
    for name in whole:
        assert readable(again[name].metadata)["scope"] == WHOLE, name
        assert again[name].passed, name

    # The next edit, built with its checks: scoped, bounded, passing, as the whole checks say.
    lines = shard.read_text().replace("Hollin Ford", "Hollin Bridge")
    shard.write_text(lines)
    result = build_with_checks(neo4j_settings, data, work)
    found = {e.check_name: e for e in result.get_asset_check_evaluations()}
    for name, verdict in whole_verdicts(neo4j_driver, neo4j_settings, data, work).items():
        metadata = readable(found[name].metadata)
        assert metadata["scope"] == CHANGED, name
        assert found[name].passed is verdict is True, name
        assert metadata["records_checked"] <= 1 + children, name
    assert "records the change reaches" in str(found[names.NEXT_CONSISTENT].description)

    # The full rebuild checks the whole graph.
    full = run_checks(neo4j_settings, data, work, SCOPED_CHECKS, tags={REBUILD_TAG: FULL})
    for name in whole:
        assert readable(full[name].metadata)["scope"] == WHOLE, name
        assert readable(full[name].metadata)["scope_reason"] == "full rebuild", name


def _ancestor(na_id: int, distance: int) -> dict[str, Any]:
    return {"naId": na_id, "distance": distance, "levelOfDescription": "series"}


def test_a_cycle_an_edit_makes_is_found_by_the_scoped_checks(
    neo4j_driver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hierarchy 1 <- 2 <- 3, and 10 <- 11 in another file; then 1 names 3 as its parent."""
    data, work = tmp_path / "data", tmp_path / "work"
    other = [record(10), record(11, ancestors=[_ancestor(10, 1)])]
    write(data / "b.jsonl", other)

    def select(first_parent: int | None) -> Any:
        ancestors = [] if first_parent is None else [_ancestor(first_parent, 1)]
        write(
            data / "a.jsonl",
            [
                record(1, ancestors=ancestors),
                record(2, ancestors=[_ancestor(1, 1)]),
                record(3, ancestors=[_ancestor(2, 1)]),
            ],
        )
        layout = selected_layout(data, work)
        sync_nodes(neo4j_driver, "neo4j", layout)
        sync_includes(neo4j_driver, "neo4j", layout)
        return layout

    wipe(neo4j_driver)
    layout = select(None)
    assert scoped_checks.ancestor_cycles(layout, full=False)[0] == []
    assert scoped_checks.includes(neo4j_driver, "neo4j", layout, full=False).passed

    layout = select(3)
    cycles, scope, checked = scoped_checks.ancestor_cycles(layout, full=False)
    assert scope.mode == CHANGED and cycles == [[1, 3, 2]], (scope.reason, cycles)
    assert checked == 3  # the cycle's records, not file b's
    scoped = scoped_checks.includes(neo4j_driver, "neo4j", layout, full=False)
    assert scoped.measures["scope"] == CHANGED and scoped.passed, scoped.sample
    assert scoped.measures["ancestor_links_broken"] == 1
    broken = graph_checks.broken_ancestor_links(layout)
    assert broken == {1: 3}
    assert graph_checks.check_includes(neo4j_driver, "neo4j", broken).passed

    # A link the cycle keeps goes missing: both the scoped and the whole check find it.
    layout = select(2)  # 1 <-> 2 now: 3 hangs below 2
    neo4j_driver.execute_query(
        "MATCH (:Chunk {chunkId: '2-0'})-[r:Includes]->(:Chunk {chunkId: '3-0'}) DELETE r"
    )
    missing = scoped_checks.includes(neo4j_driver, "neo4j", layout, full=False)
    assert missing.measures["scope"] == CHANGED
    assert not missing.passed and missing.measures["missing_includes"] == 1
    assert not graph_checks.check_includes(
        neo4j_driver, "neo4j", graph_checks.broken_ancestor_links(layout)
    ).passed
    # The cycles check found cycles last time: it walks every record again.
    cycles, scope, _ = scoped_checks.ancestor_cycles(layout, full=False)
    assert scope.mode == WHOLE and cycles == [[1, 2]]

    # Checked whole, the cycles come from the record index, which holds the selection: no
    # record's links are read into memory, and the result is the same.
    def no_whole_read(layout: WorkLayout) -> Any:
        raise AssertionError("the whole check read every record's links")

    monkeypatch.setattr(scoped_checks, "record_links", no_whole_read)
    cycles, scope, checked = scoped_checks.ancestor_cycles(layout, full=True)
    assert scope.mode == WHOLE and cycles == [[1, 2]] and checked == 5
    whole = scoped_checks.includes(neo4j_driver, "neo4j", layout, full=True)
    assert whole.measures["scope"] == WHOLE and whole.measures["records_checked"] == 5
    assert whole.measures["ancestor_links_broken"] == 1
    assert not whole.passed and whole.measures["missing_includes"] == 1
