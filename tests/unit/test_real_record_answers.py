"""The labelled answer set over real NARA records (tests/data/real_record_answers.jsonl): its
shape, and, when the records are beside the repository, that its labels are honest (every
expected naId exists and every expected fact is stated by the records or their graph facts)."""

from __future__ import annotations

import calendar
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nara_kg.retrieval.evaluation import load_questions, normalize_text, states_fact

ANSWERS = Path(__file__).resolve().parents[1] / "data" / "real_record_answers.jsonl"
EXPORT = Path(__file__).resolve().parents[3] / "shared/data/nara/export"
KINDS = (
    "who",
    "what",
    "when",
    "where",
    "how_many",
    "identifier",
    "graph_fact",
    "overview",
    "unanswerable",
)
MONTHS = tuple(calendar.month_name)[1:]


def _raw_lines() -> list[dict[str, Any]]:
    with ANSWERS.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def test_answer_set_loads_with_every_kind_and_the_promised_shape() -> None:
    questions = load_questions(ANSWERS)
    raw = _raw_lines()
    assert len(questions) >= 55
    assert len({q.id for q in questions}) == len(questions)
    assert [r["id"] for r in raw] == [q.id for q in questions]
    assert set(Counter(r["kind"] for r in raw)) == set(KINDS)
    for row, question in zip(raw, questions, strict=True):
        assert set(row) == {
            "id",
            "question",
            "kind",
            "expected_facts",
            "expected_naids",
            "answerable",
            "mode",
        }, row["id"]
        assert question.has_answer_label, question.id
        if question.kind == "unanswerable":
            assert not question.answerable and not question.expected_facts, question.id
            assert not question.expected_naids, question.id
        else:
            assert question.answerable and question.expected_facts, question.id
        if question.kind == "overview":
            assert question.mode == "global", question.id
        elif question.answerable:
            assert question.expected_naids, question.id
        # Short facts only: the set never carries the records' text.
        for spellings in question.expected_facts:
            assert all(len(s) <= 60 for s in spellings), (question.id, spellings)
    assert sum(1 for q in questions if not q.answerable) >= 6


def _records() -> list[dict[str, Any]]:
    if not EXPORT.is_dir() or not sorted(EXPORT.glob("*.jsonl")):
        pytest.skip(f"real NARA export not present at {EXPORT}")
    records = []
    for path in sorted(EXPORT.glob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    data = json.loads(line)
                    records.append(
                        data.get("record") or data.get("_source", {}).get("record") or data
                    )
    return records


def _strings(value: Any) -> Iterator[str]:
    """Every string, number and date of a record (ancestors, creators ... included), dates also
    as a reader writes them ("April 27, 1933")."""
    if isinstance(value, dict):
        if {"logicalDate", "year", "month", "day"} <= value.keys():
            yield f"{MONTHS[value['month'] - 1]} {value['day']}, {value['year']}"
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, (str, int)) and not isinstance(value, bool):
        yield str(value)


def _graph_facts(records: list[dict[str, Any]]) -> list[str]:
    """What the graph knows beyond the records' own strings: how many records of each level
    each parent includes, and the record group numbers as researchers write them."""
    children: dict[tuple[int, str], set[int]] = {}
    facts = []
    for record in records:
        ancestors = sorted(record.get("ancestors") or [], key=lambda a: a["distance"])
        if ancestors:
            key = (int(ancestors[0]["naId"]), str(record["levelOfDescription"]))
            children.setdefault(key, set()).add(int(record["naId"]))
        for ancestor in ancestors:
            if "recordGroupNumber" in ancestor:
                number = ancestor["recordGroupNumber"]
                facts += [f"Record Group {number}", f"RG {number}"]
    return facts + [str(len(na_ids)) for na_ids in children.values()]


def test_labels_are_honest_against_the_real_records() -> None:
    records = _records()
    known = {int(r["naId"]) for r in records}
    haystack = " ".join(
        [normalize_text(s) for r in records for s in _strings(r)]
        + [normalize_text(s) for s in _graph_facts(records)]
    )
    questions = load_questions(ANSWERS)
    unknown = {q.id: q.expected_naids for q in questions if not set(q.expected_naids) <= known}
    assert not unknown, unknown
    unstated = {
        q.id: spellings
        for q in questions
        for spellings in q.expected_facts
        if not states_fact(haystack, spellings)
    }
    assert not unstated, unstated
