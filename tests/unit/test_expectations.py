"""The Great Expectations suites, the tables they read, and the checks' pure parts (no Neo4j)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd
import pyarrow as pa
import pytest

from graph_assets.common import plain_metadata
from nara_kg.demo import generate_demo_data
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import chunk_records
from nara_kg.ingest.stages.raw_jsonl import scan_inputs
from nara_kg.ingest.stages.record_selection import parse_inputs
from nara_kg.model.schema import RECORD_TYPES, source_url
from quality import expectations, frames, names
from quality.checks import (
    ALL_CHECKS,
    chunks_integrity,
    community_report_check,
    parsed_records_dates,
    parsed_records_integrity,
    record_selection_suites,
    suite_metadata,
)
from quality.config import parse_share, reject_share_limit
from quality.expectations import SuiteOutcome
from quality.graph_checks import compare_counts
from quality.rejects import RejectSummary, spread_sample
from resources import EmbeddingModel, PipelinePaths


def record(
    na_id: int | None,
    node_type: str = "item",
    kind: str | None = "description",
    *,
    stub: bool = False,
    source: str | None = "",
    line: int = 1,
) -> dict[str, Any]:
    return {
        "naId": na_id,
        "nodeType": node_type,
        "recordKind": kind,
        "isStub": stub,
        "file_name": "f.jsonl",
        "line_num": line,
        "source": (source_url(na_id) if na_id is not None else None) if source == "" else source,
    }


def records_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return frames.records_frame([pa.Table.from_pylist(rows)])


def by_description(outcome: SuiteOutcome) -> dict[str, expectations.ExpectationOutcome]:
    return {o.description: o for o in outcome.outcomes}


GOOD_RECORDS = [
    record(1, "item"),
    record(2, "series", line=2),
    record(3, "person", "authority", line=3),
    record(4, "recordGroup", stub=True, line=3),
    record(5, "organization", "authority", stub=True, line=3),
]


# --------------------------------------------------------------------------- parsed_records
def test_records_suite_passes_on_good_rows() -> None:
    outcome = expectations.validate_parsed_records(records_frame(GOOD_RECORDS))
    assert outcome.success, [o for o in outcome.failed]
    assert outcome.rows == {"chosen_records": len(GOOD_RECORDS)}
    assert {o.expectation for o in outcome.outcomes} >= {
        "expect_column_values_to_not_be_null",
        "expect_column_values_to_be_unique",
        "expect_column_values_to_be_in_set",
        "expect_column_values_to_match_regex",
        "expect_column_pair_values_to_be_equal",
    }


@pytest.mark.parametrize(
    ("bad", "failing"),
    [
        (record(1, line=9), "naId unique per chosen record"),
        (record(None, source=None), "naId present"),
        (record(9, "widget"), "nodeType is one of the ten record types"),
        (record(9, "item", "bogus"), "full records: recordKind is description or authority"),
        (record(9, "item", None), "full records have a recordKind"),
        (record(9, "person", "description"), "recordKind agrees with nodeType"),
        (record(9, source="http://example.org/9"), "source is a catalog URL"),
        (record(9, source=source_url(8)), "source ends in the row's naId"),
        (record(9, source=None), "source URL present"),
    ],
)
def test_records_suite_catches(bad: dict[str, Any], failing: str) -> None:
    outcome = expectations.validate_parsed_records(records_frame([*GOOD_RECORDS, bad]))
    found = by_description(outcome)
    assert not found[failing].success
    assert (found[failing].unexpected_count or 0) >= 1
    assert found[failing].sample, "a failing expectation shows offending values"
    assert len(found[failing].sample) <= names.SAMPLE_SIZE


def test_stub_without_record_kind_is_not_held_to_the_full_record_rule() -> None:
    stub = record(9, "series", None, stub=True)
    found = by_description(expectations.validate_parsed_records(records_frame([stub])))
    assert found["full records: recordKind is description or authority"].success
    assert found["full records have a recordKind"].success


def test_sample_is_capped_and_names_the_row() -> None:
    rows = [record(i, source="nope", line=i) for i in range(1, 30)]
    found = by_description(expectations.validate_parsed_records(records_frame(rows)))
    failing = found["source is a catalog URL"]
    assert failing.unexpected_count == 29
    assert len(failing.sample) == names.SAMPLE_SIZE
    assert failing.sample[0] == {"naId": 1, "file_name": "f.jsonl", "line_num": 1, "source": "nope"}


def test_empty_tables_validate() -> None:
    assert expectations.validate_parsed_records(frames.records_frame([])).success
    assert expectations.validate_dates(frames.dates_frame([])).success
    empty = frames.chunks_frame(None)
    assert expectations.validate_chunks(empty, frames.chunk_sequences_frame(empty), 256).success


# --------------------------------------------------------------------------- dates
def test_dates_are_flattened_from_the_properties_json() -> None:
    table = pa.Table.from_pylist(
        [
            {
                "naId": 1,
                "file_name": "f",
                "line_num": 1,
                "properties": json.dumps(
                    {
                        "title": "t",
                        "logicalDate_inclusiveStartDate": "1942-01-01",
                        "logicalDate_productionDates": ["1942-05-01", "1943-02-30"],
                    }
                ),
            },
            {"naId": 2, "file_name": "f", "line_num": 2, "properties": json.dumps({"t": 1})},
        ]
    )
    rows = frames.date_rows(table)
    assert [(r["naId"], r["property"], r["value"]) for r in rows] == [
        (1, "logicalDate_inclusiveStartDate", "1942-01-01"),
        (1, "logicalDate_productionDates", "1942-05-01"),
        (1, "logicalDate_productionDates", "1943-02-30"),
    ]
    outcome = expectations.validate_dates(frames.dates_frame(rows))
    assert not outcome.success
    found = by_description(outcome)
    assert found["logicalDate_* is YYYY-MM-DD"].success
    not_a_date = found["logicalDate_* parses as a calendar date"]
    assert not_a_date.unexpected_count == 1
    assert not_a_date.sample[0]["value"] == "1943-02-30"
    assert not_a_date.sample[0]["property"] == "logicalDate_productionDates"


@pytest.mark.parametrize("value", ["1942-5-1", "May 1942", "1942/05/01", "19420501"])
def test_dates_must_be_zero_padded_iso(value: str) -> None:
    rows = [
        {"naId": 1, "property": "logicalDate_x", "value": value, "file_name": "f", "line_num": 1}
    ]
    assert not expectations.validate_dates(frames.dates_frame(rows)).success


# --------------------------------------------------------------------------- chunks
def chunk(na_id: int, seq: int, count: int | None, tokens: int = 10) -> dict[str, Any]:
    return {
        "chunkId": f"{na_id}-{seq}",
        "naId": na_id,
        "chunkSeqId": seq,
        "nodeType": "item",
        "tokens": tokens,
        "chunkCount": count if seq == 0 else None,
    }


def chunks_outcome(rows: list[dict[str, Any]], max_tokens: int = 256) -> SuiteOutcome:
    table = frames.chunks_frame(pa.Table.from_pylist(rows))
    return expectations.validate_chunks(table, frames.chunk_sequences_frame(table), max_tokens)


GOOD_CHUNKS = [chunk(1, 0, 1), chunk(2, 0, 3), chunk(2, 1, None), chunk(2, 2, None)]


def test_chunk_suite_passes_on_good_rows() -> None:
    outcome = chunks_outcome(GOOD_CHUNKS)
    assert outcome.success, outcome.failed
    assert outcome.rows == {"chunks": 4, "chunk_sequences": 2}


def test_chunk_over_the_token_limit_fails() -> None:
    found = by_description(chunks_outcome([*GOOD_CHUNKS, chunk(3, 0, 1, tokens=300)]))
    within = found["chunk fits the model: 1 <= tokens <= 256"]
    assert not within.success and within.unexpected_count == 1
    assert within.sample[0]["chunkId"] == "3-0"
    longest = found["longest chunk <= 256 tokens"]
    assert not longest.success and longest.observed == "300"


def test_duplicate_chunk_ids_fail() -> None:
    found = by_description(chunks_outcome([*GOOD_CHUNKS, chunk(1, 0, 1)]))
    assert not found["chunkId unique"].success


@pytest.mark.parametrize(
    "rows",
    [
        [chunk(5, 0, 3), chunk(5, 2, None)],  # a gap
        [chunk(5, 1, None), chunk(5, 2, None)],  # no first chunk
        [chunk(5, 0, 1), chunk(5, 1, None)],  # more chunks than chunkCount
        [chunk(5, 0, 3), chunk(5, 1, None)],  # fewer chunks than chunkCount
    ],
)
def test_broken_sequences_fail(rows: list[dict[str, Any]]) -> None:
    found = by_description(chunks_outcome([*GOOD_CHUNKS, *rows]))
    contiguous = found["chunkSeqId is 0..n-1, n = chunkCount of the first chunk"]
    assert not contiguous.success
    assert contiguous.unexpected_count == 1
    assert contiguous.sample[0]["naId"] == 5
    assert contiguous.sample[0]["seqs"]


# --------------------------------------------------------------------------- GX hygiene
def test_validation_writes_no_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    expectations.validate_parsed_records(records_frame(GOOD_RECORDS))
    assert list(tmp_path.iterdir()) == []


def test_gx_is_not_imported_by_the_code_location() -> None:
    import subprocess
    import sys

    code = "import sys, nara_kg.app.definitions; print('great_expectations' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_suite_metadata_is_a_native_table_with_every_expectation() -> None:
    outcome = expectations.validate_parsed_records(
        records_frame([*GOOD_RECORDS, record(9, "widget")])
    )
    metadata = suite_metadata(outcome)
    table = metadata["expectations"]
    assert isinstance(table, dg.TableMetadataValue)
    assert [c.name for c in table.schema.columns][4:7] == ["success", "observed", "unexpected"]
    rows = plain_metadata(metadata)["expectations"]
    assert {o.description for o in outcome.outcomes} <= {row["expectation"] for row in rows}
    assert "FAIL" in {row["success"] for row in rows}
    assert "widget" in json.dumps(plain_metadata(metadata)["offending_values"])
    assert metadata["expectations_failed"] == len(outcome.failed) >= 1


# --------------------------------------------------------------------------- names, thresholds
def test_every_check_has_a_declared_severity() -> None:
    declared = names.BLOCKING | names.ADVISORY
    for check in ALL_CHECKS:
        for spec in check.check_specs:
            assert spec.name in declared
            assert spec.blocking == names.is_blocking(spec.name)
    assert names.severity(names.PARSED_RECORDS_DATES) == dg.AssetCheckSeverity.WARN
    assert names.severity(names.NEXT_CONSISTENT) == dg.AssetCheckSeverity.ERROR


@pytest.mark.parametrize(
    ("text", "share"), [("0.01", 0.01), ("5%", 0.05), (" 0 ", 0.0), ("100%", 1.0)]
)
def test_parse_share(text: str, share: float) -> None:
    assert parse_share(text) == pytest.approx(share)


@pytest.mark.parametrize("text", ["abc", "1.5", "-1%", "150%"])
def test_parse_share_rejects_nonsense(text: str) -> None:
    with pytest.raises(ValueError):
        parse_share(text)


def test_threshold_comes_from_config_then_environment_then_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(names.MAX_REJECT_SHARE_ENV, raising=False)
    assert reject_share_limit() == names.DEFAULT_MAX_REJECT_SHARE
    # Read when asked (run time), not when the module was imported.
    monkeypatch.setenv(names.MAX_REJECT_SHARE_ENV, "25%")
    assert reject_share_limit() == pytest.approx(0.25)
    assert reject_share_limit(0.5) == 0.5
    assert reject_share_limit(None, env={names.MAX_REJECT_SHARE_ENV: "0.3"}) == 0.3
    monkeypatch.setenv(names.MAX_REJECT_SHARE_ENV, "lots")
    with pytest.raises(dg.Failure, match=names.MAX_REJECT_SHARE_ENV):
        reject_share_limit()
    with pytest.raises(dg.Failure):
        reject_share_limit(1.5)


def test_reject_share_and_sample() -> None:
    assert RejectSummary(lines=200, rejected=3, by_reason={}).share == pytest.approx(0.015)
    assert RejectSummary(lines=0, rejected=2, by_reason={}).share == 1.0
    assert RejectSummary(lines=0, rejected=0, by_reason={}).share == 0.0
    rows = [
        {"file_name": "a", "line_num": i, "reason": "malformed JSON: x", "raw": "{" * 500}
        for i in range(30)
    ] + [{"file_name": "b", "line_num": 0, "reason": "empty file", "raw": ""}]
    sample = spread_sample(rows, 10)
    assert len(sample) == 10
    assert any(row["reason"] == "empty file" for row in sample), "a rare reason is shown"
    assert all(len(row["raw"]) <= 120 for row in sample)


def test_compare_counts() -> None:
    rows = compare_counts(
        {"item": {"chunks": 3, "embed": 3}, "series": {"chunks": 1, "embed": 1}},
        {"item": {"chunks": 3, "withText": 3}, "person": {"chunks": 1, "withText": 0}},
    )
    assert [(r["type"], r["ok"]) for r in rows] == [
        ("item", True),
        ("person", False),
        ("series", False),
    ]


# --------------------------------------------------------------------------- the real pipeline
@pytest.fixture(scope="module")
def demo_layout(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("quality-demo")
    generate_demo_data(root / "data", records=80, seed=5)
    layout = WorkLayout(root / "work")
    files = scan_inputs(root / "data", layout)
    parse_inputs(root / "data", files, layout)
    chunk_records(files, layout, count_tokens=embedder.count_tokens, max_tokens=embedder.max_tokens)
    return {"root": root, "layout": layout}


def test_suites_pass_on_the_generated_export(demo_layout: dict[str, Any]) -> None:
    layout = demo_layout["layout"]
    records = frames.load_records_frame(layout)
    assert len(records) >= 80
    assert set(records["nodeType"]) == set(RECORD_TYPES)
    assert expectations.validate_parsed_records(records).success
    dates = frames.load_dates_frame(layout)
    assert len(dates) > 0
    assert expectations.validate_dates(dates).success
    table = frames.load_chunks_frame(layout)
    outcome = expectations.validate_chunks(table, frames.chunk_sequences_frame(table), 256)
    assert outcome.success, outcome.failed


def test_checks_invoked_directly(demo_layout: dict[str, Any]) -> None:
    paths = PipelinePaths(
        data_dir=str(demo_layout["root"] / "data"), work_dir=str(demo_layout["root"] / "work")
    )
    for suite in (parsed_records_integrity, parsed_records_dates):
        result = suite(paths)
        assert result.passed, result.description
        assert "expectations" in result.metadata
        assert result.asset_key == dg.AssetKey("record_selection")
    result = chunks_integrity(paths, EmbeddingModel())
    assert result.passed, result.description
    assert int(str(result.metadata["rows_chunks"].value)) > 0


def test_the_suites_run_in_one_step_and_each_can_run_alone(demo_layout: dict[str, Any]) -> None:
    """One step evaluates the three suites (one Great Expectations import, not three); the UI
    can still run one of them alone, and the blocking ones stay blocking."""
    paths = PipelinePaths(
        data_dir=str(demo_layout["root"] / "data"), work_dir=str(demo_layout["root"] / "work")
    )
    specs = {spec.name: spec.blocking for spec in record_selection_suites.check_specs}
    assert specs == {
        names.PARSED_RECORDS_INTEGRITY: True,
        names.PARSED_RECORDS_DATES: False,
        names.CHUNKS_INTEGRITY: True,
    }
    resources = {"paths": paths, "embedding_model": EmbeddingModel()}
    with dg.instance_for_test() as instance:
        whole = dg.materialize(
            [record_selection_suites],
            instance=instance,
            resources=resources,
            selection=dg.AssetSelection.all_asset_checks(),
        )
        evaluated = {e.check_name: e.passed for e in whole.get_asset_check_evaluations()}
        assert evaluated == dict.fromkeys(specs, True)
        dates = dg.AssetCheckKey(dg.AssetKey("record_selection"), names.PARSED_RECORDS_DATES)
        alone = dg.materialize(
            [record_selection_suites],
            instance=instance,
            resources=resources,
            selection=dg.AssetSelection.checks(dates),
        )
        assert [e.check_name for e in alone.get_asset_check_evaluations()] == [dates.name]


def test_missing_parquet_fails_the_check_with_a_hint(tmp_path: Path) -> None:
    paths = PipelinePaths(data_dir=str(tmp_path), work_dir=str(tmp_path / "work"))
    result = parsed_records_integrity(paths)
    assert not result.passed
    assert "materialize record_selection" in (result.description or "")


def test_community_report_check_factory() -> None:
    check = community_report_check(dg.AssetKey("community_reports"))
    [spec] = check.check_specs
    assert spec.name == names.COMMUNITY_REPORTS_COMPLETE
    assert spec.asset_key == dg.AssetKey("community_reports")
    assert spec.blocking
    advisory = community_report_check("community_reports", name="reports_advisory", blocking=False)
    assert not next(iter(advisory.check_specs)).blocking
    assert check not in ALL_CHECKS, "not wired until the community assets are final"
