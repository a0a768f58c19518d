"""The labelled real-record question set (tests/data/real_record_questions.jsonl): the real NARA
records are built into the database and every question is asked through local search, so the
ranking is measured on records as NARA writes them (identifier, date, person/organization and
topic questions, reported apart)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.build import build_in_subprocess
from benchmarks.common import Log, open_driver, quiet
from benchmarks.options import SuiteOptions
from nara_kg.settings import PROJECT_ROOT, Neo4jSettings

#: The question set written by hand from the real records (questions only, never their text).
REAL_QUESTIONS = PROJECT_ROOT / "tests" / "data" / "real_record_questions.jsonl"
#: The answer set written from the same records (questions and short expected facts only).
REAL_ANSWERS = PROJECT_ROOT / "tests" / "data" / "real_record_answers.jsonl"
#: Where the real records live beside the repository (not in it).
REAL_EXPORT = PROJECT_ROOT.parent / "shared" / "data" / "nara" / "export"


def evaluate_questions(
    driver: Any, database: str, encode: Any, questions_path: Path
) -> dict[str, Any]:
    """hit@1, hit@5, MRR@10 (overall and per kind) of local search over a question file."""
    from nara_kg.retrieval.evaluation import evaluate_local, load_questions, search_retriever

    retrieve = search_retriever(driver, database, encode)
    report = evaluate_local(load_questions(questions_path), retrieve).to_dict()
    report["misses"] = [
        {key: row[key] for key in ("id", "kind", "rank", "expected", "retrieved")}
        for row in report.pop("per_question")
        if row["rank"] != 1
    ]
    report.pop("skipped")
    return report


def evaluate_answer_set(
    driver: Any, database: str, embedder: Any, answers_path: Path
) -> dict[str, Any]:
    """Answer accuracy (overall, per kind, refusals of unanswerable questions) of the default,
    model-free (extractive) backend, each question asked through `ask` in its own mode."""
    from nara_kg.generation.llm import ExtractiveLLM
    from nara_kg.retrieval.answer_runs import ask_answerer
    from nara_kg.retrieval.evaluation import evaluate_answers, load_questions

    answerer = ask_answerer(driver, database, embedder, ExtractiveLLM(), None)
    report = evaluate_answers(load_questions(answers_path), answerer).to_dict()
    report["failures"] = [
        {key: row[key] for key in ("id", "kind", "missing", "answer")}
        for row in report.pop("per_question")
        if not row["answered"]
    ]
    report["questions_file"] = str(answers_path.relative_to(PROJECT_ROOT))
    return report


def evaluate_real_sets(
    driver: Any, database: str, embedder: Any, questions_path: Path, answers_path: Path
) -> dict[str, Any]:
    """The question set's ranking on the graph in the database, with the answer set's
    accuracy under "answers" when that file exists."""
    report = evaluate_questions(driver, database, embedder.encode, questions_path)
    if answers_path.exists():
        report["answers"] = evaluate_answer_set(driver, database, embedder, answers_path)
    return report


def measure_real_questions(
    settings: Neo4jSettings,
    work_root: Path,
    *,
    export_dir: Path = REAL_EXPORT,
    questions_path: Path = REAL_QUESTIONS,
    answers_path: Path = REAL_ANSWERS,
    opts: SuiteOptions | None = None,
    log: Log = quiet,
) -> dict[str, Any]:
    """Build the real export (wiping the database) and evaluate the question set on it, and
    the answer set beside it (under "answers")."""
    if not export_dir.is_dir():
        return {"skipped": f"no real export at {export_dir}"}
    from nara_kg.embedding.encoder import Embedder

    opts = opts or SuiteOptions()
    build = build_in_subprocess(
        settings, export_dir, work_root / "real-work", wipe=True, opts=opts, log=log
    )
    driver = open_driver(settings)
    try:
        embedder = Embedder(backend=opts.backend, device=opts.device)
        embedder.encode(["warm-up"])
        report = evaluate_real_sets(
            driver, settings.database, embedder, questions_path, answers_path
        )
    finally:
        driver.close()
    report["build_seconds"] = build["seconds"]
    report["questions_file"] = str(questions_path.relative_to(PROJECT_ROOT))
    log(
        f"real-record questions: hit@1 {report['hit_at_1']}, hit@5 {report['hit_at_5']}, "
        f"MRR@10 {report['mrr_at_10']} over {report['n']}"
    )
    if "answers" in report:
        answers = report["answers"]
        log(
            f"real-record answers: accuracy {answers['accuracy']} over {answers['n']}, "
            f"unanswerable refused {answers['refusal_rate_unanswerable']}"
        )
    return report
