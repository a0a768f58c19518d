"""A changed input file re-parses only its changed lines: a line whose bytes are unchanged keeps
the rows its last parse made (renumbered if it moved), and the parts and statistics equal those
of a parse from nothing."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import nara_kg.ingest.stages.parsed_records as parsed_records
from nara_kg.demo import generate_demo_data
from nara_kg.ingest.inputs import InputFile
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.parsed_records import FileParseResult, parse_file
from nara_kg.ingest.stages.raw_jsonl import scan_inputs
from nara_kg.model.tables import Col


def _largest_file(data: Path) -> Path:
    files = [p for p in data.rglob("*.jsonl") if p.parent != data]
    return max(files, key=lambda p: p.stat().st_size)


def _parse(
    data: Path, layout: WorkLayout, target: Path, *, force: bool = False, max_body: int = 500_000
) -> tuple[FileParseResult, InputFile]:
    (file,) = [f for f in scan_inputs(data, layout) if data / f.rel_path == target]
    return parse_file(file, layout, force=force, max_body_chars=max_body), file


def _part(layout: WorkLayout, file: InputFile) -> list[dict[str, Any]]:
    return pq.read_table(layout.parsed_part(file.file_id)).to_pylist()


def _stats(result: FileParseResult) -> dict[str, Any]:
    kept = asdict(result)
    for varying in ("seconds", "lines_reused"):
        kept.pop(varying)
    return kept


@pytest.fixture
def export(tmp_path: Path) -> tuple[Path, WorkLayout, Path]:
    data = tmp_path / "data"
    generate_demo_data(data, records=200, seed=3)
    layout = WorkLayout(tmp_path / "work")
    return data, layout, _largest_file(data)


def _calls_to_parse_line(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = parsed_records.parse_line

    def counting(line: bytes, file_name: str, line_num: int) -> Any:
        calls.append(line_num)
        return real(line, file_name, line_num)

    monkeypatch.setattr(parsed_records, "parse_line", counting)
    return calls


def test_an_edited_and_a_moved_line_parse_alone_and_the_part_equals_a_fresh_parse(
    export: tuple[Path, WorkLayout, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    data, layout, target = export
    first, _ = _parse(data, layout, target)
    assert first.parsed and first.lines_reused == 0

    lines = target.read_text(encoding="utf-8").splitlines()
    payload = json.loads(lines[3])
    payload["record"]["scopeAndContentNote"] = "Re-examined by the parse reuse test."
    lines[3] = json.dumps(payload, ensure_ascii=False)
    # A new line on top moves every other line down by one.
    extra = json.loads(lines[0])
    extra["record"]["naId"] = 999_000_001
    target.write_text(
        "\n".join([json.dumps(extra, ensure_ascii=False), *lines]) + "\n", encoding="utf-8"
    )

    calls = _calls_to_parse_line(monkeypatch)
    second, file = _parse(data, layout, target)
    assert second.parsed
    assert sorted(calls) == [1, 5]  # the new line and the edited one (line 4 + 1)
    assert second.lines_reused == len(lines) - 1
    reused_part = _part(layout, file)

    fresh, _ = _parse(data, layout, target, force=True)
    assert fresh.lines_reused == 0
    assert _part(layout, file) == reused_part
    assert _stats(second) == _stats(fresh)
    edited = [row for row in reused_part if row[Col.NA_ID] == payload["record"]["naId"]]
    assert edited and edited[0][Col.LINE_NUM] == 5
    assert "Re-examined" in str(edited[0][Col.BODY_TEXT])


def test_a_cut_body_is_reused_with_its_cut_and_a_new_limit_parses_everything(
    export: tuple[Path, WorkLayout, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    data, layout, target = export
    first, _ = _parse(data, layout, target, max_body=120)
    assert first.cut  # the small limit cuts some bodies

    lines = target.read_text(encoding="utf-8").splitlines()
    cut_line = first.cut[0][1]
    other = next(i for i in range(len(lines)) if i + 1 != cut_line)
    payload = json.loads(lines[other])
    payload["record"]["title"] = f"{payload['record'].get('title', '')} (retitled)"
    lines[other] = json.dumps(payload, ensure_ascii=False)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")

    calls = _calls_to_parse_line(monkeypatch)
    second, file = _parse(data, layout, target, max_body=120)
    assert calls == [other + 1]
    assert second.cut == first.cut
    reused_part = _part(layout, file)
    fresh, _ = _parse(data, layout, target, force=True, max_body=120)
    assert _part(layout, file) == reused_part and _stats(second) == _stats(fresh)

    calls.clear()
    target.write_text("\n".join(lines) + "\n\n", encoding="utf-8")  # changed bytes, same lines
    _parse(data, layout, target, max_body=200)
    assert len(calls) == len(lines)  # another body limit: every line is parsed again


def test_a_file_parsed_before_line_digests_existed_is_parsed_whole_once(
    export: tuple[Path, WorkLayout, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    data, layout, target = export
    _, file = _parse(data, layout, target)
    layout.line_digests(file.file_id).unlink()
    with target.open("a", encoding="utf-8") as handle:
        handle.write("\n")
    calls = _calls_to_parse_line(monkeypatch)
    second, _ = _parse(data, layout, target)
    assert second.lines_reused == 0 and len(calls) == second.lines > 0
    assert layout.line_digests(file.file_id).exists()


@pytest.mark.parametrize("old_version", [None, 1])
def test_parts_of_an_older_parser_are_parsed_again_unchanged_file_or_not(
    export: tuple[Path, WorkLayout, Path],
    monkeypatch: pytest.MonkeyPatch,
    old_version: int | None,
) -> None:
    data, layout, target = export
    first, file = _parse(data, layout, target)
    assert first.parser_version == parsed_records.PARSER_VERSION
    stats_path = layout.parse_stats(file.file_id)
    stored = json.loads(stats_path.read_text(encoding="utf-8"))
    if old_version is None:  # written before parsers had a version
        stored.pop("parser_version")
    else:
        stored["parser_version"] = old_version
    stats_path.write_text(json.dumps(stored), encoding="utf-8")

    calls = _calls_to_parse_line(monkeypatch)
    second, _ = _parse(data, layout, target)  # same bytes: only the parser differs
    assert second.parsed and second.lines_reused == 0 and len(calls) == second.lines > 0
    calls.clear()
    third, _ = _parse(data, layout, target)
    assert not third.parsed and calls == []
