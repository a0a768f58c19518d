"""Answer accuracy: does an answer state the expected facts, and is an unanswerable question
refused."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from nara_kg.retrieval.eval_questions import Question
from nara_kg.retrieval.retrieval_metrics import percentile

#: The answer's opening kept in per-question rows, enough to read why a question failed.
EXCERPT_CHARS = 240
_NOT_WORD = re.compile(r"[\W_]+")


def normalize_text(text: str) -> str:
    """Lower case, every run of punctuation (dashes included) or whitespace one space: "Volume
    740, June 6 - June 7" and "volume 740 june 6 june 7" compare equal."""
    return " ".join(_NOT_WORD.sub(" ", text.casefold()).split())


def states_fact(answer: str, spellings: Sequence[str]) -> bool:
    """The answer holds one of the fact's spellings as whole words ("P 3" is not in "P 30")."""
    padded = f" {normalize_text(answer)} "
    return any(f" {normalize_text(s)} " in padded for s in spellings if normalize_text(s))


@dataclass(frozen=True)
class AnswerJudgement:
    answered: bool
    refused: bool
    #: The facts (first spelling of each) the answer does not state.
    missing: tuple[str, ...]


def judge_answer(question: Question, answer: str | None, refused: bool) -> AnswerJudgement:
    """An answerable question is answered when the answer is not a refusal and states every
    expected fact; an unanswerable one when it is refused. An empty answer is a refusal."""
    refused = refused or not (answer or "").strip()
    if not question.answerable:
        return AnswerJudgement(answered=refused, refused=refused, missing=())
    missing = tuple(
        facts[0] for facts in question.expected_facts if not states_fact(answer or "", facts)
    )
    return AnswerJudgement(answered=not refused and not missing, refused=refused, missing=missing)


@dataclass(frozen=True)
class GivenAnswer:
    """What the system answered to one question."""

    text: str | None
    refused: bool
    latency_ms: float = 0.0
    #: naIds of the records the answer drew on (or returned), best first.
    na_ids: tuple[int, ...] = ()
    method: str = ""


#: question -> its answer (the question's own mode tells local from global)
Answerer = Callable[[Question], GivenAnswer]


@dataclass
class AnswerReport:
    n: int
    accuracy: float
    #: Share of unanswerable questions refused (None when the file has none).
    refusal_rate_unanswerable: float | None
    #: Share of answerable questions refused.
    refusal_rate_answerable: float | None
    latency_ms_p50: float
    latency_ms_p95: float
    #: kind -> {n, answered, accuracy}
    by_kind: dict[str, dict[str, float]] = field(default_factory=dict)
    per_question: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failed_ids(self) -> list[str]:
        return [row["id"] for row in self.per_question if not row["answered"]]

    def figures(self) -> dict[str, float]:
        """The report's numbers under flat names (answer_accuracy, answer_accuracy_<kind>, ...),
        one series each where a UI plots metadata over runs."""
        figures = {
            "answer_accuracy": round(self.accuracy, 4),
            "answer_latency_ms_p95": round(self.latency_ms_p95, 2),
        }
        if self.refusal_rate_unanswerable is not None:
            figures["answer_refusal_rate_unanswerable"] = round(self.refusal_rate_unanswerable, 4)
        for kind, metrics in self.by_kind.items():
            figures[f"answer_accuracy_{kind}"] = metrics["accuracy"]
        return figures

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "accuracy": round(self.accuracy, 4),
            "refusal_rate_unanswerable": _rounded(self.refusal_rate_unanswerable),
            "refusal_rate_answerable": _rounded(self.refusal_rate_answerable),
            "latency_ms_p50": round(self.latency_ms_p50, 2),
            "latency_ms_p95": round(self.latency_ms_p95, 2),
            "by_kind": self.by_kind,
            "failed": self.failed_ids,
            "per_question": self.per_question,
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def excerpt(text: str | None, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def evaluate_answers(questions: Sequence[Question], answer: Answerer) -> AnswerReport:
    """Ask every question that carries an answer label and judge each answer (judge_answer)."""
    rows: list[dict[str, Any]] = []
    latencies: list[float] = []
    for question in questions:
        if not question.has_answer_label:
            continue
        given = answer(question)
        verdict = judge_answer(question, given.text, given.refused)
        latencies.append(given.latency_ms)
        rows.append(
            {
                "id": question.id,
                "question": question.question,
                "kind": question.kind,
                "answerable": question.answerable,
                "answered": verdict.answered,
                "refused": verdict.refused,
                "missing": list(verdict.missing),
                "answer": excerpt(given.text),
                "method": given.method,
                "records": list(given.na_ids[:5]),
                "latency_ms": round(given.latency_ms, 2),
            }
        )
    return AnswerReport(
        n=len(rows),
        accuracy=_share([row["answered"] for row in rows]) or 0.0,
        refusal_rate_unanswerable=_share([row["refused"] for row in rows if not row["answerable"]]),
        refusal_rate_answerable=_share([row["refused"] for row in rows if row["answerable"]]),
        latency_ms_p50=percentile(latencies, 50),
        latency_ms_p95=percentile(latencies, 95),
        by_kind=answer_accuracy_by_kind(rows),
        per_question=rows,
    )


def answer_accuracy_by_kind(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """n, answered and accuracy of each kind of question (rows without a kind under "-")."""
    answered_of: dict[str, list[bool]] = {}
    for row in rows:
        answered_of.setdefault(str(row.get("kind") or "-"), []).append(bool(row["answered"]))
    return {
        kind: {
            "n": len(flags),
            "answered": sum(flags),
            "accuracy": round(sum(flags) / len(flags), 4),
        }
        for kind, flags in sorted(answered_of.items())
    }
