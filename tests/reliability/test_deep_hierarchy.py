"""Hierarchies of any depth: a 150-record chain of full records, and one item that lists 300
ancestors (stubs). Search, ask, `GET /api/records/{naId}` and `within` work at every depth,
against the real Neo4j over a graph built by the pipeline."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nara_kg.api import Services, create_app
from nara_kg.embedding.factory import LockedEmbedder
from nara_kg.generation.llm import ExtractiveLLM
from nara_kg.graph import search as cypher

pytestmark = pytest.mark.integration

CHAIN_ROOT = 970_000_000
CHAIN_LENGTH = 150
CHAIN_LEAF = CHAIN_ROOT + CHAIN_LENGTH - 1
LEAF_TITLE = "Quarantine station zeppelin hangar ledger"
LISTED_ITEM = 971_000_000
LISTED_ANCESTORS = 300


def chain_records() -> list[dict[str, Any]]:
    """Record group -> 148 series -> an item, each record naming its parent only."""
    records = []
    for depth in range(CHAIN_LENGTH):
        na_id = CHAIN_ROOT + depth
        level = "recordGroup" if depth == 0 else "series"
        title = f"Harbor survey volume {depth}"
        if na_id == CHAIN_LEAF:
            level, title = "item", LEAF_TITLE
        record: dict[str, Any] = {
            "naId": na_id,
            "recordType": "description",
            "levelOfDescription": level,
            "title": title,
            "generalRecordsTypes": ["Textual Records"],
            "scopeAndContentNote": f"Soundings and tide tables of the harbor, part {depth}.",
        }
        if depth:
            record["ancestors"] = [
                {
                    "distance": 1,
                    "naId": na_id - 1,
                    "levelOfDescription": "recordGroup" if depth == 1 else "series",
                    "title": f"Harbor survey volume {depth - 1}",
                }
            ]
        records.append(record)
    return records


def listed_ancestors_record() -> dict[str, Any]:
    """An item whose `ancestors` list holds 300 entries, nearest first."""
    ancestors = [
        {
            "distance": distance,
            "naId": LISTED_ITEM + distance,
            "levelOfDescription": "recordGroup" if distance == LISTED_ANCESTORS else "series",
            "title": f"Lighthouse board series {distance}",
        }
        for distance in range(1, LISTED_ANCESTORS + 1)
    ]
    return {
        "naId": LISTED_ITEM,
        "recordType": "description",
        "levelOfDescription": "item",
        "title": "Lighthouse keeper appointment register",
        "scopeAndContentNote": "Appointments of lighthouse keepers on the northern coast.",
        "ancestors": ancestors,
    }


@pytest.fixture(scope="module")
def deep_graph(graph_builder: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deep")
    data = root / "data" / "descriptions" / "deep.jsonl"
    data.parent.mkdir(parents=True)
    lines = [*chain_records(), listed_ancestors_record()]
    data.write_text("\n".join(json.dumps({"record": r}) for r in lines) + "\n", encoding="utf-8")
    graph_builder(root / "data", root / "work", wipe_first=True)
    return root


@pytest.fixture(scope="module")
def client(deep_graph: Path, neo4j_driver: Any, neo4j_settings: Any) -> Iterator[TestClient]:
    services = Services(
        get_driver=lambda: neo4j_driver,
        database=neo4j_settings.database,
        embedder=LockedEmbedder(),
        llm=ExtractiveLLM(),
    )
    with TestClient(create_app(services, rate_per_minute=0)) as test_client:
        yield test_client


def test_a_record_at_any_depth_has_its_whole_hierarchy(client: TestClient) -> None:
    leaf = client.get(f"/api/records/{CHAIN_LEAF}")
    assert leaf.status_code == 200, leaf.text
    hierarchy = [entry["naId"] for entry in leaf.json()["hierarchy"]]
    assert hierarchy == list(range(CHAIN_ROOT, CHAIN_LEAF + 1))  # root first, itself last

    listed = client.get(f"/api/records/{LISTED_ITEM}")
    assert listed.status_code == 200, listed.text
    hierarchy = [entry["naId"] for entry in listed.json()["hierarchy"]]
    assert len(hierarchy) == LISTED_ANCESTORS + 1
    assert hierarchy[0] == LISTED_ITEM + LISTED_ANCESTORS and hierarchy[-1] == LISTED_ITEM


def test_search_and_ask_find_the_deepest_records(client: TestClient) -> None:
    for query, na_id, depth in (
        (LEAF_TITLE, CHAIN_LEAF, CHAIN_LENGTH),
        ("Lighthouse keeper appointment register", LISTED_ITEM, LISTED_ANCESTORS + 1),
    ):
        searched = client.post("/api/search", json={"query": query, "k": 3})
        assert searched.status_code == 200, searched.text
        hit = next(h for h in searched.json()["hits"] if h["naId"] == na_id)
        assert len(hit["hierarchy"]) == depth
        asked = client.post("/api/ask", json={"question": query, "mode": "local"})
        assert asked.status_code == 200, asked.text
        assert na_id in {r["naId"] for r in asked.json()["records"]}


def test_within_reaches_every_depth(client: TestClient, neo4j_driver: Any) -> None:
    under = cypher.descendants(neo4j_driver, "neo4j", CHAIN_ROOT)
    assert under is not None
    assert sorted(under["ids"]) == list(range(CHAIN_ROOT + 1, CHAIN_LEAF + 1))
    listed_root = LISTED_ITEM + LISTED_ANCESTORS
    under = cypher.descendants(neo4j_driver, "neo4j", listed_root)
    assert under is not None and len(under["ids"]) == LISTED_ANCESTORS

    searched = client.post(
        "/api/search", json={"query": LEAF_TITLE, "k": 50, "filters": {"within": CHAIN_ROOT}}
    )
    assert searched.status_code == 200, searched.text
    hits = searched.json()["hits"]
    assert len(hits) == 50
    assert hits[0]["naId"] == CHAIN_LEAF
