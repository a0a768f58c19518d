"""The chat page as a reader uses it: questions as bubbles, records with their catalog links,
hierarchy and authorities, global answers citing communities, the refusal, filters, and the
knowledge network drawn from each answer's provenance."""

from __future__ import annotations

import re
from typing import Any

import pytest

from nara_kg.retrieval.prompts import REFUSAL
from tests.api.graph_fixture import (
    HOSTILE_FILE_TITLE,
    HOSTILE_HEADING,
    HOSTILE_SERIES,
    HOSTILE_TITLE,
    a_series_fact,
)

pytestmark = pytest.mark.integration

CATALOG = re.compile(r"^https://catalog\.archives\.gov/id/(\d+)$")


def ask(page: Any, question: str, mode: str = "auto") -> tuple[dict[str, Any], Any]:
    """Ask through the form; the API's JSON reply and the answer bubble it produced."""
    answers = page.locator("#conversation .bubble.answer:not(.pending), #conversation .error")
    before = answers.count()
    page.select_option("#mode", mode)
    with page.expect_response(lambda r: r.url.endswith("/api/ask")) as reply:
        page.fill("#question", question)
        page.click("#ask-button")
    body = reply.value.json()
    assert reply.value.status == 200, body
    bubble = answers.nth(before)
    bubble.wait_for()
    user = page.locator("#conversation .bubble.user").last
    assert user.text_content() == question
    return body, bubble


def catalog_id(href: str | None) -> str:
    match = CATALOG.match(href or "")
    assert match, href
    return match.group(1)


def drawn_node_ids(page: Any) -> list[str]:
    ids: list[str] = page.evaluate("() => window.naraNetwork.cy.nodes().map(n => n.id())")
    return sorted(ids)


def assert_network_drawn(page: Any, body: dict[str, Any]) -> None:
    expected = sorted(node["id"] for node in body["provenance"]["nodes"])
    graph = page.locator("#graph")
    assert graph.get_attribute("data-nodes") == str(len(expected))
    assert drawn_node_ids(page) == expected
    assert graph.locator("canvas").count() > 0


def assert_records_shown(bubble: Any, records: list[dict[str, Any]]) -> None:
    cards = bubble.locator("li.record")
    assert cards.count() == len(records)
    for index, record in enumerate(records):
        card = cards.nth(index)
        title = card.locator("a.record-title")
        assert catalog_id(title.get_attribute("href")) == str(record["naId"])
        assert title.text_content() == (record["title"] or f"Record {record['naId']}")
        assert card.locator(".record-type").text_content()
        # The hierarchy breadcrumb: every ancestor, root first, each a catalog link.
        crumbs = card.locator(".breadcrumb-item")
        ancestors = record["hierarchy"][:-1]
        assert crumbs.count() == len(ancestors)
        for position, entry in enumerate(ancestors):
            crumb = crumbs.nth(position)
            assert crumb.get_attribute("data-na-id") == str(entry["naId"])
            link = crumb.locator("a.breadcrumb-link")
            assert catalog_id(link.get_attribute("href")) == str(entry["naId"])
        links = card.locator("a.authority-link")
        assert links.count() == len(record["authorities"])
        for position, authority in enumerate(record["authorities"]):
            assert catalog_id(links.nth(position).get_attribute("href")) == str(authority["naId"])
    # Every link of an answer leads to the catalog, but the scans online (the record's own
    # links, tested in test_cards_page.py) and the citations (to a card of the bubble).
    links = bubble.locator("a:not(.online-link):not(.citation)")
    for href in links.evaluate_all("links => links.map(a => a.href)"):
        catalog_id(href)


def test_local_question(page: Any, neo4j_driver: Any) -> None:
    fact = a_series_fact(neo4j_driver)
    question = f"Who created the {fact['kind']} concerning {fact['topic']} in {fact['place']}?"
    body, bubble = ask(page, question)
    assert bubble.get_attribute("data-request-type") == "question"
    assert bubble.get_attribute("data-mode") == "local"
    assert bubble.locator(".badge.classification").text_content() == "question"
    answer = bubble.locator(".answer-text")
    assert answer.text_content() == body["answer"]
    assert fact["creator"].split()[-1] in body["answer"]
    assert "refusal" not in (answer.get_attribute("class") or "")
    assert_records_shown(bubble, body["records"])
    assert any(len(r["hierarchy"]) > 1 for r in body["records"])
    assert bubble.locator(".breadcrumb-item").count() > 0
    assert bubble.locator("a.authority-link").count() > 0
    assert_network_drawn(page, body)

    # Details on click: a real click on the drawn node of a record the answer used.
    used = next(n for n in body["provenance"]["nodes"] if n["role"] == "answer")
    position = page.evaluate(
        "id => window.naraNetwork.cy.getElementById(id).renderedPosition()", used["id"]
    )
    box = page.locator("#graph").bounding_box()
    page.mouse.click(box["x"] + position["x"], box["y"] + position["y"])
    details = page.locator("#details")
    details.locator("h3").get_by_text(used["title"]).wait_for()
    details.get_by_text("used by the answer").wait_for()
    details.locator("dt", has_text="Hierarchy").wait_for()  # fetched from /api/records


def test_show_records(page: Any, neo4j_driver: Any) -> None:
    fact = a_series_fact(neo4j_driver)
    body, bubble = ask(page, f"Show me records about {fact['topic']}")
    assert body["request_type"] == "show_records"
    assert bubble.get_attribute("data-request-type") == "show_records"
    assert bubble.locator(".answer-text").text_content() == (
        f"{len(body['records'])} records for your request:"
    )
    assert_records_shown(bubble, body["records"])
    assert_network_drawn(page, body)


def test_global_main_themes(page: Any) -> None:
    body, bubble = ask(page, "What are the main themes of these archival records?")
    assert bubble.get_attribute("data-mode") == "global"
    assert bubble.locator(".badge.classification").text_content() == "question"
    assert not body["refused"]
    assert bubble.locator(".answer-text").text_content() == body["answer"]
    cards = bubble.locator("li.community")
    assert cards.count() == len(body["community_reports"]) >= 3
    for index, report in enumerate(body["community_reports"]):
        card = cards.nth(index)
        assert card.get_attribute("data-community-id") == report["id"]
        assert card.locator(".community-title").text_content() == report["title"]
        assert card.locator(".community-summary").text_content() == report["summary"]
    assert_network_drawn(page, body)
    communities = [i for i in drawn_node_ids(page) if i.startswith("community:")]
    assert sorted(communities) == sorted(f"community:{c}" for c in body["communities"])
    assert page.locator("#legend li[data-category='community']").count() == 1


def test_unanswerable_question_is_refused(page: Any) -> None:
    body, bubble = ask(page, "What did the senator say about cryptocurrency taxation?", "local")
    assert body["refused"]
    assert bubble.get_attribute("data-refused") == "true"
    assert bubble.locator(".answer-text.refusal").text_content().startswith(REFUSAL)


def test_filters_restrict_every_record_shown(page: Any, neo4j_driver: Any) -> None:
    fact = a_series_fact(neo4j_driver)
    page.click("#filters summary")
    page.check("input[name='levels'][value='series']")
    assert page.locator("#filter-summary").text_content() == "(1 active)"
    body, bubble = ask(page, f"Show me records about {fact['topic']}")
    assert body["filters"] == {"levels": ["series"]}
    types = bubble.locator("li.record").evaluate_all("cards => cards.map(c => c.dataset.type)")
    assert types and set(types) == {"series"}
    assert bubble.locator(".applied-filters").text_content() == "Filters: levels = series"

    page.click("#clear-filters")
    page.fill("#date-from", "1915")
    page.fill("#date-to", "1925")
    body, bubble = ask(page, f"Show me records about {fact['topic']}")
    spans = bubble.locator("li.record").evaluate_all(
        "cards => cards.map(c => [c.dataset.dateStart, c.dataset.dateEnd])"
    )
    assert spans and len(spans) == len(body["records"])
    for start, end in spans:
        assert start <= "1925-12-31" and end >= "1915-01-01", (start, end)


def test_search_within_from_the_breadcrumb(page: Any, neo4j_driver: Any) -> None:
    fact = a_series_fact(neo4j_driver)
    _, bubble = ask(page, f"Show me records about {fact['topic']}")
    crumb = bubble.locator(".breadcrumb-item[data-level='series']").first
    series = crumb.get_attribute("data-na-id")
    crumb.locator(".within-button").click()
    assert page.locator("#within").input_value() == series
    assert page.locator("#within-title").text_content().startswith("within")
    body, bubble = ask(page, "Show me the minutes and letters")
    assert body["filters"] == {"within": int(series)}
    assert body["records"]
    for record in body["records"]:
        assert int(series) in [entry["naId"] for entry in record["hierarchy"][:-1]]
    assert_records_shown(bubble, body["records"])


def test_catalog_text_is_shown_as_text_never_run(page: Any) -> None:
    body, bubble = ask(page, "Show me the Zeppelin Mooring Records and the mooring mast files")
    naids = [record["naId"] for record in body["records"]]
    assert HOSTILE_SERIES in naids
    titles = bubble.locator("a.record-title").all_text_contents()
    assert HOSTILE_TITLE in titles and HOSTILE_FILE_TITLE in titles
    assert HOSTILE_HEADING in bubble.locator("a.authority-link").all_text_contents()
    assert HOSTILE_TITLE in bubble.locator("a.breadcrumb-link").all_text_contents()
    # Nothing of the catalog text became markup, and none of its scripts ran.
    conversation = page.locator("#conversation")
    for tag in ("script", "img", "b", "i", "em"):
        assert conversation.locator(tag).count() == 0, tag
    assert page.evaluate("() => window.__pwned") is None
    assert_records_shown(bubble, body["records"])
    # The graph's details panel, too, shows the title as text.
    page.evaluate("id => window.naraNetwork.showDetails(id)", f"record:{HOSTILE_SERIES}")
    page.locator("#details h3").get_by_text(HOSTILE_TITLE).wait_for()
    assert page.locator("#details script, #details img").count() == 0
    assert page.evaluate("() => window.__pwned") is None


def test_page_loads_only_its_own_files(page: Any, base_url: str) -> None:
    sources = page.evaluate(
        "() => [...document.querySelectorAll('script[src], link[href]')].map(e => e.src || e.href)"
    )
    assert sources and all(source.startswith(base_url + "/static/") for source in sources)
    assert page.evaluate("() => typeof window.cytoscape") == "function"
    assert (
        "script-src 'self'" in (page.request.get(base_url + "/").headers["content-security-policy"])
    )
