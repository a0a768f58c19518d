"""Input just past the first round's guarantees: each a line or a file that once failed a
whole build (or passed silently), now a reject or a bounded, logged repair (unit level: the
pipeline functions on files made here)."""

from __future__ import annotations

import json
import logging
import os
import zipfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from nara_kg.embedding.encoder import Embedder
from nara_kg.embedding.standin import StandinEmbedder
from nara_kg.ingest.inputs import SKIPPED_FILE, scan_input_tree
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.records import DEFAULT_MAX_BODY_CHARS
from nara_kg.ingest.stages import raw_jsonl
from nara_kg.ingest.stages.chunk_embeddings import encode_pending, plan_file, write_vectors
from nara_kg.ingest.stages.chunks import chunk_file, chunk_records, iter_chunks
from nara_kg.ingest.stages.common import CorruptWorkFile
from nara_kg.ingest.stages.file_run import PARSED_RECORDS, RAW_JSONL, run_file_stages
from nara_kg.ingest.stages.parsed_records import parse_file
from nara_kg.ingest.stages.raw_jsonl import scan_inputs
from nara_kg.ingest.stages.record_selection import chosen_rows_by_file, parse_inputs
from nara_kg.model.tables import Col
from tests.reliability.test_input_faults import parse_all, record, write
from tests.stage_helpers import chunked_layout


def _chunk_rows(data: Path, work: Path, embedder: Any) -> dict[int, list[dict[str, Any]]]:
    """naId -> its chunk rows, after scanning, parsing and chunking `data` into `work`."""
    layout = WorkLayout(work)
    layout.ensure()
    files = scan_inputs(data, layout)
    parse_inputs(data, files, layout)
    chunk_records(
        files,
        layout,
        count_tokens=embedder.count_tokens,
        count_tokens_many=embedder.count_tokens_many,
        max_tokens=embedder.max_tokens,
        chunker_key=embedder.key,
    )
    rows: dict[int, list[dict[str, Any]]] = {}
    for part in sorted(layout.chunks_dir.glob("*.chunks.parquet")):
        for row in pq.read_table(part).to_pylist():
            rows.setdefault(row[Col.NA_ID], []).append(row)
    return rows


def test_a_header_past_the_token_budget_is_clipped_and_the_file_still_chunks(
    tmp_path: Path,
) -> None:
    embedder = Embedder()  # the real model's tokenizer: "!" and "?" are a token each
    parent = {"naId": 9940000, "distance": 1, "levelOfDescription": "series", "title": "?" * 200}
    long_header = record(
        9940001,
        title="U.S.-" + "!" * 250,
        ancestors=[parent],
        scopeAndContentNote="A scope note long enough to need a chunk of its own. " * 30,
    )
    title_only = record(9940002, title="U.S.-" + "!" * 250, ancestors=[parent])
    others = [record(1, scopeAndContentNote="Flood control on the river. " * 40), record(2)]
    write(tmp_path / "clean" / "a.jsonl", others)
    write(tmp_path / "hostile" / "a.jsonl", [others[0], long_header, title_only, others[1]])
    clean = _chunk_rows(tmp_path / "clean", tmp_path / "clean-work", embedder)
    hostile = _chunk_rows(tmp_path / "hostile", tmp_path / "hostile-work", embedder)

    budget = embedder.max_tokens
    for na_id in (9940001, 9940002):
        rows = hostile[na_id]
        assert all(embedder.count_tokens(row[Col.TEXT]) <= budget for row in rows)
        assert all(row[Col.TEXT].startswith("Title: U.S.-!!!") for row in rows)
    # Every chunk keeps at least half the window for its text.
    body = [row for row in hostile[9940001] if "\n\n" in row[Col.TEXT]]
    head = body[0][Col.TEXT].split("\n\n")[0]
    assert embedder.count_tokens(head + "\n\n") <= budget // 2
    assert "".join(row[Col.TEXT].split("\n\n", 1)[1] for row in body).replace(" ", "") == (
        "A scope note long enough to need a chunk of its own. " * 30
    ).replace(" ", "")
    # The other records' chunks are what they are without the hostile lines.
    for na_id in (1, 2):
        assert [row[Col.TEXT] for row in hostile[na_id]] == [r[Col.TEXT] for r in clean[na_id]]
    assert json.loads(hostile[9940001][0][Col.PROPS])["naId"] == 9940001


def _loaded(work: Path) -> set[int]:
    layout = WorkLayout(work)
    chosen = {(file_id, row) for file_id, rows in chosen_rows_by_file(layout) for row in rows}
    found = set()
    for file_id, row in chosen:
        table = pq.read_table(layout.parsed_part(file_id), columns=[Col.NA_ID])
        found.add(table[Col.NA_ID][row].as_py())
    return found


def test_a_symlink_loop_is_a_file_level_reject(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write(data / "good.jsonl", [record(1), record(2)])
    (data / "loop_a.jsonl").symlink_to("loop_b.jsonl")
    (data / "loop_b.jsonl").symlink_to("loop_a.jsonl")
    tree = scan_input_tree(data)
    assert tree.files == ["good.jsonl"]
    assert {(s.rel_path, s.detail) for s in tree.skipped} == {
        ("loop_a.jsonl", "symbolic link loop"),
        ("loop_b.jsonl", "symbolic link loop"),
    }
    result = parse_all(data, tmp_path / "work")
    assert result.records == 2 and result.reject_reasons[SKIPPED_FILE] == 2
    rejects = pq.read_table(WorkLayout(tmp_path / "work").rejects).to_pylist()
    assert sorted((r["file_name"], r["line_num"]) for r in rejects) == [
        ("loop_a.jsonl", 0),
        ("loop_b.jsonl", 0),
    ]


def test_a_file_replaced_by_a_fifo_is_a_reject_that_keeps_its_last_parse(tmp_path: Path) -> None:
    data, work = tmp_path / "data", tmp_path / "work"
    write(data / "a.jsonl", [record(1), record(2)])
    replaced = write(data / "b.jsonl", [record(3)])
    first = parse_all(data, work)
    assert first.records == 3 and _loaded(work) == {1, 2, 3}

    replaced.unlink()
    os.mkfifo(replaced)  # reading it would block the build for ever
    again = parse_all(data, work)
    assert again.reject_reasons[SKIPPED_FILE] == 1
    assert again.files_pending == [] and again.parts_removed == 0
    assert _loaded(work) == {1, 2, 3}
    rejects = pq.read_table(WorkLayout(work).rejects).to_pylist()
    assert [(r["file_name"], r["line_num"], r["reason"]) for r in rejects] == [
        ("b.jsonl", 0, f"{SKIPPED_FILE}: not a regular file: a FIFO")
    ]


def test_a_file_that_vanishes_between_listing_and_hashing_is_skipped_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    data, work = tmp_path / "data", tmp_path / "work"
    write(data / "a.jsonl", [record(1)])
    # The listing saw gone.jsonl; it was deleted before it was hashed.
    monkeypatch.setattr(raw_jsonl, "list_input_paths", lambda *_, **__: ["a.jsonl", "gone.jsonl"])
    assert [file.rel_path for file in raw_jsonl.scan_inputs(data, WorkLayout(work))] == ["a.jsonl"]
    # The file stages of a build: the file is skipped with a warning, the others go on.
    caplog.set_level(logging.WARNING, logger="test")
    outcome = run_file_stages(
        ["gone.jsonl", "a.jsonl"],
        data_dir=data,
        layout=WorkLayout(work),
        embedder=StandinEmbedder(),
        max_body_chars=DEFAULT_MAX_BODY_CHARS,
        stages=[RAW_JSONL, PARSED_RECORDS],
        log=logging.getLogger("test"),
    )
    assert outcome.failed == {}
    [gone] = outcome.vanished
    assert gone["file"] == "gone.jsonl" and "does not exist" in gone["reason"]
    assert any(m.startswith("gone.jsonl: skipped file") for m in caplog.messages)
    [kept] = outcome.done
    assert kept.rel_path == "a.jsonl" and kept.error is None and kept.vanished is None
    assert kept.reported[PARSED_RECORDS]["records"] == 1


def _zip_with_an_altered_member(path: Path, *, cut_directory: bool) -> None:
    """members a.jsonl (records 1, 2, 3) and b.jsonl (4): in a.jsonl, naId 2 is turned into
    7 after the CRC was taken (stored, so the bytes are there to alter)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        # Lines longer than the reader's buffer, so that lines are read before the member's end.
        note = "Correspondence about flood control. " * 1_000
        lines = [record(na_id, scopeAndContentNote=note) for na_id in (1, 2, 3)]
        archive.writestr("a.jsonl", "\n".join(lines) + "\n")
        archive.writestr("b.jsonl", record(4) + "\n")
    raw = bytearray(path.read_bytes())
    at = raw.index(b'"naId": 2')
    raw[at + len('"naId": ')] = ord("7")
    if cut_directory:  # a cut-short archive: members read from their local headers
        raw = raw[: raw.index(b"PK\x01\x02")]
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("cut_directory", [False, True], ids=["whole", "cut-short"])
def test_a_zip_member_failing_its_crc_is_rejected_whole(
    tmp_path: Path, cut_directory: bool
) -> None:
    data, work = tmp_path / "data", tmp_path / "work"
    _zip_with_an_altered_member(data / "export.zip", cut_directory=cut_directory)
    result = parse_all(data, work)
    # Nothing of the altered member loads (not its altered line, not the lines before it);
    # the intact member does.
    assert _loaded(work) == {4}
    rejects = pq.read_table(WorkLayout(work).rejects).to_pylist()
    crc = [r for r in rejects if r["file_name"] == "export.zip!a.jsonl"]
    assert len(crc) == 1 and "CRC" in crc[0]["reason"] and crc[0]["line_num"] == 0
    assert result.records == 1


def test_duplicate_lines_are_dropped_before_chunking_and_logged_in_a_few_lines(
    tmp_path: Path,
) -> None:
    copies = 50_000
    repeated = record(2, scopeAndContentNote="Minutes of the flood control board. " * 40)
    write(tmp_path / "clean" / "a.jsonl", [record(1), repeated, record(3)])
    # The same line 50,000 times, and one naId in 300 copies that differ (other titles).
    variants = [record(9, title=f"Variant {i}") for i in range(300)]
    write(
        tmp_path / "hostile" / "a.jsonl",
        [record(1), *([repeated] * copies), record(3), *variants],
    )
    embedder = StandinEmbedder()
    layouts: dict[str, WorkLayout] = {}
    logged: list[str] = []
    for name in ("clean", "hostile"):
        layout = layouts[name] = WorkLayout(tmp_path / f"{name}-work")
        layout.ensure()
        files = scan_inputs(tmp_path / name, layout)
        parsed = parse_inputs(tmp_path / name, files, layout, log=logged.append)
        chunk_records(
            files,
            layout,
            count_tokens=embedder.count_tokens,
            max_tokens=embedder.max_tokens,
            chunker_key=embedder.key,
        )
    [part] = layouts["hostile"].chunks_dir.glob("*.chunks.parquet")
    chunk_ids = pq.read_table(part, columns=[Col.NA_ID])[Col.NA_ID].to_pylist()
    # One copy of the repeated line is parsed and chunked, not 50,000.
    assert chunk_ids.count(2) == len(
        [
            n
            for n in pq.read_table(next(layouts["clean"].chunks_dir.glob("*.chunks.parquet")))[
                Col.NA_ID
            ].to_pylist()
            if n == 2
        ]
    )
    stats = json.loads(next(layouts["hostile"].parsed_dir.glob("*.stats.json")).read_text())
    assert stats["duplicate_lines"] == copies - 1
    assert stats["lines"] == copies + 302 and stats["records"] == 303

    # The chosen records' chunks are those of the clean file (naId 9 aside; a line number
    # moved by the copies before it aside).
    def chunks_of(layout: WorkLayout) -> dict[int, list[tuple[str, dict[str, Any]]]]:
        found: dict[int, list[tuple[str, dict[str, Any]]]] = {}
        for row in iter_chunks(layout, [Col.NA_ID, Col.TEXT, Col.PROPS]):
            props = {k: v for k, v in json.loads(row[Col.PROPS]).items() if k != "line_num"}
            found.setdefault(row[Col.NA_ID], []).append((row[Col.TEXT], props))
        return found

    chosen = chunks_of(layouts["hostile"])
    assert chosen.pop(9) and chosen == chunks_of(layouts["clean"])
    # Log lines stay short: the first few dropped copies, then a count.
    assert max(len(line) for line in logged) < 1_000
    assert any("naId 9 appears 300 times" in line and "and 294 more" in line for line in logged)
    assert any(f"{copies - 1:,} lines repeat an earlier line" in line for line in logged)
    assert parsed.duplicates[0]["dropped_count"] == 299


def _flip_a_byte_in_the_data(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 3] ^= 0xFF  # inside the data pages, far from the footer
    path.write_bytes(bytes(raw))


def test_a_damaged_derived_file_is_found_by_name_and_derived_again(tmp_path: Path) -> None:
    data = tmp_path / "data"
    note = "Reports of the flood control board on the levees of the river. " * 30
    write(data / "a.jsonl", [record(n, scopeAndContentNote=f"{n} {note}") for n in range(1, 60)])
    layout = chunked_layout(data, tmp_path / "work")
    [file] = scan_inputs(data, layout)
    embedder = StandinEmbedder()
    plan = plan_file(file, layout, embedder.key)
    encode_pending([plan], embedder)
    write_vectors(plan, embedder.dimension)
    columns = [Col.CHUNK_ID, Col.TEXT, Col.PROPS]
    parsed = pq.read_table(layout.parsed_part(file.file_id))
    chunks = list(iter_chunks(layout, columns))

    # A truncated parsed part: parsed again, to the same rows.
    part = layout.parsed_part(file.file_id)
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    again = parse_file(file, layout)
    assert again.parsed
    assert pq.read_table(part).equals(parsed)

    # A vectors part of random bytes: its vectors are encoded again.
    layout.vector_part(file.file_id).write_bytes(os.urandom(4_096))
    plan = plan_file(file, layout, embedder.key)
    assert not plan.current and len(plan.todo) == plan.result.chunks > 0

    # A flipped byte in a chunks part: the read names the file (no wrong text is passed on),
    # and the next build's chunks stage derives the part again.
    _flip_a_byte_in_the_data(layout.chunk_part(file.file_id))
    with pytest.raises(CorruptWorkFile, match=str(layout.chunk_part(file.file_id))) as raised:
        list(iter_chunks(layout, columns))
    assert "--full" in str(raised.value)
    _, computed = chunk_file(
        file,
        layout,
        count_tokens=embedder.count_tokens,
        max_tokens=embedder.max_tokens,
        chunker_key=embedder.key,
    )
    assert computed
    assert list(iter_chunks(layout, columns)) == chunks


def test_a_flipped_byte_in_a_parsed_part_is_named_and_the_file_parsed_again(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    note = "Reports of the flood control board on the levees of the river. " * 30
    write(data / "a.jsonl", [record(n, scopeAndContentNote=f"{n} {note}") for n in range(1, 60)])
    layout = WorkLayout(tmp_path / "work")
    layout.ensure()
    files = scan_inputs(data, layout)
    parse_inputs(data, files, layout)
    part = layout.parsed_part(files[0].file_id)
    parsed = pq.read_table(part)

    # A byte inside the body texts' compressed dictionary page (the data page after it holds
    # indices and a header with statistics no read uses): the footer still reads, so the parse
    # stage skips on it, and only the page's checksum can tell.
    body = pq.ParquetFile(part).metadata.row_group(0)
    [column] = [
        body.column(i)
        for i in range(body.num_columns)
        if body.column(i).path_in_schema == Col.BODY_TEXT
    ]
    raw = bytearray(part.read_bytes())
    assert column.has_dictionary_page
    raw[(column.dictionary_page_offset + column.data_page_offset) // 2] ^= 0xFF
    part.write_bytes(bytes(raw))
    # Whichever stage reads the damaged pages first names the part.
    with pytest.raises(CorruptWorkFile, match=str(part)) as raised:
        parse_inputs(data, files, layout)
        embedder = StandinEmbedder()
        chunk_file(
            files[0],
            layout,
            count_tokens=embedder.count_tokens,
            max_tokens=embedder.max_tokens,
            chunker_key=embedder.key,
        )
    assert "--full" in str(raised.value)
    again = parse_inputs(data, files, layout)  # the next build parses the file again
    assert again.files_parsed == 1
    assert pq.read_table(part).equals(parsed)


def test_a_repeated_bad_line_is_rejected_each_time_not_dropped_as_a_duplicate(
    tmp_path: Path,
) -> None:
    """The reject share counts every bad line: repeats of a rejected line are not duplicates
    of a record, on a first parse and on a reparse that reuses unchanged lines."""
    data = tmp_path / "data"
    write(data / "a.jsonl", [record(1), record(2)])
    with (data / "a.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("{not json\n" * 5)
    layout = WorkLayout(tmp_path / "work")
    layout.ensure()
    [first] = parse_inputs(data, scan_inputs(data, layout), layout).per_file
    assert (first[Col.RECORDS], first[Col.REJECTED]) == (2, 5)

    with (data / "a.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("{not json\n")
    [again] = parse_inputs(data, scan_inputs(data, layout), layout).per_file
    assert (again[Col.RECORDS], again[Col.REJECTED]) == (2, 6)
