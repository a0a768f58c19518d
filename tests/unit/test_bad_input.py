"""Bad input through the real pipeline functions (scan_inputs -> parse_inputs): the run never
crashes, each bad line lands in the rejects Parquet with file, line, reason and raw text, the good
lines of the same file are loaded, and the counts add up. Then the reject-share check on top."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow.parquet as pq
import pytest

from graph_assets.common import plain_metadata
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.parsing.results import reject_category
from nara_kg.ingest.stages.raw_jsonl import scan_inputs
from nara_kg.ingest.stages.record_selection import parse_inputs
from quality import names
from quality.checks import parsed_records_reject_share
from quality.config import RejectShareConfig
from quality.rejects import reject_summary
from resources import PipelinePaths


def good(na_id: int, title: str = "A good record") -> str:
    record = {
        "naId": na_id,
        "recordType": "description",
        "levelOfDescription": "item",
        "title": f"{title} {na_id}",
    }
    return json.dumps({"record": record})


def bad_record(**fields: Any) -> str:
    return json.dumps({"record": fields})


def run(data_dir: Path, work_dir: Path) -> dict[str, Any]:
    layout = WorkLayout(work_dir)
    files = scan_inputs(data_dir, layout)
    result = parse_inputs(data_dir, files, layout)
    rejects = pq.read_table(layout.rejects).to_pylist()
    records = []
    for file in files:
        records.extend(pq.read_table(layout.parsed_part(file.file_id)).to_pylist())
    full = [r for r in records if not r["isStub"]]
    return {"result": result, "rejects": rejects, "records": full, "layout": layout}


def write(path: Path, lines: Sequence[str | bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        b"".join((line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines)
    )
    return path


def loaded(outcome: dict[str, Any], file_name: str) -> list[tuple[int, int]]:
    """(line, naId) of the records loaded from one file."""
    return sorted(
        (r["line_num"], r["naId"]) for r in outcome["records"] if r["file_name"] == file_name
    )


# One bad line between good lines, per case: (line, expected reason category).
BAD_LINES: dict[str, tuple[str | bytes, str]] = {
    "malformed_json": ('{"record": {"naId": 10, "title": "cut', "malformed JSON"),
    "no_record": ('{"naId_of_nothing": 5, "title": "no wrapper"}', "no record object"),
    "record_not_object": ('{"record": [1, 2, 3]}', "no record object"),
    "not_an_object": ("[1, 2, 3]", "no record object"),
    "missing_naid": (
        bad_record(recordType="description", levelOfDescription="item", title="no id"),
        "missing naId",
    ),
    "unknown_level": (bad_record(naId=11, levelOfDescription="widget"), "unknown type"),
    "unknown_authority": (
        bad_record(naId=12, recordType="authority", authorityType="alien"),
        "unknown type",
    ),
    "unknown_record_type": (bad_record(naId=13, recordType="gadget"), "unknown type"),
    "naid_as_text": (bad_record(naId="abc", levelOfDescription="item"), "wrong type"),
    "title_as_number": (bad_record(naId=14, levelOfDescription="item", title=5), "wrong type"),
    "ancestors_as_text": (
        bad_record(naId=15, levelOfDescription="item", ancestors="rg 210"),
        "wrong type",
    ),
    "invalid_utf8": (b'{"record": {"naId": 16, "title": "caf\xe9 \xff"}}', "invalid UTF-8"),
}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_bad_line_is_rejected_and_good_lines_load(case: str, tmp_path: Path) -> None:
    line, category = BAD_LINES[case]
    write(tmp_path / "data" / "mixed.jsonl", [good(1), line, good(2), "", good(3)])
    outcome = run(tmp_path / "data", tmp_path / "work")

    result = outcome["result"]
    assert result.files_parsed == 1
    assert result.lines == 4  # the blank line is not a line of data
    assert result.records == 3
    assert result.rejected == 1
    assert dict(result.reject_reasons) == {category: 1}
    assert result.reject_share == pytest.approx(0.25)

    assert loaded(outcome, "mixed.jsonl") == [(1, 1), (3, 2), (5, 3)]
    [reject] = outcome["rejects"]
    assert reject["file_name"] == "mixed.jsonl"
    assert reject["line_num"] == 2
    assert reject_category(reject["reason"]) == category
    assert reject["reason"].startswith(category)
    raw = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
    assert reject["raw"] == raw


def test_invalid_utf8_keeps_the_readable_part_of_the_raw_text(tmp_path: Path) -> None:
    line, _ = BAD_LINES["invalid_utf8"]
    write(tmp_path / "data" / "latin1.jsonl", [line])
    [reject] = run(tmp_path / "data", tmp_path / "work")["rejects"]
    assert "caf\ufffd" in reject["raw"]
    assert "byte" in reject["reason"]


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "empty.jsonl").write_bytes(b"")
    write(tmp_path / "data" / "blank-lines.jsonl", ["", "   ", ""])
    write(tmp_path / "data" / "ok.jsonl", [good(1)])
    outcome = run(tmp_path / "data", tmp_path / "work")
    result = outcome["result"]
    assert result.records == 1
    assert result.rejected == 2
    assert result.lines == 1  # an empty file has no line to count
    assert dict(result.reject_reasons) == {"empty file": 2}
    assert sorted((r["file_name"], r["line_num"], r["reason"]) for r in outcome["rejects"]) == [
        ("blank-lines.jsonl", 0, "empty file"),
        ("empty.jsonl", 0, "empty file"),
    ]
    assert loaded(outcome, "ok.jsonl") == [(1, 1)]


def test_truncated_gzip(tmp_path: Path) -> None:
    """Lines before the cut load; the cut itself is one reject on the first line it damaged."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb") as stream:
        for na_id in (1, 2, 3):
            stream.write(good(na_id).encode() + b"\n")
        stream.write(b'{"record": broken}\n')
        stream.flush()  # a sync point: everything so far can be decompressed without the rest
        cut = buffer.tell()
        for na_id in range(4, 40):
            stream.write(good(na_id, "A record lost to the truncation").encode() + b"\n")
    data = tmp_path / "data"
    data.mkdir()
    (data / "part.jsonl.gz").write_bytes(buffer.getvalue()[: cut + 8])
    write(data / "other.jsonl", [good(100)])

    outcome = run(data, tmp_path / "work")
    result = outcome["result"]
    assert loaded(outcome, "part.jsonl.gz") == [(1, 1), (2, 2), (3, 3)]
    assert loaded(outcome, "other.jsonl") == [(1, 100)]
    rejects = sorted((r["line_num"], reject_category(r["reason"])) for r in outcome["rejects"])
    assert rejects == [(4, "malformed JSON"), (5, "truncated gzip stream")]
    assert all(r["file_name"] == "part.jsonl.gz" for r in outcome["rejects"])
    assert result.records == 4
    assert result.rejected == 2
    assert result.lines == 6
    assert dict(result.reject_reasons) == {"malformed JSON": 1, "truncated gzip stream": 1}


def zip_bytes(members: dict[str, list[str]], method: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as archive:
        for name, lines in members.items():
            archive.writestr(name, "".join(line + "\n" for line in lines))
    return buffer.getvalue()


def test_truncated_zip(tmp_path: Path) -> None:
    """No central directory: whole members and the whole lines of the cut member are salvaged."""
    first = [good(1), good(2), "not json at all"]
    second = [good(na_id, "A record in the member that is cut") for na_id in range(10, 20)]
    payload = zip_bytes({"a/first.jsonl": first, "a/second.jsonl": second}, zipfile.ZIP_STORED)
    # Cut in the middle of the fifth line of the second member.
    start = payload.index(good(10, "A record in the member that is cut").encode())
    cut = start + sum(len(line) + 1 for line in second[:4]) + 20
    data = tmp_path / "data"
    data.mkdir()
    (data / "export.zip").write_bytes(payload[:cut])

    outcome = run(data, tmp_path / "work")
    result = outcome["result"]
    assert loaded(outcome, "export.zip!a/first.jsonl") == [(1, 1), (2, 2)]
    assert loaded(outcome, "export.zip!a/second.jsonl") == [(1, 10), (2, 11), (3, 12), (4, 13)]
    rejects = sorted(
        (r["file_name"], r["line_num"], reject_category(r["reason"])) for r in outcome["rejects"]
    )
    assert rejects == [
        ("export.zip!a/first.jsonl", 3, "malformed JSON"),
        ("export.zip!a/second.jsonl", 5, "truncated zip archive"),
    ]
    assert result.records == 6
    assert result.rejected == 2
    assert dict(result.reject_reasons) == {"malformed JSON": 1, "truncated zip archive": 1}


def test_truncated_deflated_zip_does_not_crash(tmp_path: Path) -> None:
    lines = [good(na_id, "Deflated record " * 5) for na_id in range(1, 200)]
    payload = zip_bytes({"records.jsonl": lines}, zipfile.ZIP_DEFLATED)
    data = tmp_path / "data"
    data.mkdir()
    (data / "export.zip").write_bytes(payload[: len(payload) // 2])
    outcome = run(data, tmp_path / "work")
    result = outcome["result"]
    reasons = Counter(reject_category(r["reason"]) for r in outcome["rejects"])
    assert reasons == {"truncated zip archive": 1}
    assert result.records == len(outcome["records"])
    # Whatever was salvaged is a prefix of the member, line for line.
    assert loaded(outcome, "export.zip!records.jsonl") == [
        (n, n) for n in range(1, result.records + 1)
    ]


def test_every_case_in_one_export(tmp_path: Path) -> None:
    """All the bad lines in one file, next to an empty file and good files: counts add up."""
    data = tmp_path / "data"
    bad_lines = [line for line, _ in BAD_LINES.values()]
    write(data / "bad.jsonl", [good(1), *bad_lines, good(2)])
    (data / "empty.jsonl").write_bytes(b"")
    write(data / "good.jsonl", [good(n) for n in range(100, 110)])
    outcome = run(data, tmp_path / "work")
    result = outcome["result"]
    assert result.records == 12
    assert result.rejected == len(BAD_LINES) + 1
    assert result.lines == 12 + len(BAD_LINES)
    expected = Counter(category for _, category in BAD_LINES.values())
    expected["empty file"] += 1
    assert dict(result.reject_reasons) == dict(expected)
    # The rejects table has one row per reject, each naming its file and line.
    assert len(outcome["rejects"]) == result.rejected
    bad_rows = [r for r in outcome["rejects"] if r["file_name"] == "bad.jsonl"]
    assert sorted(r["line_num"] for r in bad_rows) == list(range(2, 2 + len(BAD_LINES)))
    assert all(r["reason"] and r["raw"] for r in bad_rows)

    summary = reject_summary(outcome["layout"])
    assert summary.rejected == result.rejected
    assert summary.lines == result.lines
    assert summary.by_reason == dict(sorted(expected.items()))
    assert len(summary.sample) == 10
    assert len({row["reason"].split(":")[0] for row in summary.sample}) >= 6


# --------------------------------------------------------------------------- the check
def invoke(paths: PipelinePaths, max_reject_share: float | None = None) -> dg.AssetCheckResult:
    with dg.instance_for_test() as instance:
        context = dg.build_asset_check_context(resources={"paths": paths}, instance=instance)
        config = RejectShareConfig(max_reject_share=max_reject_share)
        result = parsed_records_reject_share(context, config)
    assert isinstance(result, dg.AssetCheckResult)
    return result


@pytest.fixture
def two_percent_bad(tmp_path: Path) -> PipelinePaths:
    """98 good lines and 2 bad ones: a 2% reject share."""
    data = tmp_path / "data"
    write(data / "records.jsonl", [good(n) for n in range(1, 99)] + ["{oops", "[]"])
    run(data, tmp_path / "work")
    return PipelinePaths(data_dir=str(data), work_dir=str(tmp_path / "work"))


def test_reject_share_check_fails_over_the_default_threshold(
    two_percent_bad: PipelinePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(names.MAX_REJECT_SHARE_ENV, raising=False)
    result = invoke(two_percent_bad)
    assert not result.passed
    assert result.severity == dg.AssetCheckSeverity.ERROR
    metadata = plain_metadata(result.metadata)
    assert metadata["lines"] == 100
    assert metadata["lines_rejected"] == 2
    assert metadata["reject_share"] == pytest.approx(0.02)
    assert metadata["max_reject_share"] == pytest.approx(0.01)
    reasons = {row["reason"]: row["count"] for row in metadata["rejects_by_reason"]}
    assert reasons["malformed JSON"] == 1 and reasons["no record object"] == 1
    sample = json.dumps(metadata["reject_sample"])
    assert "records.jsonl" in sample and "{oops" in sample
    assert metadata["rejects_path"].endswith("rejects.parquet")


def test_reject_share_threshold_from_the_environment_at_run_time(
    two_percent_bad: PipelinePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(names.MAX_REJECT_SHARE_ENV, "5%")
    assert invoke(two_percent_bad).passed
    monkeypatch.setenv(names.MAX_REJECT_SHARE_ENV, "0.019")
    assert not invoke(two_percent_bad).passed
    # Set in the check's run config, the value wins over the environment.
    assert invoke(two_percent_bad, max_reject_share=0.02).passed


def test_reject_share_check_passes_on_clean_input(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write(data / "records.jsonl", [good(n) for n in range(1, 5)])
    run(data, tmp_path / "work")
    paths = PipelinePaths(data_dir=str(data), work_dir=str(tmp_path / "work"))
    result = invoke(paths, max_reject_share=0.0)
    assert result.passed
    assert result.metadata["lines_rejected"].value == 0
