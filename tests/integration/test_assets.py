"""Every knowledge-graph asset materialized in process against the real Neo4j, on demo data."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest

from nara_kg.demo import generate_demo_data
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import iter_chunks
from nara_kg.model.schema import AUTHORITY_RELATIONSHIPS, Index
from tests.graph_helpers import metadata_of, scalar

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def built(neo4j_driver: Any, graph_builder: Any, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("assets")
    summary = generate_demo_data(root / "data", records=150, seed=3)
    # As on a new server: without the vector index an earlier test left.
    neo4j_driver.execute_query(f"DROP INDEX {Index.VECTOR} IF EXISTS")
    first = graph_builder(root / "data", root / "work", wipe_first=True)
    second = graph_builder(root / "data", root / "work")
    return {
        "first": first,
        "second": second,
        "layout": WorkLayout(root / "work"),
        "summary": summary,
        "data": root / "data",
    }


def chunk_table(layout: WorkLayout) -> Any:
    """The chunks of the chosen records: what the graph is built from."""
    import pyarrow as pa

    return pa.Table.from_pylist(list(iter_chunks(layout)))


def test_every_asset_reports_metadata(built: dict[str, Any]) -> None:
    first = built["first"]
    parsed = metadata_of(first, "parsed_records")
    assert parsed["lines_rejected"] == 0
    assert parsed["records"] == sum(built["summary"].records_by_type.values())
    chunks = metadata_of(first, "chunks")
    assert chunks["max_tokens_seen"] <= chunks["model_token_limit"] == 256
    # The export's files; the questions and mention labels beside them are not input.
    export_files = [p for p in built["data"].rglob("*.jsonl") if p.parent != built["data"]]
    assert chunks["files"] == parsed["files"] == len(export_files)
    chosen = chunk_table(built["layout"])
    nodes = metadata_of(first, "graph_nodes")
    assert nodes["nodes_written"] == nodes["chunks_desired"] == chosen.num_rows
    embeddings = metadata_of(first, "text_embeddings")
    assert embeddings["embedded"] == sum(chosen["embed"].to_pylist())
    # A new graph's vector index is populated after the writes, while later steps run: the
    # step that starts it runs first of the steps graph_nodes lets run, the one that waits for
    # it after every step but the evaluation.
    assert embeddings["index_populated_after_writes"] is True
    started = [e.step_key for e in first.all_events if e.event_type_value == "STEP_START"]
    assert started.index("text_embeddings") == started.index("graph_nodes") + 1
    assert started[-2:] == ["vector_index", "retrieval_evaluation"]
    # Full records' vectors come from the per-file parts; only chosen stubs are encoded late.
    vectors = metadata_of(first, "chunk_embeddings")
    assert embeddings["from_file_parts"] == vectors["chunks"] > 0
    assert embeddings["encoded_here"] == sum(
        1 for row in chosen.to_pylist() if row["embed"] and row["isStub"]
    )
    evaluation = metadata_of(first, "retrieval_evaluation")
    assert evaluation["n"] > 0
    assert 0.0 <= evaluation["mrr_at_10"] <= 1.0


def test_graph_matches_the_parquet(built: dict[str, Any], neo4j_driver: Any) -> None:
    table = chunk_table(built["layout"])
    assert scalar(neo4j_driver, "MATCH (c:Chunk) RETURN count(c)") == table.num_rows
    embedded = sum(table["embed"].to_pylist())
    assert (
        scalar(
            neo4j_driver,
            "MATCH (c:recordWithText) WHERE size(c.textEmbedding) = 384 RETURN count(c)",
        )
        == embedded
    )
    for node_type, count in built["summary"].records_by_type.items():
        got = scalar(
            neo4j_driver,
            "MATCH (c:Chunk) WHERE c.nodeType = $t AND c.chunkSeqId = 0 AND NOT c.isStub "
            "RETURN count(c)",
            t=node_type,
        )
        assert got == count, node_type
        # The type is a label too, as in the seed.
        labelled = scalar(
            neo4j_driver,
            "MATCH (c:Chunk) WHERE $t IN labels(c) AND c.chunkSeqId = 0 AND NOT c.isStub "
            "RETURN count(c)",
            t=node_type,
        )
        assert labelled == count
    assert (
        scalar(
            neo4j_driver,
            "MATCH (c:Chunk) WHERE any(k IN keys(c) WHERE c[k] = 'N/A') RETURN count(c)",
        )
        == 0
    )


def test_relationships(built: dict[str, Any], neo4j_driver: Any) -> None:
    table = chunk_table(built["layout"])
    first_chunks = [r for r in table.to_pylist() if r["chunkSeqId"] == 0]
    expected_next = sum(r["chunkCount"] - 1 for r in first_chunks)
    assert scalar(neo4j_driver, "MATCH ()-[r:Next]->() RETURN count(r)") == expected_next
    present = {r["naId"] for r in first_chunks}
    expected_includes = sum(1 for r in first_chunks if r["parentNaId"] in present)
    assert expected_includes > 0
    assert scalar(neo4j_driver, "MATCH ()-[r:Includes]->() RETURN count(r)") == expected_includes
    # No record has two parents.
    assert (
        scalar(
            neo4j_driver,
            "MATCH (c)<-[:Includes]-() WITH c, count(*) AS n WHERE n > 1 RETURN count(c)",
        )
        == 0
    )
    for rel in ("creator", "subject", "donor", "jurisdiction", "broaderTerm"):
        assert scalar(neo4j_driver, f"MATCH ()-[r:{rel}]->() RETURN count(r)") > 0, rel
    # Creators that cite a nested organization name land on the organization itself.
    aliased = scalar(
        neo4j_driver,
        "MATCH (o:organization)-[:creator]->(d:Chunk) "
        "WHERE o.naId_organizationNames IS NOT NULL AND NOT o.isStub "
        "AND any(x IN d.naId_creators WHERE x IN o.naId_organizationNames AND x <> o.naId) "
        "RETURN count(*)",
    )
    assert aliased > 0
    all_types = "|".join(r.value for r in AUTHORITY_RELATIONSHIPS)
    assert (
        scalar(
            neo4j_driver,
            f"MATCH (a)-[r:{all_types}]->(b) WHERE b.chunkSeqId <> 0 OR a.chunkSeqId <> 0 "
            "RETURN count(r)",
        )
        == 0
    )


def test_indexes_online(neo4j_driver: Any) -> None:
    records, _, _ = neo4j_driver.execute_query(
        "SHOW INDEXES YIELD name, state WHERE name IN $names RETURN name, state",
        names=[Index.VECTOR, Index.FULLTEXT],
    )
    assert {r["name"]: r["state"] for r in records} == {
        Index.VECTOR: "ONLINE",
        Index.FULLTEXT: "ONLINE",
    }


def test_second_run_changes_nothing(built: dict[str, Any]) -> None:
    second = built["second"]
    assert metadata_of(second, "parsed_records")["files_parsed"] == 0
    assert metadata_of(second, "chunks")["files_chunked"] == 0
    assert (
        metadata_of(second, "chunks")["chunks"] == metadata_of(built["first"], "chunks")["chunks"]
    )
    nodes = metadata_of(second, "graph_nodes")
    assert nodes["nodes_written"] == 0 and nodes["nodes_deleted"] == 0
    embeddings = metadata_of(second, "text_embeddings")
    assert embeddings["embedded"] == 0 and embeddings["index_populated_after_writes"] is False
    for asset in ("next_relationships", "includes_relationships", "authority_relationships"):
        meta = metadata_of(second, asset)
        assert meta["added"] == 0 and meta["removed"] == 0, asset
    communities = metadata_of(second, "graph_communities")
    assert (communities["membership_added"], communities["membership_removed"]) == (0, 0)
    assert communities["leiden_skipped"] is True and communities["records_touched"] == 0
    reports = metadata_of(second, "community_reports")
    assert reports["generated"] == reports["cached"] == 0
    # Every report's sources are as the first run found them: no community is even read.
    assert reports["reports_skipped"] is True and reports["communities"] > 0
    assert reports["contexts_rebuilt"] == reports["records_touched"] == 0
    assert reports["summaries_embedded"] == 0


def test_demo_questions_are_answered(built: dict[str, Any]) -> None:
    evaluation = metadata_of(built["first"], "retrieval_evaluation")
    assert evaluation["hit_at_5"] >= 0.6, evaluation
    questions = [
        json.loads(line) for line in built["summary"].questions_path.read_text().splitlines()
    ]
    assert evaluation["n"] == sum(
        1 for q in questions if q["mode"] != "global" and q["expected_naids"]
    )


def test_communities_and_reports(built: dict[str, Any], neo4j_driver: Any) -> None:
    first = metadata_of(built["first"], "graph_communities")
    assert first["communities"] > 0 and first["levels"] >= 1
    reports = metadata_of(built["first"], "community_reports")
    assert reports["communities"] == first["communities"]
    assert reports["generator"].startswith("extractive")
    # Each summary was encoded while the coarser levels' reports were made (the text the loop
    # encodes is the one the node's title and summary make).
    assert reports["summaries_encoded_early"] == reports["summaries_encoded"] > 0
    # Every community has a report, with its summary embedded.
    assert (
        scalar(
            neo4j_driver,
            "MATCH (c:Community) WHERE c.report IS NULL OR c.summaryEmbedding IS NULL "
            "RETURN count(c)",
        )
        == 0
    )
    report = json.loads(scalar(neo4j_driver, "MATCH (c:Community) RETURN c.report LIMIT 1"))
    assert set(report) == {"title", "summary", "rating", "rating_explanation", "findings"}
    # The extractive summary is prose: its statistics stay in the rating explanation.
    assert report["summary"] and "degree" not in report["summary"]
    assert "degree" in report["rating_explanation"]
    # Most records belong to a community; members point at level-0 or higher communities only.
    in_community = scalar(
        neo4j_driver, "MATCH (c:Chunk {chunkSeqId: 0})-[:IN_COMMUNITY]->() RETURN count(c)"
    )
    assert in_community > 0.5 * scalar(
        neo4j_driver, "MATCH (c:Chunk {chunkSeqId: 0}) RETURN count(c)"
    )


def test_a_community_identical_to_its_only_sub_community_shares_its_report(
    built: dict[str, Any], neo4j_driver: Any
) -> None:
    pairs, _, _ = neo4j_driver.execute_query(
        "MATCH (c:Community) WHERE COUNT { (:Community)-[:IN_COMMUNITY]->(c) } = 1 "
        "MATCH (child:Community)-[:IN_COMMUNITY]->(c) WHERE child.size = c.size "
        "RETURN c.report AS report, child.report AS childReport, c.summary AS summary, "
        "child.summary AS childSummary, c.summaryEmbedding = child.summaryEmbedding AS same"
    )
    reports = metadata_of(built["first"], "community_reports")
    assert reports["copied_from_sub_community"] == len(pairs) > 0
    for pair in pairs:
        assert pair["report"] == pair["childReport"] and pair["summary"] == pair["childSummary"]
        assert pair["same"] is True
    # Equal summaries are encoded once.
    assert reports["summaries_encoded"] < reports["summaries_embedded"] == reports["communities"]


def test_batched_context_reads_match_one_community_at_a_time(
    built: dict[str, Any], neo4j_driver: Any, neo4j_settings: Any
) -> None:
    from nara_kg.graph import reports as report_cypher
    from nara_kg.graph.communities import COMMUNITY_RELATIONSHIPS

    db = neo4j_settings.database
    ids = [row["id"] for row in report_cypher.communities(neo4j_driver, db)]
    many = report_cypher.members_of_many(neo4j_driver, db, ids)
    key = lambda m: m["naId"]  # noqa: E731
    for community_id in ids:
        assert sorted(many[community_id], key=key) == sorted(
            report_cypher.members(neo4j_driver, db, community_id), key=key
        )
    # Level by level, finest first, with the rows read once per run: the same members.
    known = report_cypher.KnownMembers()
    levels = sorted({int(cid.split("-")[0]) for cid in ids})
    for level in levels:
        of_level = [cid for cid in ids if cid.startswith(f"{level}-")]
        before = len(known.rows)
        by_level = report_cypher.members_of_many(neo4j_driver, db, of_level, known=known)
        for community_id in of_level:
            assert sorted(by_level[community_id], key=key) == sorted(many[community_id], key=key)
        if level > levels[0]:  # coarser levels read only the records that joined there
            assert len(known.rows) - before < sum(len(by_level[c]) for c in of_level)
    # The provenance of a global answer: the top members by degree, as the full list ranks them.
    top = report_cypher.top_members_of_many(neo4j_driver, db, ids, 3)
    for community_id in ids:
        ranked = sorted(many[community_id], key=lambda m: (-m["degree"], m["naId"]))[:3]
        assert [m["naId"] for m in top[community_id]] == [m["naId"] for m in ranked]
    rows_of = {int(m["naId"]): m for rows in many.values() for m in rows}
    within = report_cypher.relationships_within(
        neo4j_driver, db, {cid: [m["naId"] for m in many[cid]] for cid in ids}, rows_of
    )
    expected, _, _ = neo4j_driver.execute_query(
        "MATCH (c:Community) "
        "MATCH (a:Chunk {chunkSeqId: 0})-[:IN_COMMUNITY*1..12]->(c) "
        "MATCH (a)-[r]->(b:Chunk {chunkSeqId: 0})-[:IN_COMMUNITY*1..12]->(c) "
        "WHERE type(r) IN $types "
        "RETURN c.id AS id, a.naId AS source, b.naId AS target, type(r) AS type, "
        "coalesce(a.title, a.heading) AS sourceTitle, coalesce(b.title, b.heading) AS targetTitle, "
        "COUNT { (a)-[x]-() WHERE type(x) IN $types } "
        "+ COUNT { (b)-[x]-() WHERE type(x) IN $types } AS degree",
        types=list(COMMUNITY_RELATIONSHIPS),
        database_=db,
    )
    # Titles and degrees come from the member rows: the same as the graph's, end by end.
    fields = ("source", "target", "type", "sourceTitle", "targetTitle", "degree")
    found = {(cid, *(row[f] for f in fields)) for cid in ids for row in within[cid]}
    assert found == {(r["id"], *(r[f] for f in fields)) for r in expected}
    assert found
    # Read once per run: the next level's call finds every record read (it needs no driver).
    groups = {cid: [m["naId"] for m in many[cid]] for cid in ids}
    known = report_cypher.OutgoingRelationships()
    first = report_cypher.relationships_within(neo4j_driver, db, groups, rows_of, known=known)
    again = report_cypher.relationships_within(cast(Any, None), db, groups, rows_of, known=known)
    assert again == first
    assert {(r["source"], r["target"]) for rows in first.values() for r in rows} == {
        (r["source"], r["target"]) for rows in within.values() for r in rows
    }


def test_member_rows_are_read_with_their_text_only_when_their_node_changed(
    built: dict[str, Any], neo4j_driver: Any, neo4j_settings: Any, tmp_path: Any
) -> None:
    """A run's KnownMembers with a report scope's store: the next run reads the text of no
    unchanged record, gives the same rows, and reads again the one whose node's row changed."""
    from nara_kg.generation.report_rows import MemberFieldStore, member_fields
    from nara_kg.generation.report_scope import ReportScope
    from nara_kg.graph import reports as report_cypher

    db = neo4j_settings.database
    ids = [row["id"] for row in report_cypher.communities(neo4j_driver, db)]
    expected = {
        cid: sorted((member_fields(m) for m in rows), key=lambda m: m["naId"])
        for cid, rows in report_cypher.members_of_many(neo4j_driver, db, ids).items()
    }

    def run(
        scope: ReportScope, pending: frozenset[int] | None = None
    ) -> report_cypher.KnownMembers:
        known = report_cypher.KnownMembers(fields=MemberFieldStore(scope, pending))
        rows = report_cypher.members_of_many(neo4j_driver, db, ids, known=known)
        assert {cid: sorted(r, key=lambda m: m["naId"]) for cid, r in rows.items()} == expected
        return known

    with ReportScope(tmp_path / "scope.sqlite") as scope:
        first = run(scope)
        assert first.read_with_text == len(first.rows) > 1
        assert run(scope).read_with_text == 0
        na_id = min(first.rows)
        set_hash = "MATCH (m:Chunk {chunkId: $id}) SET m.rowHash = $hash RETURN m.rowHash AS old"
        records, _, _ = neo4j_driver.execute_query(
            set_hash, id=f"{na_id}-0", hash="edited", database_=db
        )
        try:
            assert run(scope).read_with_text == 1
        finally:
            neo4j_driver.execute_query(
                set_hash, id=f"{na_id}-0", hash=records[0]["old"], database_=db
            )
        # In a run scoped by the change, only pending records are read (keys, not text).
        scoped = run(scope, pending=frozenset({na_id}))
        assert (scoped.keys_read, scoped.read_with_text) == (1, 0)
        # A remembered degree that moved while the row hash stayed is remembered anew.
        scope.remember_member_fields(
            [(na_id, records[0]["old"], {**first.rows[na_id], "degree": -1})]
        )
        assert run(scope, pending=frozenset({na_id})).keys_read == 1
        assert run(scope, pending=frozenset()).keys_read == 0


def test_settled_records_relationships_are_the_stores_and_the_others_are_read(
    built: dict[str, Any], neo4j_driver: Any, neo4j_settings: Any, tmp_path: Any
) -> None:
    """The relationships a scoped run adopts from the store for settled records, with those it
    reads for the pending ones, give the rows a run that reads all of them gives."""
    from nara_kg.generation.report_rows import MemberFieldStore
    from nara_kg.generation.report_scope import ReportScope
    from nara_kg.graph import reports as report_cypher

    db = neo4j_settings.database
    ids = [row["id"] for row in report_cypher.communities(neo4j_driver, db)]
    many = report_cypher.members_of_many(neo4j_driver, db, ids)
    rows_of = {int(m["naId"]): m for rows in many.values() for m in rows}
    groups = {cid: [int(m["naId"]) for m in many[cid]] for cid in ids}
    every = sorted(rows_of)

    def sort(found: dict[str, list[Any]]) -> dict[str, list[Any]]:
        return {
            cid: sorted(r, key=lambda x: (x["source"], x["target"])) for cid, r in found.items()
        }

    read_all = report_cypher.OutgoingRelationships()
    expected = sort(report_cypher.relationships_within(neo4j_driver, db, groups, rows_of, read_all))
    assert any(expected.values())
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.remember_outgoing(read_all.take_read())
        pending = frozenset(every[:3])
        known = report_cypher.OutgoingRelationships()
        known.adopt(MemberFieldStore(scope, pending).settled_outgoing(known.missing(every)))
        assert known.missing(every) == sorted(pending)
        found = report_cypher.relationships_within(neo4j_driver, db, groups, rows_of, known)
        assert sort(found) == expected
        assert sorted(known.take_read()) == sorted(pending)


def test_global_questions_are_evaluated(built: dict[str, Any]) -> None:
    evaluation = metadata_of(built["first"], "retrieval_evaluation")
    assert evaluation["global_questions"] >= 1
    assert evaluation["global_answered"] >= 1
