"""Issue 37 on the chat page: each card's excerpt, scans online, restrictions and holding
archive; the answer's citation markers linking to the card marked as its source; a follow-up
question sent with the conversation; example questions from the graph; the status line; and
/docs "Try it out" on /api/ask."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.api.test_cards import a_file_unit_with_facts
from tests.browser.test_chat_page import ask

pytestmark = pytest.mark.integration


def test_cards_show_excerpt_scans_restrictions_and_archive(page: Any, neo4j_driver: Any) -> None:
    unit = a_file_unit_with_facts(neo4j_driver)
    body, bubble = ask(page, f"Show me {unit['title']}", "local")
    position = [r["naId"] for r in body["records"]].index(unit["naId"])
    record = body["records"][position]
    card = bubble.locator("li.record").nth(position)
    assert card.get_attribute("data-na-id") == str(unit["naId"])

    online = card.locator(".record-online")
    formats = " / ".join(f"{n} {f}" for f, n in record["card"]["online_formats"].items())
    assert online.locator(".online-summary").text_content() == f"online: {formats}"
    links = online.locator("a.online-link")
    assert links.count() == len(record["card"]["online"]) > 0
    hrefs = links.evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert hrefs == unit["urls"][: links.count()]
    assert links.first.get_attribute("rel") == "noopener noreferrer"

    access = card.locator(".restriction[data-kind='access']")
    assert access.text_content() == f"Access: {unit['access']}"
    if unit["use"]:
        assert (
            card.locator(".restriction[data-kind='use']")
            .text_content()
            .startswith(f"Use: {unit['use']}")
        )
    assert card.locator(".record-holding").text_content() == (
        f"Held by: {record['card']['holding_archive']}"
    )
    # The excerpt of each card is the API's, as text.
    for index, each in enumerate(body["records"]):
        excerpt = bubble.locator("li.record").nth(index).locator(".record-excerpt")
        if each["excerpt"]:
            assert excerpt.text_content() == each["excerpt"]
        else:
            assert excerpt.count() == 0
    assert bubble.locator(".record-excerpt").count() > 0


def test_citation_markers_link_to_the_source_card(page: Any, neo4j_driver: Any) -> None:
    from tests.api.graph_fixture import a_series_fact

    fact = a_series_fact(neo4j_driver)
    question = f"Who created the {fact['kind']} concerning {fact['topic']} in {fact['place']}?"

    # The page against the ask response's citation contract: the answer's sentence carries
    # the marker [1] and answer_citations names the record it came from (the second card, so
    # the link is not to the top of the list).
    def cite(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        if not body.get("answer_citations"):
            cited = body["records"][1]
            body["answer"] = f"{body['answer']} [1] A second sentence. [2]"
            body["answer_citations"] = [
                {"marker": 1, "na_id": cited["naId"], "title": cited["title"], "sentence": "x"},
                {"marker": 2, "na_id": cited["naId"], "title": cited["title"], "sentence": "y"},
            ]
        route.fulfill(response=response, body=json.dumps(body))

    page.route("**/api/ask", cite)
    body, bubble = ask(page, question, "local")
    citations = body["answer_citations"]
    markers = bubble.locator(".answer-text a.citation")
    assert markers.count() == len(citations)
    assert bubble.locator(".answer-text").text_content() == body["answer"]
    for index, citation in enumerate(citations):
        marker = markers.nth(index)
        assert marker.text_content() == f"[{citation['marker']}]"
        assert marker.get_attribute("data-na-id") == str(citation["na_id"])
        target = marker.get_attribute("href")
        assert target and target.startswith("#")
        card = bubble.locator(target)
        assert card.get_attribute("data-na-id") == str(citation["na_id"])
        assert "source" in (card.get_attribute("class") or "").split()
    cited = {c["na_id"] for c in citations}
    for na_id in cited:
        card = bubble.locator(f"li.record[data-na-id='{na_id}']")
        wanted = [f"[{c['marker']}]" for c in citations if c["na_id"] == na_id]
        assert card.locator(".source-badge").text_content() == "source " + " ".join(wanted)
    # Cards not cited carry no badge.
    uncited = bubble.locator("li.record:not(.source)")
    assert uncited.count() == len(body["records"]) - len(cited)
    assert uncited.locator(".source-badge").count() == 0
    # Following a marker flashes its card and highlights its node.
    markers.first.click()
    first = bubble.locator(markers.first.get_attribute("href") or "")
    assert "flash" in (first.get_attribute("class") or "")


def test_a_follow_up_question_is_sent_with_the_conversation(page: Any, neo4j_driver: Any) -> None:
    from tests.api.graph_fixture import a_series_fact

    fact = a_series_fact(neo4j_driver)
    first_question = f"What was recorded about {fact['topic']} in {fact['place']}?"
    first, _ = ask(page, first_question, "local")
    with page.expect_request(lambda r: r.url.endswith("/api/ask")) as sent:
        body, bubble = ask(page, "and in 1930?", "local")
    history = sent.value.post_data_json["history"]
    assert [turn["question"] for turn in history] == [first_question]
    # The records the answer cited first, then those it found.
    cited = [c["na_id"] for c in first.get("answer_citations") or []]
    found = [r["naId"] for r in first["records"]]
    assert history[0]["na_ids"] == list(dict.fromkeys(cited + found))
    assert body["follow_up"]["resolved_by"] == "dates"
    note = bubble.locator(".follow-up-note")
    assert body["follow_up"]["question"] in note.text_content()
    assert body["filters"]["date_from"] == "1930"

    # A new conversation forgets the turns.
    page.click("#new-conversation")
    with page.expect_request(lambda r: r.url.endswith("/api/ask")) as sent:
        body, bubble = ask(page, first_question, "local")
    assert "history" not in sent.value.post_data_json
    assert bubble.locator(".follow-up-note").count() == 0


def test_first_contact_examples_and_status(page: Any, base_url: str) -> None:
    examples = page.request.get(base_url + "/api/examples").json()["questions"]
    buttons = page.locator("#examples button.example")
    buttons.first.wait_for()
    assert buttons.all_text_contents() == examples
    status = page.locator("#status").text_content() or ""
    assert "extractive:" not in status and "records" in status
    assert "no language model" in status
    with page.expect_response(lambda r: r.url.endswith("/api/ask")) as reply:
        buttons.first.click()
    assert reply.value.status == 200
    assert page.locator("#conversation .bubble.user").last.text_content() == examples[0]


def test_docs_try_it_out_on_ask_returns_200(page: Any, base_url: str) -> None:
    page.goto(base_url + "/docs")
    operation = page.locator("#operations-questions-ask_api_ask_post")
    operation.locator(".opblock-summary").click()
    operation.get_by_role("button", name="Try it out").click()
    sent_body = operation.locator("textarea.body-param__text").input_value()
    assert "99" not in json.loads(sent_body).get("filters", {}).get("date_from", "")
    with page.expect_response(lambda r: r.url.endswith("/api/ask")) as reply:
        operation.get_by_role("button", name="Execute").click()
    assert reply.value.status == 200, reply.value.text()
    status = operation.locator(".live-responses-table tbody .response-col_status").first
    status.wait_for()
    assert status.text_content().strip().startswith("200")
