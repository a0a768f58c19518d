"""The data-quality checks run with the assets against the real Neo4j, on generated records plus a
file of bad lines: they pass on a good build, the reject-share check blocks the graph when the
input is too bad, and the graph checks notice a deliberately broken graph."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from graph_assets import ALL_ASSETS
from nara_kg.demo import generate_demo_data
from nara_kg.settings import Neo4jSettings
from quality import ALL_CHECKS, community_report_check, names
from quality.checks import (
    graph_nodes_match_parquet,
    includes_relationships_consistent,
    next_relationships_consistent,
    parsed_records_reject_share,
    text_embeddings_complete,
)
from quality.config import RejectShareConfig
from quality.names import ENTITY_MENTIONS_LABELS, RETRIEVAL_THRESHOLDS_CHECK
from tests.graph_helpers import readable, resources_for, wipe

pytestmark = pytest.mark.integration

#: 3 bad lines next to ~80 good ones: about 3.5%, so over the default 1% and under this.
TEST_THRESHOLD = 0.05
TEST_SHARE_ENV = "5%"
BAD_LINES = [
    '{"record": {"naId": 1, "title": "cut off',
    json.dumps({"record": {"levelOfDescription": "item", "title": "no naId"}}),
    json.dumps({"record": {"naId": 990000001, "levelOfDescription": "widget"}}),
]
GE_CHECKS = {names.PARSED_RECORDS_INTEGRITY, names.PARSED_RECORDS_DATES, names.CHUNKS_INTEGRITY}
GRAPH_CHECK_NAMES = {
    names.GRAPH_NODES_MATCH_PARQUET,
    names.TEXT_EMBEDDINGS_COMPLETE,
    names.VECTOR_INDEX_ONLINE,
    names.INCLUDES_CONSISTENT,
    names.NEXT_CONSISTENT,
}
#: What the blocking checks on record_selection keep from running.
DOWNSTREAM_OF_SELECTION = {
    "graph_nodes",
    "text_embeddings",
    "vector_index",
    "next_relationships",
    "includes_relationships",
    "authority_relationships",
}


def resources(settings: Neo4jSettings, data_dir: Path, work_dir: Path) -> dict[str, Any]:
    return resources_for(settings, data_dir, work_dir)


def run_all(
    settings: Neo4jSettings,
    data_dir: Path,
    work_dir: Path,
    *,
    max_share: str | None,
    selection: Any = None,
    run_config: Any = None,
) -> dg.ExecuteInProcessResult:
    """The graph assets and every check; `max_share` is NARA_KG_MAX_REJECT_SHARE for the run
    (None: unset, the default 1%)."""
    with pytest.MonkeyPatch.context() as env:
        if max_share is None:
            env.delenv(names.MAX_REJECT_SHARE_ENV, raising=False)
        else:
            env.setenv(names.MAX_REJECT_SHARE_ENV, max_share)
        return dg.materialize(
            [*ALL_ASSETS, *ALL_CHECKS],
            resources=resources(settings, data_dir, work_dir),
            selection=selection,
            run_config=run_config,
            raise_on_error=False,
        )


def evaluations(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def materialized(result: dg.ExecuteInProcessResult) -> set[str]:
    return {
        e.step_materialization_data.materialization.asset_key.to_user_string()
        for e in result.get_asset_materialization_events()
    }


def plain(evaluation: Any) -> dict[str, Any]:
    return readable(evaluation.metadata)


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("quality") / "data"
    generate_demo_data(data, records=80, seed=11)
    # Inside the export layout: only descriptions/ and authority-records/ are read.
    bad = data / "descriptions" / "record-groups" / "rg_bad" / "bad-lines.jsonl"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text("\n".join(BAD_LINES) + "\n", encoding="utf-8")
    return data


@pytest.fixture(scope="module")
def good_build(
    export: Path,
    neo4j_driver: Any,
    neo4j_settings: Neo4jSettings,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    wipe(neo4j_driver)
    work = tmp_path_factory.mktemp("quality-work")
    result = run_all(neo4j_settings, export, work, max_share=TEST_SHARE_ENV)
    failures = [event.message for event in result.all_events if event.is_failure]
    assert result.success, failures
    return {"result": result, "work": work}


# --------------------------------------------------------------------------- (a) and (c)
def test_every_check_passes_on_a_good_build(good_build: dict[str, Any]) -> None:
    result = good_build["result"]
    found = evaluations(result)
    # The checks the assets yield themselves (retrieval thresholds, the entity linking labels)
    # besides the separate check definitions.
    assert set(found) == {spec.name for check in ALL_CHECKS for spec in check.check_specs} | {
        RETRIEVAL_THRESHOLDS_CHECK,
        ENTITY_MENTIONS_LABELS,
    }
    failed = {name: e.description for name, e in found.items() if not e.passed}
    assert not failed
    assert materialized(result) >= DOWNSTREAM_OF_SELECTION


def test_bad_share_under_the_threshold_passes_with_metadata(good_build: dict[str, Any]) -> None:
    evaluation = evaluations(good_build["result"])[names.PARSED_RECORDS_REJECT_SHARE]
    assert evaluation.passed
    metadata = plain(evaluation)
    assert metadata["lines_rejected"] == len(BAD_LINES)
    assert 0.01 < metadata["reject_share"] <= TEST_THRESHOLD
    assert metadata["max_reject_share"] == TEST_THRESHOLD
    for reason in ("malformed JSON", "missing naId", "unknown type"):
        assert reason in metadata["rejects_by_reason"]
    assert "bad-lines.jsonl" in metadata["reject_sample"]
    assert list(json.loads(metadata["reject_sample"])[0]) == ["file", "line", "reason", "raw"]
    assert metadata["rejects_path"].endswith("rejects.parquet")


def test_great_expectations_checks_report_each_expectation(good_build: dict[str, Any]) -> None:
    found = evaluations(good_build["result"])
    for name in GE_CHECKS:
        metadata = plain(found[name])
        assert metadata["suite"] == name
        assert metadata["expectations_failed"] == 0
        assert metadata["expectations_evaluated"] >= 2
        rows = json.loads(metadata["expectations"])
        assert list(rows[0])[:7] == [
            "frame",
            "expectation",
            "type",
            "column",
            "success",
            "observed",
            "unexpected",
        ]
        assert "FAIL" not in {row["success"] for row in rows}
        assert json.loads(metadata["offending_values"]) == []
    chunks = plain(found[names.CHUNKS_INTEGRITY])
    assert chunks["rows_chunks"] > chunks["rows_chunk_sequences"] > 0
    assert "tokens <= 256" in chunks["expectations"]
    assert plain(found[names.PARSED_RECORDS_INTEGRITY])["rows_chosen_records"] >= 80
    assert plain(found[names.PARSED_RECORDS_DATES])["rows_logical_dates"] > 0


def test_graph_checks_report_their_findings(good_build: dict[str, Any]) -> None:
    found = evaluations(good_build["result"])
    for name in GRAPH_CHECK_NAMES:
        metadata = plain(found[name])
        assert "findings" in metadata, name
        assert found[name].severity == dg.AssetCheckSeverity.ERROR
    nodes = plain(found[names.GRAPH_NODES_MATCH_PARQUET])
    assert nodes["parquet_chunk_rows"] == nodes["graph_chunk_nodes"] > 0
    assert nodes["parquet_embeddable_rows"] == nodes["graph_recordWithText_nodes"]
    assert "counts_by_type" in nodes
    embeddings = plain(found[names.TEXT_EMBEDDINGS_COMPLETE])
    assert embeddings["recordWithText_nodes"] > 0
    assert embeddings["dimension_expected"] == 384
    assert embeddings["missing_embedding"] == embeddings["wrong_dimension"] == 0
    indexes = plain(found[names.VECTOR_INDEX_ONLINE])
    assert indexes["texts_from_records_state"] == indexes["texts_fulltext_state"] == "ONLINE"
    assert plain(found[names.INCLUDES_CONSISTENT])["includes_relationships"] > 0
    assert plain(found[names.NEXT_CONSISTENT])["next_relationships"] > 0


# --------------------------------------------------------------------------- (b)
def test_too_many_rejects_block_the_graph(
    good_build: dict[str, Any],
    export: Path,
    neo4j_settings: Neo4jSettings,
    tmp_path: Path,
) -> None:
    """The same export under the default 1% threshold: the blocking check on the selection
    fails and nothing downstream of it runs (nothing reaches Neo4j)."""
    result = run_all(neo4j_settings, export, tmp_path / "work", max_share=None)
    found = evaluations(result)
    share = found[names.PARSED_RECORDS_REJECT_SHARE]
    assert not share.passed
    assert share.severity == dg.AssetCheckSeverity.ERROR
    assert plain(share)["max_reject_share"] == names.DEFAULT_MAX_REJECT_SHARE
    assert not result.success
    assert materialized(result) == {
        "raw_jsonl",
        "parsed_records",
        "chunks",
        "chunk_embeddings",
        "record_selection",
    }
    assert not (materialized(result) & DOWNSTREAM_OF_SELECTION)
    assert names.GRAPH_NODES_MATCH_PARQUET not in found


def test_threshold_from_the_environment_or_run_config(
    good_build: dict[str, Any], export: Path, neo4j_settings: Neo4jSettings
) -> None:
    """Only the check, on the good build's Parquet: NARA_KG_MAX_REJECT_SHARE decides at run
    time, unless the check's run config sets max_reject_share."""
    selection = dg.AssetSelection.checks(parsed_records_reject_share)
    work = good_build["work"]
    passed = run_all(neo4j_settings, export, work, max_share="10%", selection=selection)
    assert evaluations(passed)[names.PARSED_RECORDS_REJECT_SHARE].passed
    assert materialized(passed) == set()
    failed = run_all(neo4j_settings, export, work, max_share="0.02", selection=selection)
    assert not evaluations(failed)[names.PARSED_RECORDS_REJECT_SHARE].passed
    configured = run_all(
        neo4j_settings,
        export,
        work,
        max_share="0.02",
        selection=selection,
        run_config=dg.RunConfig(
            ops={parsed_records_reject_share.node_def.name: RejectShareConfig(max_reject_share=0.5)}
        ),
    )
    evaluation = evaluations(configured)[names.PARSED_RECORDS_REJECT_SHARE]
    assert evaluation.passed
    assert plain(evaluation)["max_reject_share"] == 0.5


# --------------------------------------------------------------------------- (d)
def run_check(check: Any, resource_values: dict[str, Any]) -> Any:
    """Run one check alone (no asset is materialized); its evaluation."""
    result = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=resource_values,
        selection=dg.AssetSelection.checks(check),
        raise_on_error=False,
    )
    assert materialized(result) == set()
    [evaluation] = result.get_asset_check_evaluations()
    return evaluation


@pytest.fixture
def check_resources(
    good_build: dict[str, Any], export: Path, neo4j_settings: Neo4jSettings
) -> dict[str, Any]:
    """Resources of the good build, after making the graph that build's again: other test
    modules share the server and may have wiped or rebuilt it. The rebuild is incremental
    (only the difference is written), so it is quick when nothing changed."""
    rebuilt = run_all(neo4j_settings, export, good_build["work"], max_share=TEST_SHARE_ENV)
    assert rebuilt.success, [event.message for event in rebuilt.all_events if event.is_failure]
    return resources(neo4j_settings, export, good_build["work"])


@pytest.fixture
def graph(neo4j_driver: Any) -> Iterator[Any]:
    def run(query: str, **params: Any) -> list[dict[str, Any]]:
        records, _, _ = neo4j_driver.execute_query(query, params)
        return [r.data() for r in records]

    yield run


def test_deleting_a_next_breaks_the_next_check(check_resources: dict[str, Any], graph: Any) -> None:
    assert run_check(next_relationships_consistent, check_resources).passed
    [edge] = graph(
        "MATCH (a:Chunk)-[r:Next]->(b:Chunk) WITH a, r, b ORDER BY b.chunkId LIMIT 1 "
        "DELETE r RETURN a.chunkId AS a, b.chunkId AS b"
    )
    try:
        result = run_check(next_relationships_consistent, check_resources)
        assert not result.passed
        assert result.severity == dg.AssetCheckSeverity.ERROR
        metadata = readable(result.metadata)
        assert metadata["missing_next"] == 1
        assert edge["b"] in metadata["offending_sample"]
    finally:
        graph(
            "MATCH (a:Chunk {chunkId: $a}), (b:Chunk {chunkId: $b}) MERGE (a)-[:Next]->(b)",
            **edge,
        )
    assert run_check(next_relationships_consistent, check_resources).passed


def test_a_next_across_records_is_dangling(check_resources: dict[str, Any], graph: Any) -> None:
    [pair] = graph(
        "MATCH (a:Chunk {chunkSeqId: 0}), (b:Chunk {chunkSeqId: 0}) WHERE a.naId < b.naId "
        "WITH a, b LIMIT 1 CREATE (a)-[:Next]->(b) RETURN a.chunkId AS a, b.chunkId AS b"
    )
    try:
        metadata = readable(run_check(next_relationships_consistent, check_resources).metadata)
        assert metadata["dangling_next"] == 1
    finally:
        graph("MATCH (:Chunk {chunkId: $a})-[r:Next]->(:Chunk {chunkId: $b}) DELETE r", **pair)


def test_a_second_includes_breaks_the_includes_check(
    check_resources: dict[str, Any], graph: Any
) -> None:
    [pair] = graph(
        "MATCH (p:Chunk)-[:Includes]->(c:Chunk) "
        "MATCH (other:Chunk {chunkSeqId: 0}) WHERE other.naId <> p.naId AND other <> c "
        "WITH c, other LIMIT 1 CREATE (other)-[:Includes]->(c) "
        "RETURN other.chunkId AS other, c.chunkId AS child"
    )
    try:
        result = run_check(includes_relationships_consistent, check_resources)
        assert not result.passed
        metadata = readable(result.metadata)
        assert metadata["more_than_one_includes"] == 1
        assert metadata["wrong_includes"] == 1
        assert pair["child"] in metadata["offending_sample"]
    finally:
        graph(
            "MATCH (:Chunk {chunkId: $other})-[r:Includes]->(:Chunk {chunkId: $child}) DELETE r",
            **pair,
        )
    assert run_check(includes_relationships_consistent, check_resources).passed


def test_a_missing_includes_is_found(check_resources: dict[str, Any], graph: Any) -> None:
    [edge] = graph(
        "MATCH (p:Chunk)-[r:Includes]->(c:Chunk) WITH p, r, c ORDER BY c.chunkId LIMIT 1 "
        "DELETE r RETURN p.chunkId AS p, c.chunkId AS c"
    )
    try:
        metadata = readable(run_check(includes_relationships_consistent, check_resources).metadata)
        assert metadata["missing_includes"] == 1
        assert edge["c"] in metadata["offending_sample"]
    finally:
        graph(
            "MATCH (p:Chunk {chunkId: $p}), (c:Chunk {chunkId: $c}) MERGE (p)-[:Includes]->(c)",
            **edge,
        )


def test_a_lost_embedding_breaks_the_embedding_check(
    check_resources: dict[str, Any], graph: Any
) -> None:
    [saved] = graph(
        "MATCH (c:recordWithText) WITH c ORDER BY c.chunkId LIMIT 1 "
        "WITH c, c.textEmbedding AS vector REMOVE c.textEmbedding "
        "RETURN c.chunkId AS id, vector"
    )
    try:
        result = run_check(text_embeddings_complete, check_resources)
        assert not result.passed
        assert result.metadata["missing_embedding"].value == 1
        assert saved["id"] in readable(result.metadata)["offending_sample"]
    finally:
        graph(
            "MATCH (c:Chunk {chunkId: $id}) "
            "CALL db.create.setNodeVectorProperty(c, 'textEmbedding', $vector)",
            id=saved["id"],
            vector=saved["vector"],
        )
    assert run_check(text_embeddings_complete, check_resources).passed


def test_a_stray_node_breaks_the_count_check(check_resources: dict[str, Any], graph: Any) -> None:
    before = run_check(graph_nodes_match_parquet, check_resources)
    assert before.passed
    graph("CREATE (:Chunk:item {chunkId: 'quality-test-stray', nodeType: 'item', naId: -1})")
    try:
        result = run_check(graph_nodes_match_parquet, check_resources)
        assert not result.passed
        metadata = readable(result.metadata)
        assert metadata["graph_chunk_nodes"] == metadata["parquet_chunk_rows"] + 1
        assert metadata["types_mismatched"] == 1
        assert "item" in {row["type"] for row in json.loads(metadata["counts_by_type"])}
    finally:
        graph("MATCH (c:Chunk {chunkId: 'quality-test-stray'}) DETACH DELETE c")
    assert run_check(graph_nodes_match_parquet, check_resources).passed


# --------------------------------------------------------------------------- communities
def test_community_report_check(neo4j_settings: Neo4jSettings, graph: Any) -> None:
    """The not-yet-wired factory, on a stand-in asset and two Community nodes of its own (other
    tests' communities may exist too, hence the relative counts)."""
    check = community_report_check(dg.AssetKey("quality_test_communities"))
    neo4j = resources(neo4j_settings, Path("."), Path("."))["neo4j"]

    def run() -> Any:
        result = dg.materialize(
            [dg.AssetSpec("quality_test_communities"), check],
            resources={"neo4j": neo4j},
            selection=dg.AssetSelection.checks(check),
            raise_on_error=False,
        )
        [evaluation] = result.get_asset_check_evaluations()
        return evaluation

    graph(
        "CREATE (:Community {id: 'quality-test-0-1', level: 0, size: 2, summary: 'A report.'}), "
        "(:Community {id: 'quality-test-0-2', level: 0, size: 1, summary: '  '})"
    )
    try:
        missing = run()
        assert not missing.passed
        assert missing.check_name == names.COMMUNITY_REPORTS_COMPLETE
        assert missing.severity == dg.AssetCheckSeverity.ERROR
        before = plain(missing)
        assert before["communities"] >= 2
        assert before["community_without_report"] >= 1
        graph("MATCH (c:Community {id: 'quality-test-0-2'}) SET c.summary = 'Now a report.'")
        after = plain(run())
        assert after["community_without_report"] == before["community_without_report"] - 1
    finally:
        graph("MATCH (c:Community) WHERE c.id STARTS WITH 'quality-test-' DETACH DELETE c")
