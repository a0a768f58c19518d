"""Known-item questions generated from the export: what a user would type for a record,
deterministic by seed, never empty when there are records to ask about; and the evaluation's
check is green only on a measured result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq

from nara_kg.model.tables import RECORD_SCHEMA, Col
from nara_kg.retrieval.known_items import (
    KNOWN_ITEM_KIND,
    MAX_QUERY_WORDS,
    KnownItemRecord,
    known_item_query,
    known_item_questions,
    read_known_item_records,
)

RECORDS = [
    KnownItemRecord(1, "Records of the Bureau of Reclamation: Photographs of the Hoover Dam"),
    KnownItemRecord(2, "Map", "Survey of the lighthouse at Quillon Point, with soundings."),
    KnownItemRecord(3, "Letters"),
    KnownItemRecord(4, "Records of the Bureau of Reclamation: Photographs of the Hoover Dam"),
    *[
        KnownItemRecord(10 + i, f"Annual report of the harbor commission {1900 + i}")
        for i in range(60)
    ],
]


def test_the_query_is_what_a_user_would_type() -> None:
    assert known_item_query(RECORDS[0]) == "bureau reclamation photographs hoover dam"
    # Too few words in the title: the description's first words.
    assert known_item_query(RECORDS[1]) == "survey lighthouse quillon point soundings"
    assert known_item_query(RECORDS[2]) is None
    long = KnownItemRecord(5, " ".join(f"word{i}" for i in range(20)))
    assert len(str(known_item_query(long)).split()) == MAX_QUERY_WORDS


def test_questions_are_deterministic_and_expect_their_record() -> None:
    first = known_item_questions(RECORDS, sample=20, seed=3)
    assert first == known_item_questions(list(reversed(RECORDS)), sample=20, seed=3)
    assert first != known_item_questions(RECORDS, sample=20, seed=4)
    assert len(first) == 20
    for question in first:
        na_id = int(question.id.removeprefix("known-"))
        assert na_id in question.expected_naids
        assert question.kind == KNOWN_ITEM_KIND and question.mode == "local"
    # Two records with the same title: either is the right answer.
    every = {q.id: q for q in known_item_questions(RECORDS, sample=1_000)}
    assert every["known-1"].expected_naids == (1, 4)
    assert "known-3" not in every  # nothing to ask it by


def test_records_are_read_from_the_parsed_parts_without_stubs(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [{field.name: None for field in RECORD_SCHEMA} for _ in range(2)]
    for row, (na_id, stub) in zip(rows, [(7, False), (8, True)], strict=True):
        row.update(
            {
                Col.NA_ID: na_id,
                Col.NODE_TYPE: "item",
                Col.IS_STUB: stub,
                Col.FILE_NAME: "a.jsonl",
                Col.LINE_NUM: 1,
                Col.TITLE: "Photographs of the harbor works at Marrow Creek",
                Col.COMPLETENESS: 1,
                Col.PROPERTIES: "{}",
                Col.REFERENCES: "[]",
            }
        )
    part = tmp_path / "a.records.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=RECORD_SCHEMA), part)
    assert [r.na_id for r in read_known_item_records([part])] == [7]


def test_the_check_is_not_green_when_nothing_could_be_measured(tmp_path: Path) -> None:
    """No question file and nothing parsed: the check fails as not evaluated, a warning."""
    from graph_assets.retrieval_evaluation import _known_item_evaluation
    from quality.names import RETRIEVAL_THRESHOLDS_CHECK
    from resources import PipelinePaths

    paths = PipelinePaths(
        data_dir=str(tmp_path), work_dir=str(tmp_path / "work"), questions_file=str(tmp_path / "q")
    )
    context = dg.build_asset_context()
    events = list(_known_item_evaluation(context, None, None, paths))  # type: ignore[arg-type]
    [check] = [e for e in events if isinstance(e, dg.AssetCheckResult)]
    assert check.check_name == RETRIEVAL_THRESHOLDS_CHECK
    assert check.passed is False
    assert check.severity == dg.AssetCheckSeverity.WARN
    assert check.description and check.description.startswith("not evaluated")
