"""Every endpoint of the API over the demo graph: search with each filter (k kept while enough
records match), ask in its three outcomes and two modes, records, health, and the failures a
client must be told about clearly."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nara_kg.retrieval.prompts import REFUSAL
from tests.api.graph_fixture import (
    HOSTILE_FILE_UNIT,
    HOSTILE_HEADING,
    HOSTILE_PERSON,
    HOSTILE_SERIES,
    HOSTILE_TITLE,
    a_series_fact,
)

pytestmark = pytest.mark.integration

CATALOG = re.compile(r"^https://catalog\.archives\.gov/id/(\d+)$")


def scalar(driver: Any, query: str, **params: Any) -> Any:
    records, _, _ = driver.execute_query(query, params)
    return records[0][0]


def search(client: TestClient, query: str, k: int = 5, **filters: Any) -> dict[str, Any]:
    response = client.post("/api/search", json={"query": query, "k": k, "filters": filters})
    assert response.status_code == 200, response.text
    return response.json()


def ask(client: TestClient, question: str, **fields: Any) -> dict[str, Any]:
    response = client.post("/api/ask", json={"question": question, **fields})
    assert response.status_code == 200, response.text
    return response.json()


def linked_id(url: str) -> str:
    match = CATALOG.match(url)
    assert match, url
    return match.group(1)


def assert_record_links(hit: dict[str, Any]) -> None:
    assert linked_id(hit["catalog_url"]) == str(hit["naId"])
    for entry in hit["hierarchy"]:
        assert linked_id(entry["catalog_url"]) == str(entry["naId"])
    for authority in hit["authorities"]:
        assert linked_id(authority["catalog_url"]) == str(authority["naId"])


# --- service ----------------------------------------------------------------------------------


def test_health_reports_the_graph(client: TestClient, neo4j_driver: Any) -> None:
    response = client.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["neo4j"] == "ok"
    records = scalar(neo4j_driver, "MATCH (c:Chunk {chunkSeqId: 0}) RETURN count(c)")
    assert body["graph"]["records"] == records
    assert body["graph"]["communities"] > 0 and body["graph"]["reports_per_level"]
    assert body["llm"] == "extractive:extractive"


def test_openapi_schema_documents_every_endpoint(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert {"/api/search", "/api/ask", "/api/records/{na_id}", "/api/health"} <= set(
        schema["paths"]
    )
    components = schema["components"]["schemas"]
    for model in ("SearchRequest", "SearchResponse", "AskRequest", "AskResponse", "Filters"):
        assert model in components, model
    levels = components["Filters"]["properties"]["levels"]["items"]["enum"]
    assert set(levels) == {"item", "fileUnit", "series", "recordGroup", "collection"}


def test_docs_page_is_served_without_a_cdn(client: TestClient) -> None:
    page = client.get("/docs").text
    assert "/static/vendor/swagger-ui/swagger-ui-bundle.js" in page
    assert "cdn" not in page.lower()


def test_page_headers_forbid_foreign_and_inline_scripts(client: TestClient) -> None:
    response = client.get("/")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"


# --- search -----------------------------------------------------------------------------------


def test_search_returns_records_with_hierarchy_and_authorities(client: TestClient) -> None:
    body = search(client, "flood control correspondence", k=5)
    assert len(body["hits"]) == 5
    for hit in body["hits"]:
        assert hit["hierarchy"][-1]["naId"] == hit["naId"]  # root first, the record last
        assert_record_links(hit)
    assert any(len(hit["hierarchy"]) > 1 for hit in body["hits"])
    assert any(hit["authorities"] for hit in body["hits"])


def test_level_filter_keeps_k_results(client: TestClient, neo4j_driver: Any) -> None:
    series = scalar(
        neo4j_driver, "MATCH (c:series {chunkSeqId: 0}) WHERE NOT c.isStub RETURN count(c)"
    )
    assert series >= 6
    body = search(client, "photographs of the meeting minutes", k=6, levels=["series"])
    assert [hit["type"] for hit in body["hits"]] == ["series"] * 6
    assert body["filters"] == {"levels": ["series"]}


def test_authority_and_record_type_filters(client: TestClient) -> None:
    people = search(client, "flood control", k=3, authority_types=["person"])["hits"]
    assert people and all(hit["type"] == "person" for hit in people)
    either = search(client, "flood control", k=8, levels=["series"], authority_types=["person"])
    assert {hit["type"] for hit in either["hits"]} <= {"series", "person"}
    authorities = search(client, "flood control", k=5, record_type="authority")["hits"]
    assert len(authorities) == 5
    assert all(hit["record_type"] == "authority" for hit in authorities)


def effective_dates(driver: Any) -> dict[int, tuple[str, str]]:
    """Each record's date range computed here from its raw properties: its own dates
    (inclusive, coverage, the dates its title states, production), else its nearest dated
    ancestor's."""
    records, _, _ = driver.execute_query(
        "MATCH (c:Chunk {chunkSeqId: 0}) RETURN c.naId AS naId, c.ancestors AS ancestors, "
        "[c.logicalDate_inclusiveStartDate, c.logicalDate_coverageStartDate, "
        "c.logicalDate_titleStartDate] AS starts, "
        "[c.logicalDate_inclusiveEndDate, c.logicalDate_coverageEndDate, "
        "c.logicalDate_titleEndDate] AS ends, "
        "c.logicalDate_productionDates AS produced"
    )
    own: dict[int, tuple[str, str]] = {}
    for r in records:
        starts = [d for d in r["starts"] if d] or sorted(r["produced"] or [])[:1]
        ends = [d for d in r["ends"] if d] or sorted(r["produced"] or [])[-1:]
        if starts or ends:
            own[r["naId"]] = ((starts or ends)[0], (ends or starts)[0])
    dates = dict(own)
    for r in records:
        if r["naId"] not in own:
            dated = [own[a] for a in r["ancestors"] or [] if a in own]
            if dated:
                dates[r["naId"]] = dated[0]
    return dates


def effective_dates_inherited(driver: Any) -> list[int]:
    """The records without dates of their own, nor dates their title states."""
    records, _, _ = driver.execute_query(
        "MATCH (c:Chunk {chunkSeqId: 0}) WHERE c.logicalDate_inclusiveStartDate IS NULL "
        "AND c.logicalDate_inclusiveEndDate IS NULL AND c.logicalDate_coverageStartDate IS NULL "
        "AND c.logicalDate_coverageEndDate IS NULL AND c.logicalDate_titleStartDate IS NULL "
        "AND c.logicalDate_productionDates IS NULL RETURN c.naId AS naId"
    )
    return [r["naId"] for r in records]


def test_date_filter_keeps_overlapping_records(client: TestClient, neo4j_driver: Any) -> None:
    dates = effective_dates(neo4j_driver)
    low, high = "1920-01-01", "1925-06-31"
    matching = {na_id for na_id, (a, b) in dates.items() if a <= high and b >= low}
    assert len(matching) >= 8
    body = search(client, "letters about forestry", k=8, date_from="1920", date_to="1925-06")
    assert len(body["hits"]) == 8
    for hit in body["hits"]:
        assert hit["naId"] in matching
        assert (hit["date_start"], hit["date_end"]) == dates[hit["naId"]]
    # Inherited exactly when the record has no dates of its own (nor any its title states).
    undated = set(effective_dates_inherited(neo4j_driver))
    for hit in body["hits"]:
        assert hit["dates_inherited"] == (hit["naId"] in undated), hit["title"]
    few = {na_id for na_id, (a, b) in dates.items() if a <= "1918-12-31" and b >= "1918-01-01"}
    narrow = search(client, "letters about forestry", k=50, date_from="1918", date_to="1918")
    assert {hit["naId"] for hit in narrow["hits"]} == few  # all of them: fewer than k match


def test_materials_filter(client: TestClient) -> None:
    body = search(client, "flood control", k=4, materials=["Textual Records"])
    assert body["hits"]
    assert all("Textual Records" in hit["materials"] for hit in body["hits"])


def test_within_a_series_searches_only_under_it(client: TestClient, neo4j_driver: Any) -> None:
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (s:series {chunkSeqId: 0})-[:Includes*1..]->(d) WITH s, count(DISTINCT d) AS n "
        "WHERE n >= 6 RETURN s.naId AS naId, n ORDER BY n DESC, naId LIMIT 1"
    )
    series = records[0]["naId"]
    body = search(client, "minutes of the advisory board", k=6, within=series)
    assert len(body["hits"]) == 6
    for hit in body["hits"]:
        assert hit["naId"] != series
        assert series in [entry["naId"] for entry in hit["hierarchy"][:-1]]


def test_filters_that_match_nothing(client: TestClient) -> None:
    assert search(client, "flood control", date_from="1700", date_to="1701")["hits"] == []
    assert (
        search(client, "flood control", levels=["collection"], record_type="authority")["hits"]
        == []
    )
    # A filter sent outside `filters` is refused, not silently ignored.
    response = client.post("/api/ask", json={"question": "flood", "date_from": "1700"})
    assert response.status_code == 422 and "date_from" in response.json()["error"]


def test_ask_with_filters_that_match_nothing_refuses(client: TestClient) -> None:
    nothing = {"date_from": "1700", "date_to": "1701"}
    answer = ask(client, "Who created the flood control letters?", mode="local", filters=nothing)
    assert answer["refused"] and answer["answer"] == REFUSAL and answer["records"] == []
    shown = ask(client, "Show me records about flood control", filters=nothing)
    assert shown["request_type"] == "show_records"
    assert shown["refused"] and shown["records"] == []


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"levels": ["volume"]}, "filters.levels.0"),
        ({"date_from": "19th century"}, "filters.date_from"),
        ({"within": 0}, "filters.within"),
        ({"colour": "red"}, "filters.colour"),
    ],
)
def test_invalid_filters_are_422(client: TestClient, filters: dict[str, Any], message: str) -> None:
    response = client.post("/api/search", json={"query": "flood", "filters": filters})
    assert response.status_code == 422
    assert message in response.json()["error"]


def test_unusable_filters_are_400(client: TestClient, neo4j_driver: Any) -> None:
    item = scalar(neo4j_driver, "MATCH (i:item {chunkSeqId: 0}) RETURN i.naId LIMIT 1")
    for filters, message in (
        ({"date_from": "1960", "date_to": "1950"}, "is after"),
        ({"date_from": "1950-13"}, "no month 13"),
        ({"within": 123}, "no record with naId 123"),
        ({"within": item}, "holds no records"),
    ):
        response = client.post("/api/search", json={"query": "flood", "filters": filters})
        assert response.status_code == 400, filters
        assert message in response.json()["error"]


def test_empty_query_is_400_with_the_reason(client: TestClient) -> None:
    response = client.post("/api/search", json={"query": "  ?! "})
    assert response.status_code == 400
    assert response.json()["error"].startswith("the query is empty")
    assert client.post("/api/ask", json={"question": "..."}).status_code == 400


def test_a_100_kb_query_is_answered(client: TestClient) -> None:
    text = ("Correspondence concerning flood control in Raven Landing, 1948. " * 1600)[:100_000]
    body = search(client, text, k=3)
    assert len(body["hits"]) == 3
    answered = ask(client, text, mode="local")
    assert answered["records"]


def test_oversized_requests_are_refused_without_echo(client: TestClient) -> None:
    long_query = "x" * 300_000
    response = client.post("/api/search", json={"query": long_query})
    assert response.status_code == 422
    assert long_query not in response.text and "at most 200000" in response.json()["error"]
    huge = client.post("/api/search", json={"query": "y" * 1_100_000})
    assert huge.status_code == 413
    assert "too large" in huge.json()["error"]


def test_bad_json_is_422(client: TestClient) -> None:
    response = client.post(
        "/api/ask", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["error"].startswith("invalid request")


# --- ask --------------------------------------------------------------------------------------


def test_ask_local_question(client: TestClient, neo4j_driver: Any) -> None:
    fact = a_series_fact(neo4j_driver)
    question = f"Who created the {fact['kind']} concerning {fact['topic']} in {fact['place']}?"
    body = ask(client, question, mode="local")
    assert fact["creator"] in body["answer"]
    assert body["request_type"] == "question" and body["mode"] == "local"
    assert body["classification_method"] == "rule-based"
    assert not body["refused"] and body["answer"]
    assert body["records"]
    nodes = {node["id"]: node for node in body["provenance"]["nodes"]}
    assert any(node["role"] == "answer" for node in nodes.values())
    for edge in body["provenance"]["relationships"]:
        assert edge["source"] in nodes and edge["target"] in nodes
    for node in nodes.values():
        if node.get("naId") is not None:
            assert node["catalog_url"].endswith(f"/id/{node['naId']}")


def test_ask_show_records(client: TestClient) -> None:
    body = ask(client, "Show me records about cartography", filters={"levels": ["fileUnit"]})
    assert body["request_type"] == "show_records" and body["answer"] is None
    assert body["records"] and all(r["type"] == "fileUnit" for r in body["records"])
    assert body["filters"] == {"levels": ["fileUnit"]}


def test_ask_global_main_themes(client: TestClient) -> None:
    body = ask(client, "What are the main themes of these archival records?")
    assert body["mode"] == "global" and body["overview"] is True
    assert not body["refused"]
    assert len(body["communities"]) >= 3
    cards = {card["id"]: card for card in body["community_reports"]}
    assert list(cards) == body["communities"]
    for card in cards.values():
        assert card["title"] and card["summary"] and card["title"] in body["answer"]
    community_nodes = [n for n in body["provenance"]["nodes"] if n["id"].startswith("community:")]
    assert {n["communityId"] for n in community_nodes} == set(body["communities"])
    assert any(e["type"] == "IN_COMMUNITY" for e in body["provenance"]["relationships"])


def test_ask_global_with_a_level_and_filters(client: TestClient) -> None:
    body = ask(
        client,
        "What are the main themes of these records?",
        mode="global",
        level=0,
        filters={"levels": ["series"]},
    )
    assert body["level"] == 0 and not body["refused"]
    assert body["communities"]


def test_ask_unanswerable_is_refused(client: TestClient) -> None:
    body = ask(client, "What did the senator say about cryptocurrency taxation?", mode="local")
    assert body["refused"] and body["answer"] == REFUSAL
    themes = ask(client, "Summarize the quantum chromodynamics experiments", mode="global")
    assert themes["refused"] and themes["answer"] == REFUSAL


def test_ask_rejects_unknown_modes(client: TestClient) -> None:
    response = client.post("/api/ask", json={"question": "flood", "mode": "everything"})
    assert response.status_code == 422 and "mode" in response.json()["error"]


# --- records ----------------------------------------------------------------------------------


def test_record_with_hierarchy_children_and_authorities(
    client: TestClient, neo4j_driver: Any
) -> None:
    series = scalar(
        neo4j_driver,
        "MATCH (s:series {chunkSeqId: 0})-[:Includes]->() WHERE NOT s.isStub "
        "AND (s)<-[:creator]-() RETURN s.naId ORDER BY s.naId LIMIT 1",
    )
    body = client.get(f"/api/records/{series}").json()
    assert body["naId"] == series and body["type"] == "series"
    assert body["hierarchy"][-1]["naId"] == series and len(body["hierarchy"]) >= 2
    assert body["child_count"] >= len(body["children"]) > 0
    assert any(a["relationship"] == "creator" for a in body["authorities"])
    assert "textEmbedding" not in body["properties"] and body["properties"]["naId"] == series
    assert CATALOG.match(body["catalog_url"])


def test_authority_record_lists_described_records(client: TestClient) -> None:
    body = client.get(f"/api/records/{HOSTILE_PERSON}").json()
    assert body["type"] == "person" and body["title"] == HOSTILE_HEADING
    assert [r["naId"] for r in body["described_records"]] == [HOSTILE_SERIES]
    assert body["described_records"][0]["relationship"] == "creator"


def test_missing_and_invalid_record_ids(client: TestClient) -> None:
    missing = client.get("/api/records/424242")
    assert missing.status_code == 404 and "424242" in missing.json()["error"]
    assert client.get("/api/records/0").status_code == 422
    assert client.get("/api/records/abc").status_code == 422


def test_html_in_catalog_data_is_returned_as_data(client: TestClient) -> None:
    """The API hands catalog text over verbatim as JSON strings (the page shows it as text:
    tests/browser); nothing is interpreted or dropped on the way."""
    hits = search(client, "Zeppelin Mooring Records airship", k=5)["hits"]
    hostile = next(hit for hit in hits if hit["naId"] == HOSTILE_SERIES)
    assert hostile["title"] == HOSTILE_TITLE
    assert hostile["authorities"][0]["heading"] == HOSTILE_HEADING
    response = client.get(f"/api/records/{HOSTILE_FILE_UNIT}")
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["hierarchy"][0]["title"] == HOSTILE_TITLE
    series = client.get(f"/api/records/{HOSTILE_SERIES}").json()
    # The body text, without the search header its chunks carry.
    assert series["text"].startswith("This series consists of <em>zeppelin</em>")
    assert "<script>alert('catalog text')</script>" in series["text"]
