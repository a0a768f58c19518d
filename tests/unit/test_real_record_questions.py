"""The labelled questions over real NARA records (tests/data/real_record_questions.jsonl)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from nara_kg.retrieval.evaluation import load_questions

QUESTIONS = Path(__file__).resolve().parents[1] / "data" / "real_record_questions.jsonl"
EXPORT = Path(__file__).resolve().parents[3] / "shared/data/nara/export"
KINDS = ("identifier", "date", "person_org", "topic")
MIN_PER_KIND = {"identifier": 12, "date": 12, "person_org": 8}


def _raw_lines() -> list[dict]:
    with QUESTIONS.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def test_questions_load_and_have_the_promised_shape() -> None:
    questions = load_questions(QUESTIONS)
    assert len(questions) >= 45
    assert len({q.id for q in questions}) == len(questions)
    for question in questions:
        assert question.question.strip(), question.id
        assert question.expected_naids, question.id
        assert question.mode == "local", question.id

    raw = _raw_lines()
    assert [r["id"] for r in raw] == [q.id for q in questions]
    assert all(r.get("kind") in KINDS for r in raw), Counter(r.get("kind") for r in raw)
    counts = Counter(r["kind"] for r in raw)
    for kind, minimum in MIN_PER_KIND.items():
        assert counts[kind] >= minimum, counts
    assert counts["topic"] >= 1, counts


def test_expected_naids_exist_in_the_real_records() -> None:
    if not EXPORT.is_dir():
        pytest.skip(f"real NARA export not present at {EXPORT}")
    files = sorted(EXPORT.glob("*.jsonl"))
    if not files:
        pytest.skip(f"no *.jsonl files in {EXPORT}")
    known: set[int] = set()
    for path in files:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                data = json.loads(line)
                record = data.get("record") or data.get("_source", {}).get("record") or data
                known.add(int(record["naId"]))
    missing = {
        q.id: [n for n in q.expected_naids if n not in known]
        for q in load_questions(QUESTIONS)
        if any(n not in known for n in q.expected_naids)
    }
    assert not missing, missing
