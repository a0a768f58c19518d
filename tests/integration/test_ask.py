"""`ask` end to end on the demo data: classification, local and global answers, refusals and the
provenance subgraph (seed 004)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nara_kg.cli.main import main
from nara_kg.demo import generate_demo_data
from nara_kg.embedding.encoder import Embedder
from nara_kg.generation.llm import ExtractiveLLM, GenerationCache
from nara_kg.retrieval.ask import ask
from nara_kg.retrieval.prompts import REFUSAL

pytestmark = pytest.mark.integration

SCOPE = re.compile(
    r"consists of (?P<kind>\w+) created or received by (?P<creator>.+?) concerning "
    r"(?P<topic>.+?) in (?P<place>.+?) and the surrounding"
)


@pytest.fixture(scope="module")
def demo_graph(graph_builder: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("ask")
    generate_demo_data(root / "data", records=150, seed=5)
    graph_builder(root / "data", root / "work", wipe_first=True)
    return {"root": root, "cache": GenerationCache(root / "cache.sqlite")}


def run(driver: Any, demo_graph: dict[str, Any], question: str, **kwargs: Any) -> dict[str, Any]:
    return ask(
        driver, "neo4j", Embedder(), ExtractiveLLM(), demo_graph["cache"], question, **kwargs
    ).to_dict()


def a_series_fact(driver: Any) -> dict[str, Any]:
    records, _, _ = driver.execute_query(
        "MATCH (c:series {chunkSeqId: 0}) WHERE NOT c.isStub RETURN c.naId AS naId, c.text AS text "
        "ORDER BY c.naId"
    )
    for record in records:
        match = SCOPE.search(record["text"])
        if match:
            return {"naId": record["naId"], **match.groupdict()}
    raise AssertionError("no series with a scope note in the demo data")


def test_local_question_is_answered_from_the_record(
    neo4j_driver: Any, demo_graph: dict[str, Any]
) -> None:
    fact = a_series_fact(neo4j_driver)
    question = f"Who created the {fact['kind']} concerning {fact['topic']} in {fact['place']}?"
    response = run(neo4j_driver, demo_graph, question, mode="local")
    assert response["request_type"] == "question"
    assert response["classification_method"] == "rule-based"
    assert response["mode"] == "local" and not response["refused"]
    # The creator is a graph fact: the authority's heading ("Whitcombe, Harold D., ...").
    assert fact["creator"].split()[-1] in response["answer"]
    assert response["answer_citations"][0]["na_id"] == fact["naId"]
    assert "extractive" in response["method"]
    nodes = {node["id"]: node for node in response["provenance"]["nodes"]}
    answer_nodes = [n for n in nodes.values() if n.get("role") == "answer"]
    assert answer_nodes and all(n["source"].endswith(str(n["naId"])) for n in answer_nodes)
    # Hierarchy edges connect nodes that are in the subgraph.
    for edge in response["provenance"]["relationships"]:
        assert edge["source"] in nodes and edge["target"] in nodes
    assert any(e["type"] == "Includes" for e in response["provenance"]["relationships"])


def test_unanswerable_question_gets_the_seed_refusal(
    neo4j_driver: Any, demo_graph: dict[str, Any]
) -> None:
    response = run(
        neo4j_driver,
        demo_graph,
        "What did the senator say about cryptocurrency taxation?",
        mode="local",
    )
    assert response["refused"] is True
    # The seed's refusal, then the records that came closest (none is cited).
    assert response["answer"].startswith(f"{REFUSAL} The closest records: ")
    assert response["answer_citations"] == []


def test_show_records_lists_records_with_hierarchy(
    neo4j_driver: Any, demo_graph: dict[str, Any]
) -> None:
    fact = a_series_fact(neo4j_driver)
    response = run(neo4j_driver, demo_graph, f"Show me records about {fact['topic']}")
    assert response["request_type"] == "show_records"
    assert response["answer"] is None
    records = response["records"]
    assert 0 < len(records) <= 5
    assert all(record["hierarchy"][-1]["naId"] == record["naId"] for record in records)
    assert len({r["naId"] for r in records}) == len(records)


def test_global_question_uses_community_reports(
    neo4j_driver: Any, demo_graph: dict[str, Any]
) -> None:
    fact = a_series_fact(neo4j_driver)
    response = run(neo4j_driver, demo_graph, f"What are the main themes about {fact['topic']}?")
    assert response["mode"] == "global"
    assert not response["refused"] and response["communities"]
    community_nodes = [
        n for n in response["provenance"]["nodes"] if n["id"].startswith("community:")
    ]
    assert {n["communityId"] for n in community_nodes} <= set(response["communities"])
    assert community_nodes
    member_edges = [
        e for e in response["provenance"]["relationships"] if e["type"] == "IN_COMMUNITY"
    ]
    assert member_edges
    assert all(p["score"] > 0 for p in response["points"])
    scores = [p["score"] for p in response["points"]]
    assert scores == sorted(scores, reverse=True)


def test_global_question_without_support_is_refused(
    neo4j_driver: Any, demo_graph: dict[str, Any]
) -> None:
    response = run(
        neo4j_driver, demo_graph, "Summarize the quantum chromodynamics experiments", mode="global"
    )
    assert response["refused"] is True and REFUSAL in response["answer"]


def test_ask_cli_json(neo4j_driver: Any, demo_graph: dict[str, Any]) -> None:
    env = {"NARA_KG_WORK_DIR": str(Path(demo_graph["root"]) / "work")}
    result = CliRunner().invoke(
        main, ["ask", "List the sources about correspondence", "--json"], env=env
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["request_type"] == "show_records"
    assert payload["provenance"]["nodes"]
