"""The evaluation's pass rule and its runs against the graph (nara_kg.retrieval.evaluation),
shared by the retrieval_evaluation asset, `nara-kg eval` and the benchmark: search and ask are
replaced here, so what is tested is what the runs ask and what they make of the replies."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from nara_kg.retrieval import answer_runs, ask, search
from nara_kg.retrieval.evaluation import (
    MIN_HIT_AT_5,
    MIN_MRR_AT_10,
    EvaluationReport,
    GivenAnswer,
    Question,
    answer_report,
    evaluate_local,
    global_results,
    meets_thresholds,
    search_retriever,
)


def _report(n: int, hit_at_5: float, mrr_at_10: float) -> EvaluationReport:
    return EvaluationReport(n, 0.0, hit_at_5, mrr_at_10, 0.0, 0.0)


def test_the_pass_rule_needs_both_minimums_and_a_measured_question() -> None:
    assert meets_thresholds(_report(3, MIN_HIT_AT_5, MIN_MRR_AT_10))
    assert not meets_thresholds(_report(3, MIN_HIT_AT_5 - 0.01, 1.0))
    assert not meets_thresholds(_report(3, 1.0, MIN_MRR_AT_10 - 0.01))
    assert not meets_thresholds(_report(0, 1.0, 1.0))


def test_the_retriever_asks_local_search_for_ten_records(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[dict[str, Any]] = []

    def local_search(driver: Any, database: str, encode: Any, query: str, **kw: Any) -> Any:
        asked.append({"database": database, "query": query, **kw})
        hits = [SimpleNamespace(naId=na_id) for na_id in (4, 2, 9)]
        return SimpleNamespace(hits=hits, latency_ms=12.5)

    monkeypatch.setattr(search, "local_search", local_search)
    retrieve = search_retriever("driver", "db", lambda texts: texts, entity_path=False)
    assert retrieve("flood control") == ([4, 2, 9], 12.5)
    assert asked == [{"database": "db", "query": "flood control", "k": 10, "entity_path": False}]
    report = evaluate_local([Question("q", "flood control", (2,))], search_retriever("d", "db", id))
    assert report.per_question[0]["rank"] == 2 and asked[-1]["entity_path"] is True


def _response(refused: bool, communities: tuple[str, ...]) -> Any:
    sources = SimpleNamespace(communities=communities) if communities else None
    return SimpleNamespace(refused=refused, global_sources=sources, latency_ms=7.0)


def test_global_questions_are_asked_in_global_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[str, str]] = []
    replies = {"themes?": _response(False, ("c1", "c2")), "wars?": _response(True, ())}

    def fake_ask(driver: Any, db: Any, embedder: Any, llm: Any, cache: Any, q: str, **kw: Any):
        asked.append((q, kw["mode"]))
        assert llm == "llm" and cache is not None
        return replies[q]

    monkeypatch.setattr(ask, "ask", fake_ask)
    questions = [
        Question("l", "local one", (1,)),
        Question("g1", "themes?", (), mode="global"),
        Question("g2", "wars?", (), mode="global"),
    ]
    rows = global_results(questions, "d", "db", None, lambda: "llm", tmp_path / "cache.sqlite")
    assert asked == [("themes?", "global"), ("wars?", "global")]
    assert rows == [
        {
            "id": "g1",
            "question": "themes?",
            "answered": True,
            "communities": "c1, c2",
            "latency_ms": 7.0,
        },
        {"id": "g2", "question": "wars?", "answered": False, "communities": "", "latency_ms": 7.0},
    ]


def _no_llm() -> Any:
    raise AssertionError("the model was asked for though no question needs it")


def test_nothing_to_ask_never_builds_the_model(tmp_path: Path) -> None:
    local = [Question("l", "local one", (1,))]
    cache = tmp_path / "cache.sqlite"
    assert global_results(local, "d", "db", None, _no_llm, cache) == []
    assert answer_report(local, "d", "db", None, _no_llm, cache) is None
    assert not cache.exists()


def test_labelled_answers_are_judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def ask_answerer(driver: Any, database: str, embedder: Any, llm: Any, cache: Any) -> Any:
        assert llm == "llm"
        return lambda q: GivenAnswer(text="It was 1942.", refused=False, latency_ms=3.0)

    monkeypatch.setattr(answer_runs, "ask_answerer", ask_answerer)
    questions = [
        Question("y", "which year?", (), expected_facts=(("1942",),)),
        Question("n", "who won?", (), answerable=False),
    ]
    report = answer_report(questions, "d", "db", None, lambda: "llm", tmp_path / "c.sqlite")
    assert report is not None
    assert report.n == 2 and report.failed_ids == ["n"] and report.accuracy == 0.5
