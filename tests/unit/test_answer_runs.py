"""The evaluation's answerer asks as `nara-kg ask` does, and lets a caller see each whole
response (the local-model benchmark counts the faithfulness guard's sentences from it)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from nara_kg.retrieval import answer_runs
from nara_kg.retrieval.evaluation import Question


def test_each_response_reaches_the_callback_before_it_is_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    def fake_ask(*args: Any, **kwargs: Any) -> Any:
        asked.append((args[5], kwargs))
        return SimpleNamespace(
            answer="Henry Morgenthau. [1]",
            refused=False,
            latency_ms=12.5,
            records=[SimpleNamespace(naId=7)],
            method="llm",
            faithfulness=SimpleNamespace(kept=1, dropped=2),
        )

    monkeypatch.setattr(answer_runs, "ask_with_fallback", fake_ask)
    seen: list[tuple[str, int]] = []
    answer = answer_runs.ask_answerer(
        None,  # type: ignore[arg-type]
        "neo4j",
        None,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        None,
        k=3,
        on_response=lambda q, r: seen.append((q.id, r.faithfulness.dropped)),
    )
    given = answer(Question("q1", "Who kept the diaries?", (7,), mode="global"))
    assert seen == [("q1", 2)]
    assert asked == [("Who kept the diaries?", {"mode": "global", "k": 3})]
    assert (given.text, given.na_ids, given.method, given.latency_ms) == (
        "Henry Morgenthau. [1]",
        (7,),
        "llm",
        12.5,
    )
