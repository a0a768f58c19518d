"""Questions about the real records as a whole ("what are the main themes?") and filtered
searches over them, on the graph built from ../shared/data/nara/export (never committed)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nara_kg.api import Services, create_app
from nara_kg.embedding.encoder import Embedder
from nara_kg.generation.llm import ExtractiveLLM
from nara_kg.retrieval.ask import MIN_OVERVIEW_REPORTS, ask
from nara_kg.retrieval.filters import SearchFilters
from nara_kg.retrieval.search import local_search
from nara_kg.settings import PROJECT_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

REAL_EXPORT = (PROJECT_ROOT.parent / "shared" / "data" / "nara" / "export").resolve()

if not REAL_EXPORT.is_dir():
    pytest.skip(f"no real records at {REAL_EXPORT}", allow_module_level=True)

THEMES = "What are the main themes of these archival records?"


def real_records() -> dict[int, dict[str, Any]]:
    records: dict[int, dict[str, Any]] = {}
    for path in sorted(REAL_EXPORT.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)["record"]
                records[record["naId"]] = record
    return records


def holds_exactly(driver: Any, na_ids: set[int]) -> bool:
    """The graph is the real records' (as test_real_records builds it), reports included."""
    records, _, _ = driver.execute_query(
        "MATCH (c:Chunk {chunkSeqId: 0}) WHERE NOT c.isStub "
        "RETURN collect(c.naId) AS ids, COUNT { (m:Community) WHERE m.report IS NOT NULL } AS n"
    )
    return set(records[0]["ids"]) == na_ids and records[0]["n"] > 0


@pytest.fixture(scope="module")
def real_graph(
    graph_builder: Any, neo4j_driver: Any, tmp_path_factory: pytest.TempPathFactory
) -> dict[int, dict[str, Any]]:
    records = real_records()
    if not holds_exactly(neo4j_driver, set(records)):
        graph_builder(REAL_EXPORT, tmp_path_factory.mktemp("real-themes"), wipe_first=True)
    assert holds_exactly(neo4j_driver, set(records))
    return records


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def reports_per_level(driver: Any) -> dict[int, int]:
    records, _, _ = driver.execute_query(
        "MATCH (c:Community) WHERE c.report IS NOT NULL RETURN c.level AS level, count(*) AS n"
    )
    return {int(r["level"]): int(r["n"]) for r in records}


def test_main_themes_cite_at_least_three_communities(
    real_graph: dict[int, Any], neo4j_driver: Any, embedder: Embedder
) -> None:
    for mode in ("global", "auto"):
        answer = ask(
            neo4j_driver, "neo4j", embedder, ExtractiveLLM(), None, THEMES, mode=mode
        ).to_dict()
        assert answer["mode"] == "global" and answer["overview"] is True
        assert not answer["refused"], answer["answer"]
        assert len(answer["communities"]) >= 3
        # The level read: the coarsest one with enough communities to be an overview.
        levels = reports_per_level(neo4j_driver)
        assert answer["level"] == max(
            level for level, n in levels.items() if n >= MIN_OVERVIEW_REPORTS
        )
        cards = answer["community_reports"]
        assert [card["id"] for card in cards] == answer["communities"]
        for card in cards:
            assert card["title"] and card["summary"] and card["title"] in answer["answer"]
        # Largest communities first.
        sizes = [card["size"] for card in cards]
        assert sizes == sorted(sizes, reverse=True)


def test_main_themes_through_the_api(real_graph: dict[int, Any], neo4j_driver: Any) -> None:
    services = Services(
        get_driver=lambda: neo4j_driver, database="neo4j", embedder=Embedder(), llm=ExtractiveLLM()
    )
    with TestClient(create_app(services, rate_per_minute=0)) as client:
        response = client.post("/api/ask", json={"question": THEMES})
    assert response.status_code == 200
    body = response.json()
    assert not body["refused"] and len(body["communities"]) >= 3
    drawn = {node["id"] for node in body["provenance"]["nodes"]}
    assert {f"community:{c}" for c in body["communities"]} <= drawn


def test_a_topic_question_is_still_scored_by_its_topic(
    real_graph: dict[int, Any], neo4j_driver: Any, embedder: Embedder
) -> None:
    nothing = ask(
        neo4j_driver,
        "neo4j",
        embedder,
        ExtractiveLLM(),
        None,
        "What are the main themes of the quantum chromodynamics experiments?",
        mode="global",
    ).to_dict()
    assert nothing["refused"] and not nothing["overview"]


def test_search_within_the_real_series(
    real_graph: dict[int, dict[str, Any]], neo4j_driver: Any, embedder: Embedder
) -> None:
    """880 file units under one series (FDR Library, Morgenthau): k results, all under it."""
    series = 589213
    children = [
        na_id
        for na_id, record in real_graph.items()
        if series in [a["naId"] for a in record.get("ancestors", [])]
    ]
    assert len(children) > 800
    hits = local_search(
        neo4j_driver,
        "neo4j",
        embedder.encode,
        "exchange stabilization fund",
        k=10,
        filters=SearchFilters(within=series),
    ).hits
    assert len(hits) == 10
    assert all(series in [h["naId"] for h in hit.hierarchy[:-1]] for hit in hits)


def test_date_filter_reaches_undated_file_units_through_their_series(
    real_graph: dict[int, dict[str, Any]], neo4j_driver: Any, embedder: Embedder
) -> None:
    hits = local_search(
        neo4j_driver,
        "neo4j",
        embedder.encode,
        "relocation center",
        k=10,
        filters=SearchFilters(date_from="1943", date_to="1943"),
    ).hits
    assert len(hits) == 10
    for hit in hits:
        assert hit.date_start and hit.date_end
        assert hit.date_start <= "1943-12-31" and hit.date_end >= "1943-01-01"
