"""Issue 37 through the API over the demo graph: the facts a result card shows, follow-up
questions read against earlier turns, the example questions, scores in rank order, and the
schema's example bodies (what /docs "Try it out" sends) answered with 200."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from nara_kg.retrieval.followup import MAX_TURN_RECORDS, MAX_TURNS
from tests.api.graph_fixture import a_series_fact

pytestmark = pytest.mark.integration


def post(client: TestClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(path, json=body)
    assert response.status_code == 200, response.text
    return response.json()


def a_file_unit_with_facts(driver: Any) -> dict[str, Any]:
    """A file unit of the demo graph with digital objects, a restriction and an archive."""
    records, _, _ = driver.execute_query(
        "MATCH (c:fileUnit {chunkSeqId: 0}) "
        "WHERE c.objectUrl_digitalObjects IS NOT NULL AND c.name_referenceUnits IS NOT NULL "
        "AND c.status_accessRestriction IS NOT NULL AND NOT c.isStub "
        "RETURN c.naId AS naId, c.title AS title, c.objectUrl_digitalObjects AS urls, "
        "c.status_accessRestriction AS access, c.status_useRestriction AS use, "
        "c.name_referenceUnits AS archives ORDER BY size(c.title) DESC, c.naId LIMIT 1"
    )
    assert records, "the demo graph has no file unit with digital objects"
    return dict(records[0])


def assert_card(card: dict[str, Any], expected: dict[str, Any]) -> None:
    assert card["online_count"] == len(expected["urls"])
    assert [obj["url"] for obj in card["online"]] == expected["urls"][: len(card["online"])]
    assert sum(card["online_formats"].values()) == len(expected["urls"])
    assert set(card["online_formats"]) <= {"PDF", "JPEG"}
    assert card["access_restriction"] == expected["access"]
    assert card["use_restriction"] == expected["use"]
    assert card["holding_archive"] == "; ".join(dict.fromkeys(expected["archives"]))


def test_search_hits_carry_the_card(client: TestClient, neo4j_driver: Any) -> None:
    unit = a_file_unit_with_facts(neo4j_driver)
    body = post(client, "/api/search", {"query": unit["title"], "k": 5})
    hit = next(h for h in body["hits"] if h["naId"] == unit["naId"])
    assert_card(hit["card"], unit)
    # Every hit with body text has an excerpt of it, never the search header.
    for each in body["hits"]:
        if each["excerpt"]:
            assert "Title:" not in each["excerpt"]
            assert len(each["excerpt"]) <= 240


def test_the_record_endpoint_shows_the_same_card(client: TestClient, neo4j_driver: Any) -> None:
    unit = a_file_unit_with_facts(neo4j_driver)
    response = client.get(f"/api/records/{unit['naId']}")
    assert response.status_code == 200
    assert_card(response.json()["card"], unit)


def test_ask_records_carry_the_card_and_the_matching_sentence(
    client: TestClient, neo4j_driver: Any
) -> None:
    fact = a_series_fact(neo4j_driver)
    question = f"Who created the {fact['kind']} concerning {fact['topic']} in {fact['place']}?"
    body = post(client, "/api/ask", {"question": question, "mode": "local"})
    series = next(r for r in body["records"] if r["naId"] == fact["naId"])
    assert fact["topic"] in series["excerpt"]  # the sentence that matched
    assert "card" in series and series["card"]["holding_archive"]


def test_scores_are_in_rank_order(client: TestClient, neo4j_driver: Any) -> None:
    unit = a_file_unit_with_facts(neo4j_driver)
    # Questions naming identifiers and dates are re-ranked after fusion.
    for query in (f"naId {unit['naId']}", unit["title"], "volume 2 of 1931"):
        for path, key, field in (
            ("/api/search", "hits", "query"),
            ("/api/ask", "records", "question"),
        ):
            body = post(client, path, {field: query, "k": 10})
            scores = [hit["score"] for hit in body[key]]
            assert scores == sorted(scores, reverse=True), (query, scores)


# --- follow-ups ---------------------------------------------------------------------------


def test_a_follow_up_with_years_asks_the_last_question_again(
    client: TestClient, neo4j_driver: Any
) -> None:
    fact = a_series_fact(neo4j_driver)
    first_question = f"What was recorded about {fact['topic']} in {fact['place']}?"
    first = post(client, "/api/ask", {"question": first_question, "mode": "local"})
    turn = {
        "question": first["question"],
        "answer": first["answer"],
        "na_ids": [r["naId"] for r in first["records"]],
        "filters": {"levels": ["series"]},
    }
    body = post(
        client, "/api/ask", {"question": "and in 1930?", "mode": "local", "history": [turn]}
    )
    assert body["question"] == "and in 1930?"
    assert body["follow_up"]["resolved_by"] == "dates"
    assert body["follow_up"]["question"].startswith(first_question.rstrip("?"))
    assert body["filters"]["date_from"] == "1930" and body["filters"]["levels"] == ["series"]
    for record in body["records"]:
        assert record["type"] == "series"
        assert (record["date_end"] or "9999") >= "1930-01-01"
        assert (record["date_start"] or "0000") <= "1930-12-31"
    # The same question without the history is not a follow-up.
    alone = post(client, "/api/ask", {"question": "and in 1930?", "mode": "local"})
    assert "follow_up" not in alone or alone["follow_up"] is None


def test_who_created_it_is_read_against_the_last_answers_record(
    client: TestClient, neo4j_driver: Any
) -> None:
    fact = a_series_fact(neo4j_driver)
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (c:Chunk {naId: $naId, chunkSeqId: 0}) RETURN c.title AS title", naId=fact["naId"]
    )
    title = records[0]["title"]
    turn = {"question": f"Tell me about {fact['topic']}", "na_ids": [fact["naId"]]}
    body = post(
        client, "/api/ask", {"question": "Who created it?", "mode": "local", "history": [turn]}
    )
    assert body["follow_up"] == {
        "question": f"Who created {title}?",
        "resolved_by": "record",
        "focus": [fact["naId"]],
    }
    assert fact["naId"] in [record["naId"] for record in body["records"]]
    assert not body["refused"]


def test_history_is_bounded(client: TestClient) -> None:
    turn = {"question": "Who created the flood control correspondence?"}
    too_many = client.post(
        "/api/ask", json={"question": "and in 1942?", "history": [turn] * (MAX_TURNS + 1)}
    )
    assert too_many.status_code == 422
    too_wide = client.post(
        "/api/ask",
        json={
            "question": "who created it?",
            "history": [{**turn, "na_ids": list(range(1, MAX_TURN_RECORDS + 2))}],
        },
    )
    assert too_wide.status_code == 422
    too_long = client.post(
        "/api/ask", json={"question": "and in 1942?", "history": [{"question": "x" * 2_001}]}
    )
    assert too_long.status_code == 422


# --- first contact ------------------------------------------------------------------------


def test_example_questions_name_the_graphs_own_records(
    client: TestClient, neo4j_driver: Any
) -> None:
    response = client.get("/api/examples")
    assert response.status_code == 200
    questions = response.json()["questions"]
    assert 2 <= len(questions) <= 4
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (c:Chunk {chunkSeqId: 0}) RETURN collect(coalesce(c.title, c.heading)) AS names"
    )
    names = [name for name in records[0]["names"] if name]
    named = [q for q in questions if any(" ".join(n.split())[:60] in q for n in names)]
    assert len(named) >= 2, questions
    for question in questions:
        assert post(client, "/api/ask", {"question": question})["question"] == question


def test_every_schema_example_body_is_answered(client: TestClient) -> None:
    """What /docs "Try it out" sends: each request model's examples, as the schema has them."""
    schema = client.get("/openapi.json").json()
    components = schema["components"]["schemas"]
    sent = 0
    for path, model in (("/api/search", "SearchRequest"), ("/api/ask", "AskRequest")):
        examples = components[model].get("examples")
        assert examples, f"{model} has no example body"
        for example in examples:
            response = client.post(path, json=example)
            assert response.status_code == 200, (model, example, response.text)
            sent += 1
    # Fields Swagger fills from a pattern get examples that pass it.
    filters = components["Filters"]["properties"]
    for field in ("date_from", "date_to"):
        assert filters[field].get("examples"), field
    assert sent >= 4


def test_the_start_up_warm_up_runs_a_search_of_each_shape(services: Any, neo4j_driver: Any) -> None:
    from nara_kg.retrieval.warm import WARM_FILTERS, WARM_QUERIES, warm_searches

    runs = warm_searches(neo4j_driver, services.database, services.embedder.encode)
    # Every query, every filter, "within" a container and the reports of global search.
    assert runs == len(WARM_QUERIES) + len(WARM_FILTERS) + 2
