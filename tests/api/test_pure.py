"""The parts of the question-answering surface that need no graph: overview questions and
their extractive answer, filter validation, and the request limits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from nara_kg.api.limits import BodySizeLimit, RateLimit
from nara_kg.errors import QueryError
from nara_kg.generation.community_report import CommunityReport, Finding
from nara_kg.generation.llm import ExtractiveLLM
from nara_kg.retrieval.filters import SearchFilters
from nara_kg.retrieval.global_search import (
    GlobalAnswer,
    global_search,
    is_overview_question,
    topic_terms,
)
from nara_kg.retrieval.prompts import REFUSAL


def count_words(text: str) -> int:
    return len(text.split())


def report(community_id: str, title: str, rating: float, *findings: str) -> CommunityReport:
    return CommunityReport(
        community_id=community_id,
        level=1,
        title=title,
        summary=f"Summary of {title}.",
        rating=rating,
        rating_explanation="r",
        findings=tuple(Finding(f, "") for f in findings),
        generated_by="extractive",
    )


REPORTS = [
    report("1-0", "Navy logbooks", 4.0, "Pacific fleet", "Atlantic fleet", "Coast guard", "x"),
    report("1-1", "Census schedules", 9.0),
    report("1-2", "Relocation centers", 2.0, "Manzanar"),
    report("1-3", "Tiny group", 9.5),
]
SIZES = {"1-0": 120, "1-1": 40, "1-2": 120, "1-3": 2}


@pytest.mark.parametrize(
    ("question", "overview"),
    [
        ("What are the main themes of these archival records?", True),
        ("Give an overview of the collection.", True),
        ("What are the major topics across the archive?", True),
        ("Summarize the records.", True),
        ("What are the main themes of the flood control records?", False),
        ("Summarize the quantum chromodynamics experiments", False),
        ("What is it?", False),  # no content words at all: nothing to answer
    ],
)
def test_overview_questions(question: str, overview: bool) -> None:
    assert is_overview_question(question) is overview


def test_topic_terms_leave_out_how_to_summarise() -> None:
    assert topic_terms("What are the main themes of the flood control records?") == {
        "flood",
        "control",
    }


def overview_answer(reports: list[CommunityReport], budget: int = 2000) -> GlobalAnswer:
    return global_search(
        "What are the main themes of these archival records?",
        reports,
        ExtractiveLLM(),
        None,
        batch_token_budget=500,
        count_tokens=count_words,
        reduce_token_budget=budget,
        sizes=SIZES,
    )


def test_overview_answers_from_the_largest_communities_then_the_best_rated() -> None:
    answer = overview_answer(REPORTS)
    assert not answer.refused
    # 1-0 and 1-2 are the largest (120); 1-0 is rated higher. Then 40; 1-3 (2 of 282 records)
    # is no theme.
    assert answer.communities == ("1-0", "1-2", "1-1")
    assert [p.score for p in answer.points_used] == [100, 100, 33]
    assert answer.text.splitlines() == [
        "Summary of Navy logbooks.",
        "Summary of Relocation centers.",
        "Summary of Census schedules.",
    ]


def test_overview_answer_fits_the_reduce_budget() -> None:
    answer = overview_answer(REPORTS, budget=40)
    assert 1 <= len(answer.points_used) < len(REPORTS)


def test_overview_is_refused_only_without_reports() -> None:
    answer = overview_answer([])
    assert answer.refused and answer.text == REFUSAL


def test_topic_questions_are_scored_by_their_topic_words_only() -> None:
    answer = global_search(
        "What are the main themes of the census schedules?",
        REPORTS,
        ExtractiveLLM(),
        None,
        batch_token_budget=500,
        count_tokens=count_words,
        reduce_token_budget=2000,
        sizes=SIZES,
    )
    assert answer.communities == ("1-1",)
    assert answer.points_used[0].score == 100  # both topic words, "main themes" not counted


# --- filters ----------------------------------------------------------------------------------


def test_filter_parameters() -> None:
    filters = SearchFilters(
        levels=("series",),
        authority_types=("person",),
        date_from="1942",
        date_to="1945-06",
        materials=("Textual Records",),
    )
    assert filters.active
    params = filters.parameters(within_ids=None)
    assert params == {
        "types": ["series", "person"],
        "recordType": None,
        "materials": ["Textual Records"],
        "withinIds": None,
        "dateFrom": "1942-01-01",
        "dateTo": "1945-06-31",
    }
    assert not SearchFilters().active
    assert SearchFilters().parameters(None)["types"] is None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"levels": ("volume",)}, "unknown level of description"),
        ({"authority_types": ("alien",)}, "unknown authority type"),
        ({"record_type": "photo"}, "unknown record type"),
        ({"date_from": "42"}, "YYYY"),
        ({"date_to": "1945-00"}, "no month 00"),
        ({"date_from": "1950", "date_to": "1949"}, "is after"),
        ({"within": -3}, "positive"),
    ],
)
def test_invalid_filters_raise_query_errors(fields: dict[str, object], message: str) -> None:
    with pytest.raises(QueryError, match=message):
        SearchFilters(**fields)  # type: ignore[arg-type]


# --- limits -----------------------------------------------------------------------------------


def limited_app(**limits: int) -> FastAPI:
    app = FastAPI()

    @app.post("/api/echo")
    def echo(body: dict[str, str]) -> dict[str, int]:
        return {"chars": len(body.get("text", ""))}

    @app.get("/api/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    app.add_middleware(RateLimit, per_minute=limits.get("per_minute", 0), burst=2)
    app.add_middleware(BodySizeLimit, max_body_bytes=limits.get("max_body", 1000))
    return app


def test_body_limit_with_and_without_content_length() -> None:
    client = TestClient(limited_app(max_body=1000))
    assert client.post("/api/echo", json={"text": "a" * 900}).status_code == 200
    declared = client.post("/api/echo", json={"text": "a" * 1200})
    assert declared.status_code == 413 and "at most 1000 bytes" in declared.json()["error"]

    def chunks() -> Iterator[bytes]:
        yield b'{"text": "'
        for _ in range(20):
            yield b"a" * 100
        yield b'"}'

    streamed = client.post(
        "/api/echo", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413


def test_rate_limit_refills_over_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import nara_kg.api.limits as limits

    now = [1000.0]
    monkeypatch.setattr(limits.time, "monotonic", lambda: now[0])
    client = TestClient(limited_app(per_minute=60))
    assert [client.get("/api/other").status_code for _ in range(3)] == [404, 404, 429]
    now[0] += 1.0  # one request a second
    assert client.get("/api/other").status_code == 404
    assert client.get("/api/other").status_code == 429
    assert client.get("/api/health").status_code == 200  # never limited
