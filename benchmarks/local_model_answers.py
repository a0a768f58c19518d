"""The opt-in local model (SmolLM2-135M-Instruct, `NARA_KG_LLM_BACKEND=local`) beside the
extractive default on the labelled answer set (tests/data/real_record_answers.jsonl), over the
graph already in the database (the real records', built by `nara-kg build`): answer accuracy,
the share of the model's answer sentences the faithfulness guard kept, and seconds per answer.

The model writes about 10 tokens a second on one busy core, so by default a subset is asked:
the first `--per-kind` questions of each kind, overview questions left out (a global answer
through a model is one generation per community report read, minutes a question).

    python -m benchmarks.local_model_answers [--per-kind 2] [--out var/local_model_answers.json]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nara_kg.settings import PROJECT_ROOT

ANSWER_SET = PROJECT_ROOT / "tests" / "data" / "real_record_answers.jsonl"
#: Kinds left out of the subset: a model's global answer reads every selected report.
SKIPPED_KINDS = ("overview",)


def subset(questions: Sequence[Any], per_kind: int) -> list[Any]:
    """The first `per_kind` questions of each kind (file order), skipped kinds left out."""
    taken: dict[str, int] = {}
    chosen = []
    for question in questions:
        if question.kind in SKIPPED_KINDS or not question.has_answer_label:
            continue
        if taken.get(question.kind, 0) < per_kind:
            taken[question.kind] = taken.get(question.kind, 0) + 1
            chosen.append(question)
    return chosen


def measure(questions: Sequence[Any], resources: Any, llm: Any, cache: Any) -> dict[str, Any]:
    """Accuracy (evaluate_answers' judgement), guard counts and seconds per answer of one
    backend over the questions; the model is loaded first (the load is timed apart)."""
    from nara_kg.generation.llm import TransformersLLM
    from nara_kg.retrieval.answer_runs import ask_answerer
    from nara_kg.retrieval.ask import AskResponse
    from nara_kg.retrieval.evaluation import GivenAnswer, Question, evaluate_answers

    driver, database = resources.neo4j.get_driver(), resources.neo4j.database
    embedder = resources.embedding_model.get_embedder()
    seconds: list[float] = []
    kept = dropped = guarded_answers = extractive_stand_ins = 0

    def count_guard(question: Question, response: AskResponse) -> None:
        nonlocal kept, dropped, guarded_answers, extractive_stand_ins
        guard = response.faithfulness
        print(
            f"  {question.id}: {response.latency_ms / 1000:.1f}s {response.method}"
            f" guard={guard.to_dict() if guard else None}",
            flush=True,
        )
        if guard is not None:
            guarded_answers += 1
            kept += guard.kept
            dropped += guard.dropped
            extractive_stand_ins += int(guard.kept == 0)

    asked = ask_answerer(driver, database, embedder, llm, cache, on_response=count_guard)

    def answer(question: Question) -> GivenAnswer:
        started = time.perf_counter()
        given = asked(question)
        seconds.append(time.perf_counter() - started)
        return given

    started = time.perf_counter()
    embedder.encode(["warm-up"])
    if isinstance(llm, TransformersLLM):
        llm.load()
    warm_up_s = time.perf_counter() - started
    report = evaluate_answers(questions, answer).to_dict()
    return {
        "n": report["n"],
        "accuracy": report["accuracy"],
        "refusal_rate_unanswerable": report["refusal_rate_unanswerable"],
        "by_kind": report["by_kind"],
        "failed": report["failed"],
        "seconds_per_answer_mean": round(sum(seconds) / len(seconds), 2) if seconds else None,
        "seconds_per_answer_max": round(max(seconds), 2) if seconds else None,
        "warm_up_s": round(warm_up_s, 1),
        "model_answers_guarded": guarded_answers,
        "sentences_kept": kept,
        "sentences_dropped": dropped,
        "share_kept": round(kept / (kept + dropped), 3) if kept + dropped else None,
        "extractive_stand_ins": extractive_stand_ins,
        "per_question": [
            {key: row[key] for key in ("id", "kind", "answered", "method", "answer")}
            for row in report["per_question"]
        ],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, default=ANSWER_SET)
    parser.add_argument("--per-kind", type=int, default=2)
    # An answer is a sentence or two; the classification a word.
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument(
        "--out", type=Path, default=PROJECT_ROOT / "var" / "local_model_answers.json"
    )
    args = parser.parse_args(argv)

    from nara_kg.generation import local_model
    from nara_kg.generation.llm import ExtractiveLLM
    from nara_kg.retrieval.evaluation import load_questions
    from resources import open_resources

    questions = subset(load_questions(args.questions), args.per_kind)
    results: dict[str, Any] = {
        "questions": [q.id for q in questions],
        "max_new_tokens": args.max_new_tokens,
        "skipped_kinds": list(SKIPPED_KINDS),
    }
    with open_resources() as resources:
        # No generation cache: every answer is generated, as a new question's is.
        for name, llm in (
            ("extractive", ExtractiveLLM()),
            ("local", local_model.local_llm(max_new_tokens=args.max_new_tokens)),
        ):
            results[name] = measure(questions, resources, llm, None)
            print(name, json.dumps({k: v for k, v in results[name].items() if k != "per_question"}))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
