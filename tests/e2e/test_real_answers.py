"""Answers on the real records (../shared, never committed), default extractive backend: each
failure issue 37 names, and answer accuracy over tests/data/real_record_answers.jsonl."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nara_kg.embedding.encoder import Embedder
from nara_kg.generation.llm import ExtractiveLLM
from nara_kg.retrieval.ask import ask
from nara_kg.retrieval.evaluation import GivenAnswer, evaluate_answers, load_questions
from nara_kg.retrieval.prompts import REFUSAL
from nara_kg.settings import PROJECT_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

REAL_EXPORT = (PROJECT_ROOT.parent / "shared" / "data" / "nara" / "export").resolve()
ANSWERS = Path(__file__).resolve().parents[1] / "data" / "real_record_answers.jsonl"

if not REAL_EXPORT.is_dir():
    pytest.skip(f"no real records at {REAL_EXPORT}", allow_module_level=True)


def real_ids() -> set[int]:
    ids: set[int] = set()
    for path in sorted(REAL_EXPORT.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                ids.add(int(json.loads(line)["record"]["naId"]))
    return ids


def holds_exactly(driver: Any, na_ids: set[int]) -> bool:
    records, _, _ = driver.execute_query(
        "MATCH (c:Chunk {chunkSeqId: 0}) WHERE NOT c.isStub "
        "RETURN collect(c.naId) AS ids, COUNT { (m:Community) WHERE m.report IS NOT NULL } AS n"
    )
    return set(records[0]["ids"]) == na_ids and records[0]["n"] > 0


@pytest.fixture(scope="module")
def real_graph(graph_builder: Any, neo4j_driver: Any, tmp_path_factory: Any) -> None:
    ids = real_ids()
    if not holds_exactly(neo4j_driver, ids):
        graph_builder(REAL_EXPORT, tmp_path_factory.mktemp("real-answers"), wipe_first=True)
    assert holds_exactly(neo4j_driver, ids)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


@pytest.fixture
def answer(real_graph: None, neo4j_driver: Any, embedder: Embedder) -> Any:
    def run(question: str, mode: str = "auto") -> dict[str, Any]:
        return ask(
            neo4j_driver,
            "neo4j",
            embedder,
            ExtractiveLLM(),
            None,
            question,
            mode=mode,  # type: ignore[arg-type]
        ).to_dict()

    return run


def cited(body: dict[str, Any]) -> set[int]:
    return {c["na_id"] for c in body["answer_citations"]}


def test_title_echo_the_photographer_not_the_title(answer: Any) -> None:
    body = answer("Who photographed the Rohwer Relocation Center?")
    assert "Fred Yamaguchi" in body["answer"] and body["answer"].endswith("[1]")
    assert body["answer"] != "Rohwer Relocation Center [1]"
    assert cited(body) == {535997}


def test_header_leak_no_search_header_in_an_answer(answer: Any) -> None:
    body = answer("What topics do the Morgenthau diaries cover?")
    assert not body["refused"]
    assert "Part of:" not in body["answer"] and "Title:" not in body["answer"]
    assert cited(body) == {589213}


def test_the_answer_in_another_chunk_of_the_rank_one_record(answer: Any) -> None:
    body = answer("How many diary volumes did Morgenthau keep?")
    assert not body["refused"] and "850" in body["answer"]
    assert cited(body) == {589213}


def test_a_pasted_naid_is_answered_deterministically(answer: Any) -> None:
    for question in ("28277406", "What is naId 28277406?"):
        body = answer(question)
        assert body["answer"].startswith(
            "naId 28277406 is Volume 696, January 22 \u2013 January 26, 1944, a file unit in "
            "Diaries of Henry Morgenthau, Jr."
        ), body["answer"]
        assert cited(body) == {28277406}


def test_graph_facts_creator_parent_series_and_file_units(answer: Any) -> None:
    creator = answer("Who created the Solicitor's Opinions and Memoranda series?")
    assert "War Relocation Authority" in creator["answer"] and cited(creator) == {5624687}
    series = answer("Which series does Morgenthau diary volume 512 belong to?")
    assert "Diaries of Henry Morgenthau, Jr." in series["answer"]
    assert cited(series) == {28276972}
    count = answer("How many file units are in the Diaries of Henry Morgenthau, Jr. series?")
    assert "879 file units" in count["answer"] and cited(count) == {589213}


def test_inherited_dates_are_said_to_be_inherited(answer: Any) -> None:
    # A file unit with no catalog dates whose title states none either.
    body = answer("What are the dates of the UNGA Speech - Big Type file?")
    assert "1994 \u2013 1998 (dates of its series, Antony Blinken's Files)" in body["answer"]
    assert cited(body) == {23903198}


def test_misspelt_names_still_find_their_answer(answer: Any) -> None:
    body = answer("Who photographed the Rowher Relocation Center?")
    assert "Fred Yamaguchi" in body["answer"] and cited(body) == {535997}


def test_an_unanswerable_question_is_refused_naming_the_closest_records(answer: Any) -> None:
    body = answer("Who photographed the Jerome Relocation Center?")
    assert body["refused"] and body["answer"].startswith(REFUSAL)
    assert "The closest records:" in body["answer"] and body["answer_citations"] == []


def test_answer_accuracy_on_the_labelled_answer_set(
    real_graph: None, neo4j_driver: Any, embedder: Embedder
) -> None:
    def given(question: Any) -> GivenAnswer:
        response = ask(
            neo4j_driver,
            "neo4j",
            embedder,
            ExtractiveLLM(),
            None,
            question.question,
            mode=question.mode,
        )
        return GivenAnswer(response.answer, response.refused, response.latency_ms)

    report = evaluate_answers(load_questions(ANSWERS), given)
    assert report.n >= 50
    assert report.refusal_rate_unanswerable == 1.0, report.failed_ids
    assert report.accuracy >= 0.85, report.failed_ids
