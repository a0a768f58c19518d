"""Evaluation: question files, the retrieval metrics hit@k, MRR@k and latency percentiles, and
answer accuracy (does the answer state the expected facts, and is an unanswerable question
refused); the pass rule of retrieval quality, and the runs of a question file against the
graph (local search, global questions, answers) that the retrieval_evaluation asset, `nara-kg
eval` and the benchmark share."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neo4j import Driver

    from nara_kg.embedding.encoder import Embedder
    from nara_kg.generation.llm_base import LLM

QUESTION_MODES = ("local", "global", "auto")


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    expected_naids: tuple[int, ...]
    mode: str = "local"
    #: The class of question ("identifier", "date", "person_org", "topic", ...), reported apart.
    kind: str = ""
    #: Facts a correct answer states; each is a tuple of accepted spellings (any one will do).
    expected_facts: tuple[tuple[str, ...], ...] = ()
    #: False for a question the records cannot answer: the right answer is the refusal.
    answerable: bool = True

    @property
    def has_answer_label(self) -> bool:
        """The question says what its answer must hold (facts, or that it must be refused)."""
        return bool(self.expected_facts) or not self.answerable


def load_questions(path: Path) -> list[Question]:
    """Read a JSONL question file; a bad line is an error naming file, line and reason."""
    questions = []
    with path.open(encoding="utf-8") as handle:
        for line_num, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                mode = raw.get("mode", "local")
                if mode not in QUESTION_MODES:
                    raise ValueError(f"mode must be one of {QUESTION_MODES}, got {mode!r}")
                questions.append(
                    Question(
                        id=str(raw["id"]),
                        question=str(raw["question"]),
                        expected_naids=tuple(int(n) for n in raw.get("expected_naids") or []),
                        mode=mode,
                        kind=str(raw.get("kind") or ""),
                        expected_facts=_facts(raw.get("expected_facts") or []),
                        answerable=_boolean(raw.get("answerable", True)),
                    )
                )
            except (ValueError, KeyError, TypeError) as error:
                raise ValueError(f"{path}:{line_num}: bad question line: {error}") from error
    return questions


def _facts(raw: object) -> tuple[tuple[str, ...], ...]:
    """`expected_facts`: a list whose items are a fact or a list of its accepted spellings."""
    if not isinstance(raw, list):
        raise ValueError("expected_facts must be a list")
    facts = []
    for item in raw:
        spellings = item if isinstance(item, list) else [item]
        if not spellings or not all(isinstance(s, str) and s.strip() for s in spellings):
            raise ValueError(
                f"an expected fact must be a non-empty string or list of them: {item!r}"
            )
        facts.append(tuple(spellings))
    return tuple(facts)


def _boolean(raw: object) -> bool:
    if not isinstance(raw, bool):
        raise ValueError(f"answerable must be true or false, got {raw!r}")
    return raw


def first_relevant_rank(retrieved: Sequence[int], expected: Sequence[int]) -> int | None:
    """1-based rank of the first expected naId among the retrieved ones."""
    wanted = set(expected)
    for rank, na_id in enumerate(retrieved, start=1):
        if na_id in wanted:
            return rank
    return None


def hit_at(ranks: Sequence[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def mrr_at(ranks: Sequence[int | None], k: int) -> float:
    return sum(1.0 / r for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100): a value that was actually observed."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[rank - 1]


@dataclass
class EvaluationReport:
    n: int
    hit_at_1: float
    hit_at_5: float
    mrr_at_10: float
    latency_ms_p50: float
    latency_ms_p95: float
    per_question: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    #: kind -> {n, hit_at_1, hit_at_5, mrr_at_10}, for question files that label their kinds.
    by_kind: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "hit_at_1": round(self.hit_at_1, 4),
            "hit_at_5": round(self.hit_at_5, 4),
            "mrr_at_10": round(self.mrr_at_10, 4),
            "latency_ms_p50": round(self.latency_ms_p50, 2),
            "latency_ms_p95": round(self.latency_ms_p95, 2),
            "by_kind": self.by_kind,
            "per_question": self.per_question,
            "skipped": self.skipped,
        }


#: question text -> (naIds ranked best first, latency in ms)
Retriever = Callable[[str], tuple[list[int], float]]

#: The pass rule of retrieval quality (the retrieval_evaluation asset's advisory check).
MIN_HIT_AT_5 = 0.6
MIN_MRR_AT_10 = 0.4
#: Records a question's ranking is judged on (hit@k and MRR@10 look no further).
RETRIEVED = 10


def meets_thresholds(report: EvaluationReport) -> bool:
    """Retrieval is good enough: some question was measured, hit@5 and MRR@10 at their minimum."""
    return report.n > 0 and report.hit_at_5 >= MIN_HIT_AT_5 and report.mrr_at_10 >= MIN_MRR_AT_10


def search_retriever(
    driver: Driver,
    database: str,
    encode: Callable[[list[str]], Any],
    *,
    entity_path: bool = True,
) -> Retriever:
    """Each question through hybrid local search (top 10), as `nara-kg search` asks it;
    `entity_path=False` leaves out the ranking through the authorities a question names."""
    from nara_kg.retrieval.search import local_search

    def retrieve(text: str) -> tuple[list[int], float]:
        result = local_search(driver, database, encode, text, k=RETRIEVED, entity_path=entity_path)
        return [hit.naId for hit in result.hits], result.latency_ms

    return retrieve


def evaluate_local(questions: Sequence[Question], retrieve: Retriever) -> EvaluationReport:
    """Run the questions that have expected records through `retrieve` (top 10)."""
    ranks: list[int | None] = []
    latencies: list[float] = []
    per_question: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for question in questions:
        if question.mode == "global" or not question.expected_naids:
            skipped.append({"id": question.id, "reason": f"mode {question.mode} / no expected"})
            continue
        retrieved, latency = retrieve(question.question)
        rank = first_relevant_rank(retrieved[:10], question.expected_naids)
        ranks.append(rank)
        latencies.append(latency)
        per_question.append(
            {
                "id": question.id,
                "question": question.question,
                "kind": question.kind,
                "rank": rank,
                "expected": list(question.expected_naids),
                "retrieved": retrieved[:10],
                "latency_ms": round(latency, 2),
            }
        )
    return EvaluationReport(
        n=len(ranks),
        hit_at_1=hit_at(ranks, 1),
        hit_at_5=hit_at(ranks, 5),
        mrr_at_10=mrr_at(ranks, 10),
        latency_ms_p50=percentile(latencies, 50),
        latency_ms_p95=percentile(latencies, 95),
        per_question=per_question,
        skipped=skipped,
        by_kind=metrics_by_kind(per_question),
    )


def metrics_by_kind(per_question: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """hit@1, hit@5 and MRR@10 of each kind of question (questions without a kind left out)."""
    ranks_of: dict[str, list[int | None]] = {}
    for row in per_question:
        if row.get("kind"):
            ranks_of.setdefault(str(row["kind"]), []).append(row["rank"])
    return {
        kind: {
            "n": len(ranks),
            "hit_at_1": round(hit_at(ranks, 1), 4),
            "hit_at_5": round(hit_at(ranks, 5), 4),
            "mrr_at_10": round(mrr_at(ranks, 10), 4),
        }
        for kind, ranks in sorted(ranks_of.items())
    }


# ----- answer accuracy ---------------------------------------------------------------------

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


# ----- global questions and answers through ask ------------------------------------------


def global_results(
    questions: Sequence[Question],
    driver: Driver,
    database: str,
    embedder: Embedder,
    get_llm: Callable[[], LLM],
    cache_path: Path,
) -> list[dict[str, Any]]:
    """Each global question asked through global search over the community reports: whether
    it was answered, the communities that supported the answer, the latency. `get_llm` is
    called only when there is a global question (a misconfigured backend fails no other run)."""
    from nara_kg.generation.generation_cache import GenerationCache
    from nara_kg.retrieval.ask import ask

    rows: list[dict[str, Any]] = []
    selected = [q for q in questions if q.mode == "global"]
    if not selected:
        return rows
    with GenerationCache(cache_path) as cache:
        llm = get_llm()
        for question in selected:
            response = ask(driver, database, embedder, llm, cache, question.question, mode="global")
            rows.append(
                {
                    "id": question.id,
                    "question": question.question,
                    "answered": not response.refused,
                    "communities": ", ".join(
                        response.global_sources.communities if response.global_sources else ()
                    ),
                    "latency_ms": response.latency_ms,
                }
            )
    return rows


def answer_report(
    questions: Sequence[Question],
    driver: Driver,
    database: str,
    embedder: Embedder,
    get_llm: Callable[[], LLM],
    cache_path: Path,
) -> AnswerReport | None:
    """Answer accuracy of the questions that label answers, each asked as `nara-kg ask` asks
    it (None, and `get_llm` not called, when no question labels its answer)."""
    from nara_kg.generation.generation_cache import GenerationCache
    from nara_kg.retrieval.answer_runs import ask_answerer

    if not any(q.has_answer_label for q in questions):
        return None
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    with GenerationCache(cache_path) as cache:
        answerer = ask_answerer(driver, database, embedder, get_llm(), cache)
        return evaluate_answers(questions, answerer)
