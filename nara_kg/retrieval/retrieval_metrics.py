"""The retrieval metrics hit@k, MRR@k and latency percentiles, the pass rule of retrieval
quality, and a question file's run through local search."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nara_kg.retrieval.eval_questions import Question

if TYPE_CHECKING:
    from neo4j import Driver


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
