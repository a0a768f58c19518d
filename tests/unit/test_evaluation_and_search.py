from __future__ import annotations

import json
from pathlib import Path

import pytest

from nara_kg.retrieval.evaluation import (
    Question,
    evaluate_local,
    first_relevant_rank,
    hit_at,
    load_questions,
    mrr_at,
    percentile,
)
from nara_kg.retrieval.search import known_records, lucene_query, reciprocal_rank_fusion


def test_rank_and_metrics() -> None:
    assert first_relevant_rank([5, 3, 9], [9, 3]) == 2
    assert first_relevant_rank([5], [1]) is None
    ranks = [1, 3, None, 8]
    assert hit_at(ranks, 1) == 0.25
    assert hit_at(ranks, 5) == 0.5
    assert mrr_at(ranks, 10) == pytest.approx((1 + 1 / 3 + 1 / 8) / 4)
    assert mrr_at(ranks, 5) == pytest.approx((1 + 1 / 3) / 4)


def test_nearest_rank_percentile() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) == 0.0


def test_evaluate_local_skips_global_questions() -> None:
    questions = [
        Question("a", "alpha", (1,)),
        Question("b", "beta", (2,)),
        Question("g", "what themes?", (), mode="global"),
    ]
    answers = {"alpha": [1, 2], "beta": [3, 4, 2]}
    report = evaluate_local(questions, lambda q: (answers[q], 10.0 if q == "alpha" else 30.0))
    assert report.n == 2
    assert report.hit_at_1 == 0.5
    assert report.mrr_at_10 == pytest.approx((1 + 1 / 3) / 2)
    assert report.latency_ms_p95 == 30.0
    assert [s["id"] for s in report.skipped] == ["g"]


def test_metrics_are_reported_per_kind_of_question(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    lines = [
        {"id": "i", "question": "volume 5", "expected_naids": [5], "kind": "identifier"},
        {"id": "d", "question": "March 3, 1942", "expected_naids": [7], "kind": "date"},
        {"id": "t", "question": "flood control", "expected_naids": [9]},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    questions = load_questions(path)
    assert [q.kind for q in questions] == ["identifier", "date", ""]
    answers = {"volume 5": [5], "March 3, 1942": [1, 7], "flood control": [9]}
    report = evaluate_local(questions, lambda q: (answers[q], 1.0))
    assert report.by_kind == {
        "date": {"n": 1, "hit_at_1": 0.0, "hit_at_5": 1.0, "mrr_at_10": 0.5},
        "identifier": {"n": 1, "hit_at_1": 1.0, "hit_at_5": 1.0, "mrr_at_10": 1.0},
    }
    assert report.to_dict()["by_kind"] == report.by_kind


def test_question_file_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        json.dumps({"id": 1, "question": "x", "expected_naids": [1]}) + "\n" + '{"id": 2}\n'
    )
    with pytest.raises(ValueError, match=r"q.jsonl:2: bad question line"):
        load_questions(path)


def test_rrf_rewards_agreement_between_rankings() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "b", "d"]], k=60)
    # Items found by both lists outrank "a", first in only one of them.
    assert {item for item, _ in fused[:2]} == {"b", "c"}
    assert dict(fused)["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert dict(fused)["a"] == pytest.approx(1 / 61)
    assert reciprocal_rank_fusion([[], ["x"]], k=60) == [("x", pytest.approx(1 / 61))]


def test_default_fusion_keeps_a_strong_lexical_first_place() -> None:
    # "t" is first in full-text only; "m" is 12th and 24th in the two lists.
    vector = [f"v{i}" for i in range(23)] + ["m"]
    fulltext = ["t"] + [f"f{i}" for i in range(10)] + ["m"]
    assert [item for item, _ in reciprocal_rank_fusion([vector, fulltext])].index("t") < [
        item for item, _ in reciprocal_rank_fusion([vector, fulltext])
    ].index("m")


def test_lucene_query_neutralizes_syntax() -> None:
    assert lucene_query('title:"War" AND (relocation)') == "title War relocation"
    assert lucene_query("  ") == ""


def test_known_records_parse_the_rows_that_carry_facts_once_per_record() -> None:
    facts = {"title": "Volume 12, March 1942", "dateStart": None, "dateEnd": None}
    rows = [
        {"naId": 7, "chunkId": "7-1", "firstChunkId": "7-0", "codes": ["A 1"], "nodeType": "x"}
        | facts,
        {"naId": 7, "chunkId": "7-2", "firstChunkId": "7-0", "codes": [], "nodeType": "x"} | facts,
        {"naId": 8, "chunkId": "8-0", "score": 0.5},  # no facts read with this row
    ]
    known = known_records(rows)
    assert set(known) == {"7"}
    record, first_chunk = known["7"]
    assert first_chunk == "7-0" and record.title == "Volume 12, March 1942"
    assert record.codes == (("a", "1"),)  # the first row of the record
    assert record.dates and record.dates[0].start.isoformat() == "1942-03-01"
