"""Hostile input never fails a run, never stalls a build and never passes silently (unit level:
the pipeline functions on files made here)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from nara_kg.ingest.inputs import SKIPPED_FILE, scan_input_tree
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.records import BODY_CUT_FROM, DEFAULT_MAX_BODY_CHARS
from nara_kg.ingest.stages.parsed_records import parse_file
from nara_kg.ingest.stages.raw_jsonl import scan_inputs
from nara_kg.ingest.stages.record_selection import ParseResult, select_live_records
from nara_kg.model import edges


def record(na_id: int, **fields: Any) -> str:
    return json.dumps(
        {
            "record": {
                "naId": na_id,
                "recordType": "description",
                "levelOfDescription": "item",
                "title": f"Record {na_id}",
                **fields,
            }
        }
    )


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def parse_all(data: Path, work: Path, **options: Any) -> ParseResult:
    layout = WorkLayout(work)
    files = scan_inputs(data, layout)
    for file in files:
        parse_file(file, layout, **options)
    return select_live_records(data, layout)


def test_unreadable_file_is_a_reject_not_a_failed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    write(data / "good.jsonl", [record(1), record(2)])
    locked = write(data / "locked.jsonl", [record(3)])
    locked.chmod(0)
    real_access = os.access

    # As root every file is readable; what an unprivileged user sees is faked here.
    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        return False if Path(path) == locked else real_access(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)
    result = parse_all(data, tmp_path / "work")
    assert result.records == 2
    assert result.rejected == 1 and result.lines == 3
    assert result.reject_reasons[SKIPPED_FILE] == 1
    rejects = pq.read_table(WorkLayout(tmp_path / "work").rejects).to_pylist()
    assert [(r["file_name"], r["line_num"]) for r in rejects] == [("locked.jsonl", 0)]
    assert "permission denied" in rejects[0]["reason"]


def test_links_broken_or_leading_outside_are_skipped_with_their_reason(tmp_path: Path) -> None:
    data, outside = tmp_path / "data", tmp_path / "elsewhere"
    write(data / "good.jsonl", [record(1)])
    secret = write(outside / "secret.jsonl", [record(666)])
    (data / "outside.jsonl").symlink_to(secret)
    (data / "broken.jsonl").symlink_to(tmp_path / "missing.jsonl")
    (data / "inside.jsonl").symlink_to(data / "good.jsonl")
    tree = scan_input_tree(data)
    assert tree.files == ["good.jsonl", "inside.jsonl"]
    reasons = {skipped.rel_path: skipped.reason for skipped in tree.skipped}
    assert set(reasons) == {"outside.jsonl", "broken.jsonl"}
    assert "outside the data folder" in reasons["outside.jsonl"]
    assert "broken symbolic link" in reasons["broken.jsonl"]
    # Following links outside is a setting, off by default.
    assert "outside.jsonl" in scan_input_tree(data, follow_external_links=True).files
    result = parse_all(data, tmp_path / "work")
    assert result.reject_reasons[SKIPPED_FILE] == 2
    parts = sorted(WorkLayout(tmp_path / "work").parsed_dir.glob("*.records.parquet"))
    loaded = {na_id for part in parts for na_id in pq.read_table(part)["naId"].to_pylist()}
    assert 1 in loaded and 666 not in loaded


def test_huge_body_text_is_cut_recorded_and_bounded(tmp_path: Path) -> None:
    data = tmp_path / "data"
    huge = " ".join(["word"] * 4_200_000)  # about 21 MB of scope note
    write(data / "huge.jsonl", [record(1, scopeAndContentNote=huge), record(2)])
    layout = WorkLayout(tmp_path / "work")
    [file] = scan_inputs(data, layout)
    parsed = parse_file(file, layout)
    assert [entry[0] for entry in parsed.cut] == [1]
    rows = {row["naId"]: row for row in pq.read_table(layout.parsed_part(file.file_id)).to_pylist()}
    assert len(rows[1]["bodyText"]) <= DEFAULT_MAX_BODY_CHARS
    assert json.loads(rows[1]["properties"])[BODY_CUT_FROM] == len(huge)
    assert BODY_CUT_FROM not in json.loads(rows[2]["properties"])
    # A smaller limit re-parses (the limit is part of what a part is computed from).
    again = parse_file(file, layout, max_body_chars=1_000)
    assert again.parsed and again.cut[0][2] == len(huge)


def test_ancestor_cycles_of_any_length_are_broken_deterministically() -> None:
    links = [
        edges.RecordLinks(na_id=1, chunk_count=1, parent_na_id=2),
        edges.RecordLinks(na_id=2, chunk_count=1, parent_na_id=1),
        edges.RecordLinks(na_id=5, chunk_count=1, parent_na_id=7),
        edges.RecordLinks(na_id=6, chunk_count=1, parent_na_id=5),
        edges.RecordLinks(na_id=7, chunk_count=1, parent_na_id=6),
        edges.RecordLinks(na_id=9, chunk_count=1, parent_na_id=5),
    ]
    present = {link.na_id for link in links}
    kept, cycles = edges.break_cycles(edges.parent_links(links, present))
    assert cycles == [[1, 2], [5, 7, 6]]
    assert kept == {2: 1, 6: 5, 7: 6, 9: 5}
    assert edges.ancestor_cycles(kept) == []
    assert edges.includes_edges(links, present) == edges.includes_edges(links[::-1], present)
