"""Retrieval through entities on a small demo graph: a question naming a person or organization
that records mention ranks those records higher with the path than without, the search names
the anchor, and the community reports list the authorities most mentioned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import nara_kg.retrieval.entity_path as entity_path_module
from nara_kg.demo import generate_demo_data
from nara_kg.embedding.encoder import Embedder
from nara_kg.graph import reports as report_cypher
from nara_kg.model.schema import chunk_id
from nara_kg.retrieval.ask import local_provenance
from nara_kg.retrieval.entity_path import clear_entity_linkers, entity_path
from nara_kg.retrieval.search import local_search

pytestmark = pytest.mark.integration


def _reciprocal_rank(ranked: list[int], expected: set[int]) -> float:
    return next((1.0 / rank for rank, na_id in enumerate(ranked, 1) if na_id in expected), 0.0)


def test_person_org_questions_rank_higher_through_entities(
    graph_builder: Any, neo4j_driver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=160, seed=4)
    graph_builder(data, tmp_path / "work", wipe_first=True)
    clear_entity_linkers()
    questions = [json.loads(line) for line in (data / "questions.jsonl").read_text().splitlines()]
    asked = [q for q in questions if q.get("kind") == "person_org"]
    assert asked
    encode = Embedder().encode
    with_path, without_path = [], []
    for question in asked:
        expected = set(question["expected_naids"])
        found = local_search(neo4j_driver, "neo4j", encode, question["question"], k=10)
        plain = local_search(
            neo4j_driver, "neo4j", encode, question["question"], k=10, entity_path=False
        )
        assert plain.entity_path is None
        path = found.entity_path
        assert path is not None and path.anchors, question
        assert {edge.na_id for edge in path.edges} & expected, question
        with_path.append(_reciprocal_rank([h.naId for h in found.hits], expected))
        without_path.append(_reciprocal_rank([h.naId for h in plain.hits], expected))
        # The anchor and its MENTIONED_IN edge to a hit it led to are in the provenance.
        provenance = local_provenance(found.hits, set(), path)
        hit_ids = {h.naId for h in found.hits}
        if any(e.na_id in hit_ids and e.rel == "MENTIONED_IN" for e in path.edges):
            assert any(edge.type == "MENTIONED_IN" for edge in provenance.relationships)
    assert sum(with_path) > sum(without_path), (with_path, without_path)
    assert sum(w >= o for w, o in zip(with_path, without_path, strict=True)) >= len(asked) - 1

    # A question naming nobody gets no anchor, and the search still answers.
    nobody = local_search(neo4j_driver, "neo4j", encode, "records about floods", k=5)
    assert nobody.entity_path is not None and not nobody.entity_path.anchors
    assert nobody.hits

    # An anchor's neighbourhood is remembered, and read again once the graph changes: a
    # MENTIONED_IN added by hand (the relationship count changes) is seen by the next question.
    monkeypatch.setattr(entity_path_module, "SIGNATURE_CHECK_SECONDS", 0.0)
    question = asked[0]["question"]
    before = entity_path(neo4j_driver, "neo4j", question)
    anchor = before.anchors[0].na_id
    reached = {edge.na_id for edge in before.edges} | {a.na_id for a in before.anchors}
    with neo4j_driver.session() as session:
        target = session.run(
            "MATCH (c:Chunk) WHERE NOT c.naId IN $reached RETURN c.chunkId AS id, c.naId AS naId "
            "ORDER BY c.chunkId LIMIT 1",
            reached=list(reached),
        ).single(strict=True)
        added = session.run(
            "MATCH (a:Chunk {chunkId: $anchor}), (c:Chunk {chunkId: $target}) "
            "CREATE (a)-[m:MENTIONED_IN {count: 999}]->(c) RETURN elementId(m) AS id",
            anchor=chunk_id(anchor, 0),
            target=target["id"],
        ).single(strict=True)["id"]
    try:
        after = entity_path(neo4j_driver, "neo4j", question)
        assert any(edge.na_id == target["naId"] for edge in after.edges)
    finally:
        neo4j_driver.execute_query("MATCH ()-[m]->() WHERE elementId(m) = $id DELETE m", id=added)
    assert entity_path(neo4j_driver, "neo4j", question).edges == before.edges

    # Some community report names the authorities its records' text mentions most.
    reports = [json.loads(r["report"]) for r in report_cypher.reports(neo4j_driver, "neo4j")]
    assert any("its records name most" in r["summary"] for r in reports)
