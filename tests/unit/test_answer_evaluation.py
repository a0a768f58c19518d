"""Answer accuracy (nara_kg.retrieval.evaluation): when an answer counts as answered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nara_kg.retrieval.evaluation import (
    GivenAnswer,
    Question,
    evaluate_answers,
    judge_answer,
    load_questions,
    normalize_text,
    states_fact,
)


def _question(facts: tuple[tuple[str, ...], ...] = (), **kw: object) -> Question:
    return Question(id="q", question="?", expected_naids=(), expected_facts=facts, **kw)  # type: ignore[arg-type]


def test_facts_compare_case_and_punctuation_blind_as_whole_words() -> None:
    assert (
        normalize_text("Volume 740, June 6 \u2013 June 7,  1944") == "volume 740 june 6 june 7 1944"
    )
    assert states_fact("The photographer was FRED YAMAGUCHI.", ["Fred Yamaguchi"])
    assert states_fact("about 110000 people", ["110,000", "110000"])
    assert states_fact("Japanese American Citizens League", ["Japanese American Citizens' League"])
    assert not states_fact("entry P 30", ["P 3"])
    assert not states_fact("Volume 7400", ["740"])
    assert not states_fact("anything", ["  "])


def test_answered_needs_every_fact_and_no_refusal() -> None:
    both = _question((("May 1942",), ("October 1945", "Oct. 1945")))
    assert judge_answer(both, "Dated May 1942 - Oct. 1945.", refused=False).answered
    half = judge_answer(both, "Dated May 1942.", refused=False)
    assert not half.answered and half.missing == ("October 1945",)
    # A refusal that happens to quote the facts is still a refusal.
    assert not judge_answer(both, "May 1942 October 1945", refused=True).answered
    assert not judge_answer(both, None, refused=False).answered


def test_an_unanswerable_question_is_answered_by_refusing() -> None:
    none = _question(answerable=False)
    assert judge_answer(none, "I cannot answer that.", refused=True).answered
    assert judge_answer(none, "", refused=False).answered
    assert not judge_answer(none, "Apollo 11 landed in 1969.", refused=False).answered


def test_report_gives_accuracy_by_kind_refusal_rates_and_readable_failures(
    tmp_path: Path,
) -> None:
    path = tmp_path / "answers.jsonl"
    rows = [
        {
            "id": "w1",
            "question": "Who?",
            "kind": "who",
            "expected_facts": ["Fred Yamaguchi"],
            "expected_naids": [1],
            "answerable": True,
            "mode": "local",
        },
        {
            "id": "w2",
            "question": "Who else?",
            "kind": "who",
            "expected_facts": [["Lange", "D. Lange"]],
            "expected_naids": [2],
            "answerable": True,
            "mode": "auto",
        },
        {
            "id": "n1",
            "question": "Moon?",
            "kind": "unanswerable",
            "expected_facts": [],
            "expected_naids": [],
            "answerable": False,
            "mode": "auto",
        },
        {"id": "r1", "question": "retrieval only", "expected_naids": [3]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    questions = load_questions(path)
    assert [q.has_answer_label for q in questions] == [True, True, True, False]
    replies = {
        "Who?": GivenAnswer(
            "The photographer was Fred Yamaguchi.", False, 12.0, (1,), "extractive"
        ),
        "Who else?": GivenAnswer("Rohwer Relocation Center", False, 20.0, (2,)),
        "Moon?": GivenAnswer(None, True, 5.0),
    }
    asked: list[str] = []

    def answer(question: Question) -> GivenAnswer:
        asked.append(question.question)
        return replies[question.question]

    report = evaluate_answers(questions, answer)
    assert asked == ["Who?", "Who else?", "Moon?"]
    assert report.n == 3
    assert report.accuracy == pytest.approx(2 / 3)
    assert report.refusal_rate_unanswerable == 1.0
    assert report.refusal_rate_answerable == 0.0
    assert report.by_kind == {
        "unanswerable": {"n": 1, "answered": 1, "accuracy": 1.0},
        "who": {"n": 2, "answered": 1, "accuracy": 0.5},
    }
    assert report.failed_ids == ["w2"]
    failed = report.to_dict()["per_question"][1]
    assert failed["missing"] == ["Lange"] and failed["answer"] == "Rohwer Relocation Center"
    assert report.to_dict()["failed"] == ["w2"]
    figures = report.figures()
    assert figures["answer_accuracy"] == pytest.approx(0.6667)
    assert figures["answer_accuracy_who"] == 0.5
    assert figures["answer_refusal_rate_unanswerable"] == 1.0


def test_bad_answer_labels_are_errors_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"id": "a", "question": "?", "expected_facts": [""], "expected_naids": []})
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"bad\.jsonl:1"):
        load_questions(path)
    path.write_text(json.dumps({"id": "a", "question": "?", "answerable": "no"}) + "\n")
    with pytest.raises(ValueError, match="answerable"):
        load_questions(path)
