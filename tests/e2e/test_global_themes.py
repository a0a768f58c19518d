"""Questions about the real records as a whole ("what are the main themes?") and filtered
searches over them, on the graph built from ../shared/data/nara/export (never committed)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nara_kg.api import Services, create_app
from nara_kg.embedding.encoder import Embedder
from nara_kg.generation.llm import ExtractiveLLM
from nara_kg.retrieval.ask import MIN_OVERVIEW_REPORTS, Mode, ask
from nara_kg.retrieval.filters import SearchFilters
from nara_kg.retrieval.global_search import min_theme_size
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


def overview(driver: Any, embedder: Embedder, mode: Mode = "global") -> dict[str, Any]:
    return ask(driver, "neo4j", embedder, ExtractiveLLM(), None, THEMES, mode=mode).to_dict()


def test_main_themes_are_the_communities_of_meaningful_size(
    real_graph: dict[int, Any], neo4j_driver: Any, embedder: Embedder
) -> None:
    modes: tuple[Mode, ...] = ("global", "auto")
    for mode in modes:
        answer = overview(neo4j_driver, embedder, mode)
        assert answer["mode"] == "global" and answer["overview"] is True
        assert not answer["refused"], answer["answer"]
        # The level read: the coarsest one with enough communities to be an overview.
        levels = reports_per_level(neo4j_driver)
        assert answer["level"] == max(
            level for level, n in levels.items() if n >= MIN_OVERVIEW_REPORTS
        )
        sizes = community_sizes(neo4j_driver, answer["level"])
        floor = min_theme_size(sum(sizes.values()))
        # The real records hold two themes (the Morgenthau diaries, the War Relocation
        # Authority's records); the two- and four-record communities beside them are none.
        assert floor > 4
        assert answer["communities"] == [c for c, n in sizes.items() if n >= floor]
        assert len(answer["communities"]) >= 2
        cards = answer["community_reports"]
        assert [card["id"] for card in cards] == answer["communities"]
        for card in cards:
            assert card["title"] and card["summary"] and card["title"] in answer["answer"]
        # Largest communities first.
        card_sizes = [card["size"] for card in cards]
        assert card_sizes == sorted(card_sizes, reverse=True)


#: Graph statistics, which an answer never states.
STATISTICS = re.compile(
    r"\bdegree|\brelationships?\b|context budget|\bcommunit(y|ies)\b|\blevel \d|-\[|"
    r"\bmentions?\b|Extractive summary|No text excerpt|sub-community|\bIncludes \(",
    re.IGNORECASE,
)


def test_main_themes_read_as_prose_without_statistics(
    real_graph: dict[int, Any], neo4j_driver: Any, embedder: Embedder
) -> None:
    answer = overview(neo4j_driver, embedder)
    assert not STATISTICS.search(answer["answer"]), answer["answer"]
    # Real subjects, whose, when and how many: the Morgenthau diaries, 1933-1945, and the War
    # Relocation Authority's records.
    text = answer["answer"]
    for fact in ("Diaries of Henry Morgenthau, Jr.", "1933", "1945", "War Relocation Authority"):
        assert fact in text
    assert re.search(r"\b8\d\d records\b", text) and "file units" in text


def test_each_theme_sentence_cites_a_record_of_its_community(
    real_graph: dict[int, Any], neo4j_driver: Any, embedder: Embedder
) -> None:
    answer = overview(neo4j_driver, embedder)
    citations = answer["answer_citations"]
    lines = answer["answer"].splitlines()
    assert len(lines) == len(answer["communities"])
    at = 0
    markers: dict[int, int] = {}
    for line, community in zip(lines, answer["communities"], strict=True):
        sentences = re.findall(r"(.+?[.!?\u2026]) \[(\d+)\](?: |$)", line)
        assert sentences and " ".join(f"{s} [{m}]" for s, m in sentences) == line
        assert 1 <= len(sentences) <= 2
        for sentence, marker in sentences:
            citation = citations[at]
            at += 1
            assert citation["sentence"] == sentence and citation["marker"] == int(marker)
            # One marker per record, numbered in order of first citation.
            assert markers.setdefault(citation["na_id"], len(markers) + 1) == int(marker)
            assert in_community(neo4j_driver, citation["na_id"], community)
            assert citation["title"] == record_title(neo4j_driver, citation["na_id"])
    assert at == len(citations)
    # The Morgenthau theme cites its series.
    assert citations[0]["na_id"] == 589213


def community_sizes(driver: Any, level: int) -> dict[str, int]:
    records, _, _ = driver.execute_query(
        "MATCH (c:Community {level: $level}) WHERE c.report IS NOT NULL "
        "RETURN c.id AS id, c.size AS size ORDER BY c.size DESC, c.rating DESC, c.id",
        level=level,
    )
    return {r["id"]: int(r["size"]) for r in records}


def in_community(driver: Any, na_id: int, community: str) -> bool:
    records, _, _ = driver.execute_query(
        "MATCH (:Chunk {naId: $naId, chunkSeqId: 0})-[:IN_COMMUNITY*1..12]->"
        "(c:Community {id: $id}) RETURN count(c) AS n",
        naId=na_id,
        id=community,
    )
    return bool(records[0]["n"])


def record_title(driver: Any, na_id: int) -> str:
    records, _, _ = driver.execute_query(
        "MATCH (m:Chunk {naId: $naId, chunkSeqId: 0}) RETURN coalesce(m.title, m.heading) AS t",
        naId=na_id,
    )
    return str(records[0]["t"])


def test_main_themes_through_the_api(real_graph: dict[int, Any], neo4j_driver: Any) -> None:
    services = Services(
        get_driver=lambda: neo4j_driver, database="neo4j", embedder=Embedder(), llm=ExtractiveLLM()
    )
    with TestClient(create_app(services, rate_per_minute=0)) as client:
        response = client.post("/api/ask", json={"question": THEMES})
    assert response.status_code == 200
    body = response.json()
    assert not body["refused"] and len(body["communities"]) >= 2
    assert len(body["answer_citations"]) >= len(body["communities"])
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
