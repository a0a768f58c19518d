"""What the retrieval_evaluation asset shows of an evaluation's reports
(:mod:`nara_kg.retrieval.evaluation`): the figures the UI plots over runs, and the tables."""

from typing import Any

import dagster as dg

from graph_assets.common import table
from nara_kg.retrieval.evaluation import AnswerReport, EvaluationReport


def search_figures(report: EvaluationReport) -> dict[str, dg.MetadataValue]:
    """hit@1, hit@5, MRR@10 and the latency percentiles, as the UI plots them over runs."""
    return {
        "hit_at_1": dg.MetadataValue.float(round(report.hit_at_1, 4)),
        "hit_at_5": dg.MetadataValue.float(round(report.hit_at_5, 4)),
        "mrr_at_10": dg.MetadataValue.float(round(report.mrr_at_10, 4)),
        "latency_ms_p50": dg.MetadataValue.float(round(report.latency_ms_p50, 2)),
        "latency_ms_p95": dg.MetadataValue.float(round(report.latency_ms_p95, 2)),
    }


def per_question_table(report: EvaluationReport, columns: tuple[str, ...]) -> dg.MetadataValue:
    return table([{k: q[k] for k in columns} for q in report.per_question], limit=50)


def answer_metadata(report: AnswerReport) -> dict[str, Any]:
    """Answer accuracy of the questions that label answers."""
    return {
        **{name: dg.MetadataValue.float(value) for name, value in report.figures().items()},
        "answer_questions": report.n,
        "answer_by_kind": table(
            [{"kind": kind, **metrics} for kind, metrics in report.by_kind.items()]
        ),
        "answer_failed": dg.MetadataValue.text(", ".join(report.failed_ids) or "-"),
        "answer_results": table(
            [
                {k: row[k] for k in ("id", "kind", "question", "answered", "answer")}
                for row in report.per_question
            ],
            limit=100,
        ),
    }
