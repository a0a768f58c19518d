"""`ask`'s typed response and its one JSON form, with the graph faked: which keys appear in
which mode, in what order, and how the API's response model is built from it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from nara_kg.api.records import ask_response
from nara_kg.generation.community_report import CommunityReport, Finding
from nara_kg.generation.llm import ExtractiveLLM, LLMUnreachable
from nara_kg.retrieval import ask as ask_module
from nara_kg.retrieval.ask import ask, ask_with_fallback
from nara_kg.retrieval.filters import SearchFilters
from nara_kg.retrieval.graph_record import GraphRecord
from nara_kg.retrieval.prompts import REFUSAL
from nara_kg.retrieval.response import AskResponse
from nara_kg.retrieval.search import SearchHit, SearchResult

FLOOD_TEXT = "The Corps of Engineers built the flood control levees along the river in 1937."


def hit(na_id: int, title: str, text: str, score: float) -> SearchHit:
    return SearchHit(
        naId=na_id,
        title=title,
        type="fileUnit",
        score=score,
        source=f"https://catalog.archives.gov/id/{na_id}",
        is_stub=False,
        hierarchy=[
            {"naId": 1, "title": "Records of the Corps", "levelOfDescription": "recordGroup"},
            {"naId": 2, "title": "Flood files", "levelOfDescription": "series"},
            {"naId": na_id, "title": title, "levelOfDescription": "fileUnit"},
        ],
        authorities=[
            {
                "naId": 90,
                "heading": "Corps of Engineers",
                "authorityType": "organization",
                "relationship": "CREATOR_OF",
            }
        ],
        text=text,
        chunk_id=f"{na_id}-0",
        vector_rank=1,
        fulltext_rank=None,
        record_type="description",
        date_start="1937-01-01",
        date_end="1937-12-31",
        materials=["Textual Records"],
    )


HITS = [
    hit(10, "Flood control levees", FLOOD_TEXT, 0.5),
    hit(11, "Bridge plans", "Plans of the bridges over the canal.", 0.25),
]
REPORTS = [
    CommunityReport(
        community_id="1-0",
        level=1,
        title="Flood control",
        summary="Levees and dams built against floods.",
        rating=7.0,
        rating_explanation="central",
        findings=(Finding("Levee construction", "The Corps built levees."),),
        generated_by="extractive",
    ),
    CommunityReport(
        community_id="1-1",
        level=1,
        title="Census schedules",
        summary="Population counts.",
        rating=3.0,
        rating_explanation="minor",
        findings=(),
        generated_by="extractive",
    ),
]


class FakeEmbedder:
    def encode(self, texts: list[str]) -> list[list[float]]:
        return [[0.0, 1.0] for _ in texts]

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def count_tokens_many(self, texts: list[str]) -> list[int]:
        return [self.count_tokens(text) for text in texts]


class FakeReports:
    """The Cypher of graph/reports.py over REPORTS."""

    @staticmethod
    def reports_per_level(driver: Any, database: str) -> dict[int, int]:
        return {1: len(REPORTS)}

    @staticmethod
    def reports(driver: Any, database: str, level: int | None = None) -> list[dict[str, Any]]:
        return [
            {
                "report": r.to_json(),
                "id": r.community_id,
                "level": r.level,
                "generatedBy": r.generated_by,
                "size": 40 if r.community_id == "1-0" else 3,
            }
            for r in REPORTS
        ]

    @staticmethod
    def top_members_of_many(
        driver: Any, database: str, community_ids: list[str], limit: int
    ) -> dict[str, list[dict[str, Any]]]:
        return {
            c: [
                {
                    "naId": 10,
                    "title": "Flood control levees",
                    "nodeType": "fileUnit",
                    "source": "s10",
                    "degree": 3,
                },
                {"naId": 12, "title": "Dams", "nodeType": "item", "source": "s12", "degree": 5},
            ]
            for c in community_ids
        }


@pytest.fixture(autouse=True)
def fake_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    def local_search(*args: Any, k: int = 5, **kwargs: Any) -> SearchResult:
        return SearchResult("q", HITS[:k], 1.0)

    monkeypatch.setattr(ask_module, "local_search", local_search)

    def load_records(driver: Any, database: str, na_ids: list[int]) -> list[GraphRecord]:
        by_id = {hit.naId: hit for hit in HITS}
        return [
            GraphRecord(n, by_id[n].title, by_id[n].type, {}, (by_id[n].text,))
            for n in na_ids
            if n in by_id
        ]

    monkeypatch.setattr(ask_module, "load_records", load_records)
    monkeypatch.setattr(ask_module, "report_cypher", FakeReports)


def run(question: str, **kwargs: Any) -> AskResponse:
    return ask(None, "neo4j", FakeEmbedder(), ExtractiveLLM(), None, question, **kwargs)  # type: ignore[arg-type]


def test_a_local_answer_lists_its_records_and_provenance() -> None:
    response = run("Who built the flood control levees?", mode="local")
    assert response.mode == "local" and response.global_sources is None
    body = response.to_dict()
    assert list(body) == [
        "question",
        "request_type",
        "classification_method",
        "mode",
        "filters",
        "answer",
        "refused",
        "method",
        "answer_citations",
        "records",
        "provenance",
        "latency_ms",
    ]
    assert body["answer"] == f"{FLOOD_TEXT} [1]" and body["refused"] is False
    assert body["answer_citations"] == [
        {"marker": 1, "na_id": 10, "title": "Flood control levees", "sentence": FLOOD_TEXT}
    ]
    assert body["method"] == "extractive (rule-based)"
    records = body["records"]
    assert isinstance(records, list) and [r["naId"] for r in records] == [10, 11]
    assert "text" not in records[0] and records[0]["materials"] == ["Textual Records"]
    provenance = body["provenance"]
    assert isinstance(provenance, dict)
    nodes = {node["id"]: node for node in provenance["nodes"]}
    assert nodes["record:10"] == {
        "id": "record:10",
        "naId": 10,
        "title": "Flood control levees",
        "type": "fileUnit",
        "source": "https://catalog.archives.gov/id/10",
        "role": "answer",
        "score": 0.5,
    }
    assert nodes["record:11"]["role"] == "retrieved"
    assert nodes["record:1"] == {
        "id": "record:1",
        "naId": 1,
        "title": "Records of the Corps",
        "type": "recordGroup",
        "source": None,
        "role": "hierarchy",
    }
    assert nodes["record:90"]["role"] == "authority"
    assert {"source": "record:1", "type": "Includes", "target": "record:2"} in provenance[
        "relationships"
    ]
    assert {"source": "record:90", "type": "CREATOR_OF", "target": "record:10"} in provenance[
        "relationships"
    ]
    json.dumps(body)  # plain JSON, no default= needed


def test_show_records_has_no_answer_and_every_record_answers() -> None:
    body = run("Show me the flood control files").to_dict()
    assert body["request_type"] == "show_records" and body["mode"] == "local"
    assert body["answer"] is None and body["method"] == "show_records"
    assert body["refused"] is False
    provenance = body["provenance"]
    assert isinstance(provenance, dict)
    roles = {n["id"]: n["role"] for n in provenance["nodes"]}
    assert roles["record:10"] == roles["record:11"] == "answer"


def test_a_global_answer_cites_communities_with_cards_points_and_members() -> None:
    response = run("What about flood control levees?", mode="global")
    assert response.mode == "global" and response.global_sources is not None
    body = response.to_dict()
    assert list(body) == [
        "question",
        "request_type",
        "classification_method",
        "mode",
        "filters",
        "answer",
        "refused",
        "method",
        "answer_citations",
        "level",
        "overview",
        "communities",
        "community_reports",
        "points",
        "provenance",
        "latency_ms",
    ]
    assert body["level"] == 1 and body["overview"] is False
    assert body["communities"] == ["1-0"]
    assert body["community_reports"] == [
        {
            "id": "1-0",
            "level": 1,
            "size": 40,
            "title": "Flood control",
            "summary": "Levees and dams built against floods.",
            "rating": 7.0,
            "rating_explanation": "central",
            "findings": [
                {"summary": "Levee construction", "explanation": "The Corps built levees."}
            ],
        }
    ]
    points = body["points"]
    assert isinstance(points, list) and points[0]["community_id"] == "1-0"
    assert set(points[0]) == {"description", "score", "community_id"}
    provenance = body["provenance"]
    assert isinstance(provenance, dict)
    assert provenance["nodes"][0] == {
        "id": "community:1-0",
        "communityId": "1-0",
        "level": 1,
        "title": "Flood control",
        "summary": "Levees and dams built against floods.",
        "size": 40,
        "role": "answer",
    }
    # Most central member first.
    assert [n["id"] for n in provenance["nodes"][1:]] == ["record:12", "record:10"]
    assert provenance["relationships"][0] == {
        "source": "record:12",
        "type": "IN_COMMUNITY",
        "target": "community:1-0",
    }


def test_a_refusal_is_the_seed_sentence() -> None:
    body = run("What about quantum chromodynamics?", mode="global").to_dict()
    assert body["refused"] is True and body["answer"] == REFUSAL
    assert body["communities"] == [] and body["points"] == []


def test_filters_are_described_as_given() -> None:
    body = run("Who built the levees?", mode="local", filters=SearchFilters(levels=("item",)))
    assert body.to_dict()["filters"] == {"levels": ("item",)}


def test_the_fallback_comes_last(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ask_module, "classify_request", _raise_unreachable_once())
    response = ask_with_fallback(
        None,  # type: ignore[arg-type]
        "neo4j",
        FakeEmbedder(),  # type: ignore[arg-type]
        ExtractiveLLM(),
        None,
        "Who built the flood control levees?",
        mode="local",
    )
    body = response.to_dict()
    assert list(body)[-2:] == ["latency_ms", "fallback"]
    assert body["fallback"] == {
        "from": "extractive:extractive",
        "to": "extractive",
        "reason": ask_module.FALLBACK_REASON,
    }


def _raise_unreachable_once() -> Any:
    from nara_kg.retrieval.classify import classify_request

    calls: list[int] = []

    def classify(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise LLMUnreachable("the model did not answer")
        return classify_request(*args)

    return classify


def test_the_api_model_is_built_from_the_same_json() -> None:
    local = run("Who built the flood control levees?", mode="local")
    model = ask_response(local).model_dump(by_alias=True)
    body = local.to_dict()
    for key in (
        "question",
        "request_type",
        "mode",
        "answer",
        "refused",
        "method",
        "answer_citations",
        "latency_ms",
    ):
        assert model[key] == body[key]
    assert model["records"][0]["catalog_url"].endswith("/10")
    assert model["records"][0]["text"] is None
    assert model["level"] is None and model["communities"] == [] and model["fallback"] is None
    record_node = next(n for n in model["provenance"]["nodes"] if n["id"] == "record:10")
    assert record_node["catalog_url"].endswith("/10") and record_node["score"] == 0.5

    global_ = run("What about flood control levees?", mode="global")
    model = ask_response(global_).model_dump(by_alias=True)
    assert model["records"] == [] and model["communities"] == ["1-0"]
    assert model["community_reports"][0]["size"] == 40
    community = model["provenance"]["nodes"][0]
    assert community["communityId"] == "1-0" and community["catalog_url"] is None


def test_a_global_answer_takes_members_kept_with_the_report_without_asking_the_graph(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept = [
        {"naId": 30, "title": "Levee board", "nodeType": "series", "source": "s30", "degree": 2},
        {"naId": 31, "title": "Dam plans", "nodeType": "item", "source": "s31", "degree": 9},
    ]
    plain_rows = FakeReports.reports

    def rows_with_members(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        return [{**row, "topMembers": json.dumps(kept)} for row in plain_rows(*args, **kwargs)]

    def no_query(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("members kept with the report need no query")

    monkeypatch.setattr(FakeReports, "reports", staticmethod(rows_with_members))
    monkeypatch.setattr(FakeReports, "top_members_of_many", staticmethod(no_query))
    body = run("What about flood control levees?", mode="global").to_dict()
    provenance = body["provenance"]
    assert isinstance(provenance, dict)
    assert [n["id"] for n in provenance["nodes"][1:]] == ["record:31", "record:30"]
